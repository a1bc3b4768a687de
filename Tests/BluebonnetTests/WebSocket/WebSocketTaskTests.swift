import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `WebSocketTask`: the socket with `async`/`await`.
final class WebSocketTaskTests: WebSocketTestCase {
    func testMessagesArriveAsASequenceThatEndsWithTheSocket() async throws {
        let task = session.webSocketRequest(to: server.url("/messages?count=3")).webSocketTask()
        var texts: [String] = []
        for await message in task.streamingMessages() { texts.append(message.text ?? "") }
        XCTAssertEqual(texts, ["message 0", "message 1", "message 2"])
    }

    /// Issue 45 (7): a message sent with the async API before the loop over the events begins. The stream started on
    /// the first iteration, so nothing opened the socket and the `send` never returned.
    func testASendBeforeTheEventsAreReadCompletesOnceTheSocketOpens() async throws {
        let task = session.webSocketRequest(to: server.url("/echo")).webSocketTask()
        let events = task.streamingMessageEvents()
        // The expectation's 30 s are a hang guard only: before the fix the send never returned.
        let sent = expectation(description: "the send returned")
        Task {
            try await task.send(.string("early"))
            sent.fulfill()
        }
        await fulfillment(of: [sent], timeout: 30)
        var connected = false
        var received: [String] = []
        for await event in events {
            switch event.kind {
            case .connected:
                connected = true
            case let .receivedMessage(message):
                received.append(message.text ?? "")
                task.close(sending: .normalClosure)
            default:
                break
            }
        }
        XCTAssertTrue(connected, "the connection event waited for the loop")
        XCTAssertEqual(received, ["early"])
    }

    func testDecodableValues() async throws {
        struct Greeting: Decodable, Sendable { let hello: String }
        let request = session.webSocketRequest(to: server.url("/echo"))
        let task = request.webSocketTask()
        request.send(.string(#"{"hello":"one"}"#), queue: .global()) { _ in }
        request.send(.string("not json"), queue: .global()) { _ in }
        request.send(.string(#"{"hello":"two"}"#), queue: .global()) { _ in }
        var values: [String] = []
        for await greeting in task.streamingDecodable(Greeting.self) {
            values.append(greeting.hello)
            if values.count == 2 { task.close(sending: .normalClosure) }
        }
        XCTAssertEqual(values, ["one", "two"])
    }

    func testLeavingTheLoopCancelsTheSocket() async throws {
        let request = session.webSocketRequest(to: server.url("/echo"))
        let task = request.webSocketTask()
        for await event in task.streamingMessageEvents() {
            if case .connected = event.kind { break }
        }
        await eventually("the socket was cancelled") { request.isCancelled }
        await eventually("the server heard the socket go away") { server.closeCodesReceived == [1001] }
    }

    func testSendingAfterTheEndThrows() async throws {
        let request = session.webSocketRequest(to: server.url("/close"))
        let task = request.webSocketTask()
        for await _ in task.streamingMessageEvents() {}
        do {
            try await task.send(.string("late"))
            XCTFail("a send after the end succeeded")
        } catch {
            XCTAssertNotNil(error.asAFError ?? (error as? POSIXError))
        }
    }
}
