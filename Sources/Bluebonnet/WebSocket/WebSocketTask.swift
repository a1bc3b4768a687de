import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `WebSocketRequest` for `async`/`await`: its events and messages as `StreamOf` sequences (a message counts as
/// handled once the loop takes it, so a loop slower than the server stops the socket being read), and `send` as an
/// `async` call. Alamofire 5.12's `WebSocketTask`.
public struct WebSocketTask: Sendable {
    private let request: WebSocketRequest

    fileprivate init(request: WebSocketRequest) {
        self.request = request
    }

    /// A stream of the socket's events.
    public typealias EventStreamOf<Success: Sendable, Failure: Error> = StreamOf<
        WebSocketRequest.Event<Success, Failure>
    >

    /// The socket's events, the completion last.
    ///
    /// - Parameters:
    ///   - shouldAutomaticallyCancel: Whether leaving the loop early cancels the socket. `true` by default.
    ///   - bufferingPolicy:           What is kept when the loop falls behind. `.unbounded` by default: back-pressure
    ///                                alone bounds it.
    /// - Returns: The stream.
    public func streamingMessageEvents(
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
        bufferingPolicy: EventStreamOf<URLSessionWebSocketTask.Message, Never>.BufferingPolicy = .unbounded
    ) -> EventStreamOf<URLSessionWebSocketTask.Message, Never> {
        stream(automaticallyCancelling: shouldAutomaticallyCancel, bufferingPolicy: bufferingPolicy) {
            WebSocketRequest.Event(socket: $1, kind: $0.messageKind)
        }
    }

    /// The socket's messages; the stream ends when the socket does.
    ///
    /// - Parameters:
    ///   - shouldAutomaticallyCancel: Whether leaving the loop early cancels the socket. `true` by default.
    ///   - bufferingPolicy:           What is kept when the loop falls behind. `.unbounded` by default.
    /// - Returns: The stream.
    public func streamingMessages(
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
        bufferingPolicy: StreamOf<URLSessionWebSocketTask.Message>.BufferingPolicy = .unbounded
    ) -> StreamOf<URLSessionWebSocketTask.Message> {
        stream(automaticallyCancelling: shouldAutomaticallyCancel, bufferingPolicy: bufferingPolicy) { incoming, _ in
            if case let .receivedMessage(message) = incoming { message } else { nil }
        }
    }

    /// The socket's events, its messages decoded as `Value`.
    ///
    /// - Parameters:
    ///   - type:                      The type of the messages. Inferred by default.
    ///   - shouldAutomaticallyCancel: Whether leaving the loop early cancels the socket. `true` by default.
    ///   - decoder:                   The decoder. `JSONDecoder()` by default.
    ///   - bufferingPolicy:           What is kept when the loop falls behind. `.unbounded` by default.
    /// - Returns: The stream.
    public func streamingDecodableEvents<Value: Decodable & Sendable>(
        _ type: Value.Type = Value.self,
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
        using decoder: any DataDecoder = JSONDecoder(),
        bufferingPolicy: EventStreamOf<Value, any Error>.BufferingPolicy = .unbounded
    ) -> EventStreamOf<Value, any Error> {
        let serializer = DecodableWebSocketMessageDecoder<Value>(decoder: decoder)
        return stream(automaticallyCancelling: shouldAutomaticallyCancel, bufferingPolicy: bufferingPolicy) {
            WebSocketRequest.Event(socket: $1, kind: $0.kind(serializer))
        }
    }

    /// The socket's messages, decoded as `Value`; those that do not decode are skipped.
    ///
    /// - Parameters:
    ///   - type:                      The type of the messages. Inferred by default.
    ///   - shouldAutomaticallyCancel: Whether leaving the loop early cancels the socket. `true` by default.
    ///   - decoder:                   The decoder. `JSONDecoder()` by default.
    ///   - bufferingPolicy:           What is kept when the loop falls behind. `.unbounded` by default.
    /// - Returns: The stream.
    public func streamingDecodable<Value: Decodable & Sendable>(
        _ type: Value.Type = Value.self,
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
        using decoder: any DataDecoder = JSONDecoder(),
        bufferingPolicy: StreamOf<Value>.BufferingPolicy = .unbounded
    ) -> StreamOf<Value> {
        let serializer = DecodableWebSocketMessageDecoder<Value>(decoder: decoder)
        return stream(automaticallyCancelling: shouldAutomaticallyCancel, bufferingPolicy: bufferingPolicy) {
            WebSocketRequest.Event<Value, any Error>(socket: $1, kind: $0.kind(serializer)).message
        }
    }

    private func stream<Value>(
        automaticallyCancelling shouldAutomaticallyCancel: Bool,
        bufferingPolicy: StreamOf<Value>.BufferingPolicy,
        transform: @escaping @Sendable (WebSocketRequest.IncomingEvent, WebSocketRequest) -> Value?
    ) -> StreamOf<Value> {
        let request = self.request
        // Started now, as Alamofire's streams are: the socket opens and its events wait in the stream, so a `send`
        // before the loop begins completes once the socket is open.
        return StreamOf(
            startingNow: bufferingPolicy,
            onTermination: {
                guard shouldAutomaticallyCancel, request.isInitialized || request.isResumed || request.isSuspended
                else { return }
                request.cancel()
            },
            builder: { channel in
                _ = request.forIncomingEvent { [weak request] incoming, done in
                    guard let request else { return done() }
                    if let value = transform(incoming, request) { channel.yield(value, taken: done) } else { done() }
                    if case .completed = incoming { channel.finish() }
                }
            })
    }

    /// Sends `message`, returning once it was written.
    ///
    /// - Parameter message: The message.
    /// - Throws: Why it was not sent: the socket ended, or it failed.
    public func send(_ message: URLSessionWebSocketTask.Message) async throws {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            request.send(message, queue: .global()) { continuation.resume(with: $0) }
        }
    }

    /// Closes the socket with `closeCode` and `reason`.
    public func close(sending closeCode: URLSessionWebSocketTask.CloseCode, reason: Data? = nil) {
        request.close(sending: closeCode, reason: reason)
    }

    /// Cancels the socket.
    public func cancel() {
        request.cancel()
    }

    /// Resumes the socket.
    public func resume() {
        request.resume()
    }

    /// Suspends the socket: it is not read until resumed.
    public func suspend() {
        request.suspend()
    }
}

extension WebSocketRequest {
    /// A `WebSocketTask` of this request, for `async`/`await`.
    public func webSocketTask() -> WebSocketTask {
        WebSocketTask(request: self)
    }
}

extension WebSocketRequest.IncomingEvent {
    /// The event as a handler of messages sees it.
    var messageKind: WebSocketRequest.Event<URLSessionWebSocketTask.Message, Never>.Kind {
        switch self {
        case let .connected(`protocol`): .connected(protocol: `protocol`)
        case let .receivedMessage(message): .receivedMessage(message)
        case let .disconnected(closeCode, reason): .disconnected(closeCode: closeCode, reason: reason)
        case let .completed(completion): .completed(completion)
        }
    }

    /// The event as a handler using `serializer` sees it.
    func kind<Serializer: WebSocketMessageSerializer>(
        _ serializer: Serializer
    ) -> WebSocketRequest.Event<Serializer.Output, any Error>.Kind {
        switch self {
        case let .connected(`protocol`): .connected(protocol: `protocol`)
        case let .receivedMessage(message):
            {
                do { return .receivedMessage(try serializer.decode(message)) } catch { return .serializerFailed(error) }
            }()
        case let .disconnected(closeCode, reason): .disconnected(closeCode: closeCode, reason: reason)
        case let .completed(completion): .completed(completion)
        }
    }
}
