import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Against an independent implementation, Python's `websockets`: messages both ways (a large one in several frames
/// from its side), its close code and reason, pings, and the `async` API.
final class WebSocketInteropTests: WebSocketTestCase {
    func testMessagesAndTheCloseFromPython() async throws {
        let peer = try PythonWebSockets()
        let request = session.webSocketRequest(to: peer.url("/greet"))
        let events = await events(of: request)

        XCTAssertEqual(names(events), ["connected", "message", "message", "disconnected", "completed"])
        XCTAssertEqual(messages(events).first?.text, "hello from python")
        XCTAssertEqual(messages(events).last?.bytes, Data([0, 1, 2, 255]))
        guard case let .disconnected(code, reason)? = events.at(3) else { return XCTFail("\(events)") }
        XCTAssertEqual(code, .invalid, "4000 has no name in Foundation")
        XCTAssertEqual(reason, Data("done".utf8))
        XCTAssertNil(completion(events)?.error)
    }

    func testEchoesPingsAndTheClientsCloseWithPython() async throws {
        let peer = try PythonWebSockets()
        let big = Data((0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let request = session.webSocketRequest(
            to: peer.url("/echo"), configuration: .init(maximumMessageSize: 4 * 1024 * 1024))
        let pong = expectation(description: "pong")
        let events = await events(of: request) { [unowned request] event in
            switch event.kind {
            case .connected:
                request.send(.string("héllo, wörld"), queue: .global()) { _ in }
                request.send(.data(big), queue: .global()) { _ in }
                request.sendPing(respondingOn: .global()) { response in
                    if case .pong = response { pong.fulfill() }
                }
            case .receivedMessage(.data):
                event.close(sending: .normalClosure, reason: Data("bye".utf8))
            default:
                break
            }
        }
        await fulfillment(of: [pong], timeout: 30)

        XCTAssertEqual(messages(events).first?.text, "héllo, wörld")
        XCTAssertEqual(messages(events).last?.bytes, big)
        // Compressed both ways: websockets accepts permessage-deflate and compresses what it sends.
        let extensions = completion(events)?.response?.value(forHTTPHeaderField: "Sec-WebSocket-Extensions")
        XCTAssertEqual(extensions?.hasPrefix("permessage-deflate"), true, "\(String(describing: extensions))")
        guard case let .disconnected(code, _)? = events.at(3) else { return XCTFail("\(events)") }
        XCTAssertEqual(code, .normalClosure)
        XCTAssertNil(completion(events)?.error)
    }

    func testTheAsyncAPIWithPython() async throws {
        let peer = try PythonWebSockets()
        let task = session.webSocketRequest(to: peer.url("/echo")).webSocketTask()
        var received: [String] = []
        for await event in task.streamingMessageEvents() {
            switch event.kind {
            case .connected:
                try await task.send(.string("one"))
                try await task.send(.string("two"))
            case let .receivedMessage(message):
                received.append(message.text ?? "")
                if received.count == 2 { task.close(sending: .normalClosure) }
            case let .completed(completion):
                XCTAssertNil(completion.error)
            default:
                break
            }
        }
        XCTAssertEqual(received, ["one", "two"])
    }
}
