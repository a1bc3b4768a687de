import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A WebSocket, with Alamofire 5.12's `WebSocketRequest` API (there behind `@_spi(WebSocket)` and Darwin-only; public
/// here, on Linux).
///
/// The upgrade is a request like any other: adapters and `RequestModifier` shape it, the session's cookies and
/// credentials go with it, a redirect is followed and an authentication challenge answered as for any hop, and a
/// retrier sees a refused upgrade (`sessionTaskFailed(URLError(.badServerResponse))`). It is carried on a connection of
/// its own, with the session's trust evaluators, TLS settings and proxies. Messages are handed to handlers in order,
/// with back-pressure: when handlers fall behind by more than a megabyte the socket is not read until they catch up.
public final class WebSocketRequest: Request, @unchecked Sendable {
    // @unchecked: the socket's own state is behind `Protected`; the rest is immutable.

    /// What handlers are told, before serialization.
    enum IncomingEvent: Sendable {
        case connected(protocol: String?)
        case receivedMessage(URLSessionWebSocketTask.Message)
        case disconnected(closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?)
        case completed(Completion)
    }

    /// An event of the socket, as a handler sees it, with the controls of the socket it came from.
    public struct Event<Success: Sendable, Failure: Error>: Sendable {
        /// What happened.
        public enum Kind: Sendable {
            /// The upgrade succeeded; the subprotocol the server chose, if any.
            case connected(protocol: String?)
            /// A message, serialized.
            case receivedMessage(Success)
            /// A message the serializer could not make a value of.
            case serializerFailed(Failure)
            /// The close handshake: the server's close frame, or its answer to `close(sending:reason:)`. Not told
            /// when the socket was cancelled or failed.
            case disconnected(closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?)
            /// The request ended; always the last event.
            case completed(Completion)
        }

        weak var socket: WebSocketRequest?

        /// What happened.
        public let kind: Kind

        /// The message, when the event is one.
        public var message: Success? {
            guard case let .receivedMessage(message) = kind else { return nil }
            return message
        }

        init(socket: WebSocketRequest?, kind: Kind) {
            self.socket = socket
            self.kind = kind
        }

        /// Closes the socket with `closeCode` and `reason`.
        public func close(sending closeCode: URLSessionWebSocketTask.CloseCode, reason: Data? = nil) {
            socket?.close(sending: closeCode, reason: reason)
        }

        /// Cancels the socket.
        public func cancel() {
            socket?.cancel()
        }

        /// Sends a ping; `onResponse` is called on `queue` when its pong arrives, or with why it will not.
        public func sendPing(
            respondingOn queue: DispatchQueue = .main, onResponse: @escaping @Sendable (PingResponse) -> Void
        ) {
            socket?.sendPing(respondingOn: queue, onResponse: onResponse)
        }
    }

    /// How the socket ended.
    public struct Completion: Sendable {
        /// The last `URLRequest` sent (the upgrade).
        public let request: URLRequest?
        /// The upgrade's response, if one arrived.
        public let response: HTTPURLResponse?
        /// URLSession's metrics of the upgrade: always `nil` on Linux, as with Alamofire there. Bluebonnet's
        /// measurements are `taskMetrics`.
        public let metrics: URLSessionTaskMetrics?
        /// What Bluebonnet measured of the upgrade.
        public let taskMetrics: RequestTaskMetrics?
        /// The error that ended the socket; `nil` when it closed with a close handshake.
        public let error: AFError?
        /// When the upgrade was sent, when its answer arrived, and when the socket ended. Bluebonnet's own.
        public let timeline: Timeline
    }

    /// The socket's options.
    public struct Configuration: Sendable {
        /// No subprotocol, messages up to 1 MiB, no automatic pings.
        public static var `default`: Self { Self() }

        /// Asks for `protocol` (`Sec-WebSocket-Protocol`).
        public static func `protocol`(_ protocol: String) -> Self {
            Self(protocol: `protocol`)
        }

        /// Allows messages up to `maximumMessageSize` bytes.
        public static func maximumMessageSize(_ maximumMessageSize: Int) -> Self {
            Self(maximumMessageSize: maximumMessageSize)
        }

        /// Pings every `pingInterval` seconds once connected, each after the last one's pong; a ping unanswered for
        /// `pingTimeout` (10 seconds) fails the socket.
        public static func pingInterval(_ pingInterval: TimeInterval) -> Self {
            Self(pingInterval: pingInterval)
        }

        /// The subprotocol asked for; several may be given, separated by commas.
        public let `protocol`: String?
        /// The largest message accepted, in bytes (a message of several fragments counted whole); a larger one
        /// closes the socket with `messageTooBig` and fails it with
        /// `AFError.responseLimitExceeded(reason: .webSocketMessageTooLarge(limit:))`. 1 MiB by default.
        public let maximumMessageSize: Int
        /// The interval of automatic pings, if any.
        public let pingInterval: TimeInterval?
        /// With `pingInterval` set, how long a ping (an automatic one or `sendPing`'s) may wait for its pong: a server
        /// that answers none in time (gone, or stuck half-way through a frame) fails the socket with
        /// `AFError.sessionTaskFailed(error:)` carrying `URLError(.timedOut)`, whose `NSUnderlyingErrorKey` is a
        /// `WebSocketProtocolError` that says so, after the client said it is going away (1001). 10 seconds by
        /// default (Bluebonnet's; OkHttp's is the ping interval). Without `pingInterval`, pings wait as long as the
        /// socket is open, as URLSession's do.
        public let pingTimeout: TimeInterval
        /// Whether messages may be compressed (`permessage-deflate`, RFC 7692): offered in the upgrade, and used
        /// both ways when the server accepts. A compressed message is inflated within `maximumMessageSize`. `true` by
        /// default (Bluebonnet's; URLSession's sockets do not compress).
        public let perMessageDeflate: Bool

        /// Options together (Alamofire's initializer is internal; each static form sets one).
        ///
        /// - Parameters:
        ///   - protocol:           The subprotocol asked for, if any. None by default.
        ///   - maximumMessageSize: The largest message accepted, in bytes. 1 MiB by default.
        ///   - pingInterval:       The interval of automatic pings, if any. None by default.
        ///   - pingTimeout:        With `pingInterval` set, how long a ping may wait for its pong before the socket
        ///                         fails. 10 seconds by default.
        ///   - perMessageDeflate:  Whether messages may be compressed. `true` by default.
        public init(
            protocol: String? = nil, maximumMessageSize: Int = 1_048_576, pingInterval: TimeInterval? = nil,
            pingTimeout: TimeInterval = 10, perMessageDeflate: Bool = true
        ) {
            self.protocol = `protocol`
            self.maximumMessageSize = max(0, maximumMessageSize)
            self.pingInterval = pingInterval
            self.pingTimeout = max(0, pingTimeout)
            self.perMessageDeflate = perMessageDeflate
        }
    }

    /// The answer to a ping.
    public enum PingResponse: Sendable {
        /// When a ping's pong arrived.
        public struct Pong: Sendable {
            /// When the ping was sent.
            public let start: Date
            /// When its pong arrived.
            public let end: Date
            /// The round trip, in seconds.
            public let latency: TimeInterval
        }

        /// The pong arrived.
        case pong(Pong)
        /// The socket ended before it did.
        case error(any Error)
        /// Not sent: the request is not resumed, or the socket is not open.
        case unsent
    }

    /// The close frame the server sent, with its status code as a number: `URLSessionWebSocketTask.CloseCode` has
    /// no case for many (1012–1014, and the 3000–4999 an application defines), which `.disconnected` reports as
    /// `.invalid`. Bluebonnet's own.
    public struct ServerClose: Sendable, Equatable {
        /// The status code; 1005 (`noStatusReceived`) when the frame carried none.
        public let code: UInt16
        /// The reason, if any.
        public let reason: Data?
    }

    /// The server's close frame, once it arrived.
    public var serverClose: ServerClose? { socketState.read { $0.serverClose } }

    /// The `URLRequestConvertible` the request is made from.
    public let convertible: any URLRequestConvertible
    /// The socket's options.
    public let configuration: Configuration

    /// Bytes of messages handed to handlers and not yet handled before the socket stops being read.
    static let highWater = 1024 * 1024
    /// Bytes not yet handled below which reading resumes.
    static let lowWater = 256 * 1024

    private struct SocketState {
        /// Each handler takes an event and calls its second argument once the user's closure ran.
        var handlers: [@Sendable (IncomingEvent, @escaping @Sendable () -> Void) -> Void] = []
        var connection: (any WebSocketConnection)?
        var enqueuedSends:
            [(
                message: URLSessionWebSocketTask.Message, queue: DispatchQueue,
                completion: @Sendable (Result<Void, any Error>) -> Void
            )] = []
        /// Bumped to outdate a scheduled automatic ping.
        var pingGeneration = 0
        var outstandingBytes = 0
        var waiting: [TransportReadiness] = []
        /// Whether the client closed with `close(sending:reason:)`: the end is then no failure.
        var closedByClient = false
        var serverClose: ServerClose?
    }

    private let socketState = Protected(SocketState())

    init(
        convertible: any URLRequestConvertible,
        configuration: Configuration,
        underlyingQueue: DispatchQueue,
        serializationQueue: DispatchQueue,
        eventMonitor: (any EventMonitor)?,
        interceptor: (any RequestInterceptor)?,
        shouldAutomaticallyResume: Bool?,
        context: SessionContext,
        delegate: any RequestLifecycleDelegate
    ) {
        self.convertible = convertible
        self.configuration = configuration
        super.init(
            underlyingQueue: underlyingQueue, serializationQueue: serializationQueue, eventMonitor: eventMonitor,
            interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, context: context,
            delegate: delegate, kind: Self.kind(of: configuration),
            makeURLRequest: { try convertible.asURLRequest() })
        // An upgrade answered with anything but `101` fails, however it got there (a challenge no credential answered
        // is delivered as it is): as URLSession fails the socket, and so that a retrier is asked.
        appendValidator(lightweight: true) { [unowned self] in
            let state = mutableState.read()
            guard state.error == nil, let head = state.head, head.statusCode != 101 else { return }
            recordValidationError(WebSocketFailure.badServerResponse)
        }
    }

    // MARK: - The kind

    /// A socket's kind: carried by the session's WebSocket engine with the configuration's subprotocol and options; the
    /// request takes a refused upgrade's body (and drops it: its validator fails the request).
    private static func kind(of configuration: Configuration) -> RequestKind {
        let options = WebSocketOptions(
            maximumMessageSize: configuration.maximumMessageSize, offersCompression: configuration.perMessageDeflate,
            pingTimeout: configuration.pingInterval == nil ? nil : configuration.pingTimeout)
        return RequestKind(
            consumer: .streamed, route: .webSocket(subprotocol: configuration.protocol, options: options))
    }

    // MARK: - Controls

    /// Closes the socket with `closeCode` and `reason`: the close frame goes out, handlers hear `.disconnected` with
    /// the server's answer, and the request completes without an error. A socket not yet open is cancelled, and
    /// completes without an error too.
    ///
    /// - Returns: The instance.
    @discardableResult
    public func close(sending closeCode: URLSessionWebSocketTask.CloseCode, reason: Data? = nil) -> Self {
        cancelAutomaticPing()
        let connection = socketState.write { state -> (any WebSocketConnection)? in
            state.closedByClient = true
            return state.connection
        }
        if let connection {
            connection.close(code: UInt16(clamping: closeCode.rawValue), reason: reason)
        } else {
            cancel()
        }
        return self
    }

    /// Cancels the socket: it says it is going away (1001) and closes; handlers hear no `.disconnected`, and the
    /// completion's error is `explicitlyCancelled`.
    ///
    /// - Returns: The instance.
    @discardableResult
    override public func cancel() -> Self {
        cancelAutomaticPing()
        return super.cancel()
    }

    /// Sends a ping; `onResponse` is called on `queue` with its pong, with the error that ended the wait, or with
    /// `.unsent` when the request is not resumed or the socket not open.
    ///
    /// - Parameters:
    ///   - queue:      Where `onResponse` runs. `.main` by default.
    ///   - onResponse: The answer.
    @preconcurrency
    public func sendPing(
        respondingOn queue: DispatchQueue = .main, onResponse: @escaping @Sendable (PingResponse) -> Void
    ) {
        guard isResumed, let connection = socketState.read({ $0.connection }) else {
            queue.async { onResponse(.unsent) }
            return
        }
        let start = Date()
        let started = ProcessInfo.processInfo.systemUptime
        connection.sendPing { error in
            let response: PingResponse
            if let error {
                response = .error(error)
            } else {
                let latency = ProcessInfo.processInfo.systemUptime - started
                response = .pong(.init(start: start, end: Date(), latency: latency))
            }
            queue.async { onResponse(response) }
        }
    }

    /// Sends `message`; `completionHandler` is called on `queue` once it was written, or with the error. A message
    /// sent before the socket opens waits for it; one sent after it ended fails at once.
    ///
    /// - Parameters:
    ///   - message:           The message.
    ///   - queue:             Where `completionHandler` runs. `.main` by default.
    ///   - completionHandler: Told when the message was written, or why not.
    @preconcurrency
    public func send(
        _ message: URLSessionWebSocketTask.Message, queue: DispatchQueue = .main,
        completionHandler: @escaping @Sendable (Result<Void, any Error>) -> Void
    ) {
        guard !(isCancelled || isFinished) else {
            queue.async { completionHandler(.failure(AFError.explicitlyCancelled)) }
            return
        }
        let connection = socketState.write { state -> (any WebSocketConnection)? in
            guard let connection = state.connection else {
                state.enqueuedSends.append((message, queue, completionHandler))
                return nil
            }
            return connection
        }
        connection?.send(message) { error in
            queue.async { completionHandler(error.map { .failure($0) } ?? .success(())) }
        }
    }

    // MARK: - Automatic pings

    /// Schedules the next automatic ping; each schedule outdates the ones before it.
    private func startAutomaticPing(every interval: TimeInterval) {
        let generation = socketState.write { state -> Int? in
            guard state.connection != nil, !state.closedByClient else { return nil }
            state.pingGeneration += 1
            return state.pingGeneration
        }
        guard let generation else { return }
        underlyingQueue.asyncAfter(deadline: .now() + max(0, interval)) { [weak self] in
            guard let self, isResumed, socketState.read({ $0.pingGeneration }) == generation else { return }
            sendPing(respondingOn: underlyingQueue) { [weak self] response in
                guard case .pong = response else { return }
                self?.startAutomaticPing(every: interval)
            }
        }
    }

    private func cancelAutomaticPing() {
        socketState.write { $0.pingGeneration += 1 }
    }

    // MARK: - Handlers

    /// Registers a handler of incoming events. Each event reaches it on `serializationQueue`, in order, and it calls
    /// the second argument once the user's closure ran (which is what lets the socket be read again); the completion
    /// comes once the request finished, after every message.
    func forIncomingEvent(
        _ handler: @escaping @Sendable (IncomingEvent, @escaping @Sendable () -> Void) -> Void
    ) -> Self {
        socketState.write { $0.handlers.append(handler) }
        appendResponseSerializer(inlineSafe: true) { [self] in
            // A socket that never opened (refused, failed, cancelled) sends nothing it was given.
            failEnqueuedSends()
            let completion = completion()
            serializationQueue.async { [self] in withExtendedLifetime(self) { handler(.completed(completion)) {} } }
        }
        return self
    }

    /// Tells every handler of `event`; `done` is called once each has run. The request lives until every event is
    /// handled: handlers hold it weakly, and it may have finished (and been let go by its session) by then.
    private func tell(_ event: IncomingEvent, done: @escaping @Sendable () -> Void = {}) {
        let handlers = socketState.read { $0.handlers }
        for handler in handlers {
            serializationQueue.async { [self] in withExtendedLifetime(self) { handler(event, done) } }
        }
    }

    /// How the socket ended, as handlers are told it: a close the client asked for is no failure.
    private func completion() -> Completion {
        let closedByClient = socketState.read { $0.closedByClient }
        var error = self.error
        if closedByClient, error?.isExplicitlyCancelledError == true { error = nil }
        let finished = finished()
        return Completion(
            request: finished.request, response: finished.response, metrics: nil, taskMetrics: finished.metrics,
            error: error,
            timeline: finished.timeline(serializationCompletedAt: Timeline.now()))
    }

    private func didHandle(_ count: Int) {
        let released = socketState.write { state -> [TransportReadiness] in
            state.outstandingBytes -= count
            guard state.outstandingBytes <= Self.lowWater else { return [] }
            defer { state.waiting = [] }
            return state.waiting
        }
        for readiness in released { readiness.ready() }
    }
}

// MARK: - The upgrade's answer

extension WebSocketRequest: ResponseBodyConsumer {
    func responseBodyWillBegin(_ head: ResponseHead) {}

    func responseBodyWasHeld(_ body: Data?) {}

    func consume(_ chunk: Data, readiness: TransportReadiness) {
        // A refused upgrade's body: nothing to hand on (the validator fails the request).
        readiness.ready()
    }

    func responseBodyDidEnd(error: AFError?, completion: @escaping @Sendable (AFError?) -> Void) {
        socketState.write { $0.connection = nil }
        cancelAutomaticPing()
        failEnqueuedSends()
        completion(nil)
    }

    private func failEnqueuedSends() {
        let sends = socketState.write { state in
            defer { state.enqueuedSends = [] }
            return state.enqueuedSends
        }
        for send in sends { send.queue.async { send.completion(.failure(WebSocketFailure.notConnected)) } }
    }
}

// MARK: - The socket's events

extension WebSocketRequest: WebSocketSink {
    func webSocketDidOpen(_ connection: any WebSocketConnection, protocol: String?) {
        let (sends, closed) = socketState.write { state in
            state.connection = connection
            defer { state.enqueuedSends = [] }
            return (state.enqueuedSends, state.closedByClient)
        }
        tell(.connected(protocol: `protocol`))
        for send in sends {
            connection.send(send.message) { error in
                send.queue.async { send.completion(error.map { .failure($0) } ?? .success(())) }
            }
        }
        if let interval = configuration.pingInterval, !closed {
            underlyingQueue.async { [self] in startAutomaticPing(every: interval) }
        }
    }

    func webSocketDidReceive(_ message: URLSessionWebSocketTask.Message, readiness: TransportReadiness) {
        let size =
            switch message {
            case let .data(data): data.count
            case let .string(string): string.utf8.count
            @unknown default: 0
            }
        let (count, blocked) = socketState.write { state -> (Int, Bool) in
            let count = state.handlers.count
            state.outstandingBytes += size * count
            let blocked = state.outstandingBytes > Self.highWater
            if blocked { state.waiting.append(readiness) }
            return (count, blocked)
        }
        if count > 0 {
            tell(.receivedMessage(message)) { [weak self] in self?.didHandle(size) }
        }
        if !blocked { readiness.ready() }
    }

    func webSocketDidReceiveClose(code: UInt16, reason: Data) {
        socketState.write { $0.serverClose = ServerClose(code: code, reason: reason.isEmpty ? nil : reason) }
        cancelAutomaticPing()
        guard !isCancelled else { return }
        let closeCode = URLSessionWebSocketTask.CloseCode(rawValue: Int(code)) ?? .invalid
        tell(.disconnected(closeCode: closeCode, reason: reason.isEmpty ? nil : reason))
    }
}
