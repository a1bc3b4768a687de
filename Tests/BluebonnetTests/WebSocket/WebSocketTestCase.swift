import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A test case with a WebSocket server on loopback and a fresh `Session`.
class WebSocketTestCase: XCTestCase {
    typealias Kind = WebSocketRequest.Event<URLSessionWebSocketTask.Message, Never>.Kind

    var server: WebSocketServer!
    var session: Session!

    override func setUp() async throws {
        try await super.setUp()
        server = try await WebSocketServer.start()
        session = Session()
    }

    override func tearDown() async throws {
        session = nil
        await server?.stop()
        server = nil
        try await super.tearDown()
    }

    /// Every event of `request`, in order, once it completed; `react` sees each as it comes, on a serial queue.
    func events(
        of request: WebSocketRequest,
        react: @escaping @Sendable (WebSocketRequest.Event<URLSessionWebSocketTask.Message, Never>) -> Void = { _ in }
    ) async -> [Kind] {
        let recorder = Recorder<Kind>()
        let queue = DispatchQueue(label: "websocket-events")
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            request.streamMessageEvents(on: queue) { event in
                recorder.append(event.kind)
                react(event)
                if case .completed = event.kind { continuation.resume() }
            }
        }
        return recorder.values
    }

    /// The completion among `events`.
    func completion(_ events: [Kind], file: StaticString = #filePath, line: UInt = #line) -> WebSocketRequest
        .Completion?
    {
        guard case let .completed(completion)? = events.last else {
            XCTFail("the last event is not the completion: \(events)", file: file, line: line)
            return nil
        }
        return completion
    }

    /// The messages among `events`.
    func messages(_ events: [Kind]) -> [URLSessionWebSocketTask.Message] {
        events.compactMap { kind in
            if case let .receivedMessage(message) = kind { return message }
            return nil
        }
    }

    /// The events, each as a short word, to compare orders.
    func names(_ events: [Kind]) -> [String] {
        events.map { kind in
            switch kind {
            case .connected: "connected"
            case .receivedMessage: "message"
            case .serializerFailed: "serializerFailed"
            case .disconnected: "disconnected"
            case .completed: "completed"
            }
        }
    }

    /// The `WebSocketProtocolError` a completion failed with.
    func protocolError(_ completion: WebSocketRequest.Completion?) -> WebSocketProtocolError? {
        guard case let .sessionTaskFailed(error as WebSocketProtocolError)? = completion?.error else { return nil }
        return error
    }

    /// Waits, without a fixed sleep, until `condition` holds (checked every 10 ms, for at most `timeout` seconds: a
    /// hang guard, not a bound on how long it takes).
    func eventually(
        _ description: String, timeout: TimeInterval = 30, file: StaticString = #filePath, line: UInt = #line,
        _ condition: () -> Bool
    ) async {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            if Date() > deadline { return XCTFail("timed out waiting until \(description)", file: file, line: line) }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
    }
}

extension URLSessionWebSocketTask.Message {
    /// The text of a text message.
    var text: String? {
        if case let .string(string) = self { return string }
        return nil
    }

    /// The bytes of a binary message.
    var bytes: Data? {
        if case let .data(data) = self { return data }
        return nil
    }
}

extension Array {
    /// The element at `index`, if there is one.
    func at(_ index: Int) -> Element? {
        indices.contains(index) ? self[index] : nil
    }
}
