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
