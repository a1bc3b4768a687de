import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension WebSocketRequest {
    /// Hands each event to `handler` on `queue`, its messages made values by `serializer`; a message it cannot
    /// decode comes as `.serializerFailed`.
    ///
    /// - Parameters:
    ///   - serializer: Makes a value of each message.
    ///   - queue:      Where `handler` runs. `.main` by default.
    ///   - handler:    The events.
    /// - Returns: The instance.
    @preconcurrency
    @discardableResult
    public func streamSerializer<Serializer>(
        _ serializer: Serializer,
        on queue: DispatchQueue = .main,
        handler: @escaping @Sendable (_ event: Event<Serializer.Output, Serializer.Failure>) -> Void
    ) -> Self where Serializer: WebSocketMessageSerializer, Serializer.Failure == any Error {
        forEvent(on: queue, handler: handler) { $0.kind(serializer) }
    }

    /// Hands each event to `handler` on `queue`, its messages decoded as `Value` by `decoder`.
    ///
    /// - Parameters:
    ///   - type:    The type of the messages. Inferred by default.
    ///   - queue:   Where `handler` runs. `.main` by default.
    ///   - decoder: The decoder. `JSONDecoder()` by default.
    ///   - handler: The events.
    /// - Returns: The instance.
    @preconcurrency
    @discardableResult
    public func streamDecodableEvents<Value>(
        _ type: Value.Type = Value.self,
        on queue: DispatchQueue = .main,
        using decoder: any DataDecoder = JSONDecoder(),
        handler: @escaping @Sendable (_ event: Event<Value, any Error>) -> Void
    ) -> Self where Value: Decodable & Sendable {
        streamSerializer(DecodableWebSocketMessageDecoder<Value>(decoder: decoder), on: queue, handler: handler)
    }

    /// Hands each message, decoded as `Value` by `decoder`, to `handler` on `queue`; messages that do not decode
    /// are skipped.
    ///
    /// - Parameters:
    ///   - type:    The type of the messages. Inferred by default.
    ///   - queue:   Where `handler` runs. `.main` by default.
    ///   - decoder: The decoder. `JSONDecoder()` by default.
    ///   - handler: The values.
    /// - Returns: The instance.
    @preconcurrency
    @discardableResult
    public func streamDecodable<Value>(
        _ type: Value.Type = Value.self,
        on queue: DispatchQueue = .main,
        using decoder: any DataDecoder = JSONDecoder(),
        handler: @escaping @Sendable (_ value: Value) -> Void
    ) -> Self where Value: Decodable & Sendable {
        streamDecodableEvents(Value.self, on: queue, using: decoder) { event in
            event.message.map(handler)
        }
    }

    /// Hands each event to `handler` on `queue`, messages as they arrived.
    ///
    /// - Parameters:
    ///   - queue:   Where `handler` runs. `.main` by default.
    ///   - handler: The events.
    /// - Returns: The instance.
    @preconcurrency
    @discardableResult
    public func streamMessageEvents(
        on queue: DispatchQueue = .main,
        handler: @escaping @Sendable (_ event: Event<URLSessionWebSocketTask.Message, Never>) -> Void
    ) -> Self {
        forEvent(on: queue, handler: handler) { $0.messageKind }
    }

    /// Registers `handler`, run on `queue` with each event as `kind` makes it.
    private func forEvent<Success, Failure>(
        on queue: DispatchQueue, handler: @escaping @Sendable (Event<Success, Failure>) -> Void,
        kind: @escaping @Sendable (IncomingEvent) -> Event<Success, Failure>.Kind
    ) -> Self {
        forIncomingEvent { [weak self] incoming, done in
            guard let self else { return done() }
            let event = Event(socket: self, kind: kind(incoming))
            queue.async {
                handler(event)
                done()
            }
        }
    }

    /// Hands each message to `handler` on `queue`.
    ///
    /// - Parameters:
    ///   - queue:   Where `handler` runs. `.main` by default.
    ///   - handler: The messages.
    /// - Returns: The instance.
    @preconcurrency
    @discardableResult
    public func streamMessages(
        on queue: DispatchQueue = .main,
        handler: @escaping @Sendable (_ message: URLSessionWebSocketTask.Message) -> Void
    ) -> Self {
        streamMessageEvents(on: queue) { event in
            event.message.map(handler)
        }
    }
}

/// Makes a value of each WebSocket message, for `WebSocketRequest.streamSerializer(_:on:handler:)`.
public protocol WebSocketMessageSerializer<Output, Failure>: Sendable {
    /// The value made.
    associatedtype Output: Sendable
    /// What a message that cannot be made one throws.
    associatedtype Failure: Error = any Error

    /// The value of `message`.
    func decode(_ message: URLSessionWebSocketTask.Message) throws -> Output
}

extension WebSocketMessageSerializer {
    /// Decodes each message's bytes (a text message's UTF-8) as `Value` with `decoder`.
    public static func json<Value>(
        decoding _: Value.Type = Value.self,
        using decoder: JSONDecoder = JSONDecoder()
    ) -> DecodableWebSocketMessageDecoder<Value> where Self == DecodableWebSocketMessageDecoder<Value> {
        Self(decoder: decoder)
    }

    static var passthrough: PassthroughWebSocketMessageDecoder {
        PassthroughWebSocketMessageDecoder()
    }
}

/// Hands messages on as they are.
struct PassthroughWebSocketMessageDecoder: WebSocketMessageSerializer {
    typealias Failure = Never

    func decode(_ message: URLSessionWebSocketTask.Message) -> URLSessionWebSocketTask.Message {
        message
    }
}

/// Decodes each message's bytes (a text message's UTF-8) as `Value`.
public struct DecodableWebSocketMessageDecoder<Value: Decodable & Sendable>: WebSocketMessageSerializer {
    /// Why a message did not decode.
    public enum Error: Swift.Error {
        /// The decoder's error.
        case decoding(any Swift.Error)
        /// A kind of message this decoder does not know.
        case unknownMessage(description: String)
    }

    /// The decoder.
    public let decoder: any DataDecoder

    /// A decoder of messages with `decoder`.
    public init(decoder: any DataDecoder) {
        self.decoder = decoder
    }

    public func decode(_ message: URLSessionWebSocketTask.Message) throws -> Value {
        let data: Data
        switch message {
        case let .data(messageData): data = messageData
        case let .string(string): data = Data(string.utf8)
        @unknown default: throw Error.unknownMessage(description: String(describing: message))
        }
        do {
            return try decoder.decode(Value.self, from: data)
        } catch {
            throw Error.decoding(error)
        }
    }
}
