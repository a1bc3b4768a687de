import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DataStreamRequest {
    /// A Server-Sent Events connection that reconnects, as the WHATWG `EventSource` does: after the stream ends or the
    /// network fails it waits the server's `retry` (or the default; never less than 500 ms, and backing off while
    /// connections end before any event), reconnects with `Last-Event-ID`, and stops on a
    /// `204`, on a response that is not a `200` `text/event-stream`, or when the iterating task is cancelled. Each
    /// connection is a `DataStreamRequest` of the session, so interceptors (a token refresh) apply to every one.
    ///
    /// Events are pulled: a consumer that falls behind stops the connection being read.
    public struct EventSource: AsyncSequence, Sendable {
        /// Each event as dispatched.
        public typealias Element = ServerSentEvent

        let session: Session
        let url: any URLConvertible
        let headers: HTTPHeaders
        let lastEventID: String?
        let reconnectionTime: TimeInterval
        let interceptor: (any RequestInterceptor)?

        /// The longest wait before reconnecting, whatever `retry` the server sends: a hostile value must neither park the
        /// source for years nor overflow the sleep.
        static let maximumReconnectionTime: TimeInterval = 300
        /// The shortest wait before reconnecting, whatever `retry` the server sends (browsers wait 500 ms or more): a
        /// server that sends `retry: 0` and closes must not get a reconnection storm.
        static let minimumReconnectionTime: TimeInterval = 0.5
        /// The longest a back-off grows for connections that keep ending before any event, unless `retry` asks for more.
        static let maximumBackOff: TimeInterval = 60

        /// The wait before the next connection: the server's `retry`, else the caller's, within 0.5...300 seconds, doubled
        /// for each connection in a row after the first that ended before delivering an event (at most 60 seconds, or
        /// the `retry` itself when that is longer).
        ///
        /// - Parameters:
        ///   - serverMilliseconds: The server's last `retry`, if any.
        ///   - fallback:           The caller's reconnection time.
        ///   - emptyConnections:   Connections in a row that ended before any event.
        static func reconnectionDelay(
            serverMilliseconds: Int?, otherwise fallback: TimeInterval, emptyConnections: Int = 0
        )
            -> TimeInterval
        {
            var delay = serverMilliseconds.map { TimeInterval($0) / 1000 } ?? fallback
            if delay.isNaN { delay = minimumReconnectionTime }
            let base = Swift.min(Swift.max(minimumReconnectionTime, delay), maximumReconnectionTime)
            guard emptyConnections > 1 else { return base }
            let backOff = base * pow(2, TimeInterval(Swift.min(emptyConnections - 1, 16)))
            return Swift.min(backOff, Swift.max(base, maximumBackOff))
        }

        /// Connects on the first `next()`.
        public func makeAsyncIterator() -> Iterator {
            Iterator(source: self)
        }

        /// The iterator of an `EventSource`; one connection at a time.
        public struct Iterator: AsyncIteratorProtocol {
            private let source: EventSource
            private var parser: ServerSentEventParser
            private var pending: [ServerSentEvent] = []
            private var connection: StreamOf<DataStreamRequest.Stream<Data, Never>>.Iterator?
            private var request: DataStreamRequest?
            private var finished = false
            private var connections = 0
            /// Whether the current connection delivered an event, and how many in a row ended before one did.
            private var delivered = false
            private var emptyConnections = 0

            init(source: EventSource) {
                self.source = source
                parser = ServerSentEventParser(lastEventID: source.lastEventID)
            }

            /// How many connections were made so far.
            public var connectionCount: Int { connections }

            /// The next event; `nil` once the source stopped (a `204`, cancellation).
            ///
            /// - Throws: `AFError.responseValidationFailed` for a response that is not a `200` `text/event-stream`, and
            ///   the limits' errors for a line or event past its bound.
            public mutating func next() async throws -> ServerSentEvent? {
                while true {
                    if !pending.isEmpty { return pending.removeFirst() }
                    if finished || Task.isCancelled { return nil }
                    if connection == nil { connect() }
                    guard let stream = await connection?.next() else {
                        // The iteration's task was cancelled: the stream ended and cancelled its request.
                        finished = true
                        return nil
                    }
                    switch stream.event {
                    case let .stream(.success(chunk)):
                        do {
                            pending = try parser.parse(chunk)
                            if !pending.isEmpty { delivered = true }
                        } catch {
                            request?.cancel()
                            finished = true
                            throw error
                        }
                    case let .complete(completion):
                        connection = nil
                        request = nil
                        try await settle(completion)
                    }
                }
            }

            private mutating func connect() {
                var headers = source.headers
                headers.update(name: "Accept", value: "text/event-stream")
                headers.update(name: "Cache-Control", value: "no-store")
                if let id = parser.lastEventID, !id.isEmpty { headers.update(name: "Last-Event-ID", value: id) }
                let request = source.session.streamRequest(
                    source.url, headers: headers, interceptor: source.interceptor
                )
                .validate { _, response in
                    if response.statusCode == 204 { return .success(()) }
                    guard response.statusCode == 200 else {
                        return .failure(
                            AFError.responseValidationFailed(reason: .unacceptableStatusCode(code: response.statusCode))
                        )
                    }
                    return ResponseValidator.validate(
                        contentType: ["text/event-stream"], response: response, data: Data([0]))
                }
                self.request = request
                connections += 1
                delivered = false
                // A new connection starts a new stream: only the last event ID and the reconnection time carry over.
                parser = ServerSentEventParser(
                    lastEventID: parser.lastEventID, reconnectionTime: parser.reconnectionTime)
                connection = request.streamTask().streamingData().makeAsyncIterator()
            }

            /// After a connection ended: stop, fail, or wait and reconnect.
            private mutating func settle(_ completion: DataStreamRequest.Completion) async throws {
                if completion.response?.statusCode == 204, completion.error == nil {
                    finished = true
                    return
                }
                if let error = completion.error {
                    if error.isExplicitlyCancelledError || Task.isCancelled {
                        finished = true
                        return
                    }
                    if error.isResponseValidationError {
                        finished = true
                        throw error
                    }
                }
                emptyConnections = delivered ? 0 : emptyConnections + 1
                let delay = EventSource.reconnectionDelay(
                    serverMilliseconds: parser.reconnectionTime, otherwise: source.reconnectionTime,
                    emptyConnections: emptyConnections)
                do {
                    try await Task.sleep(nanoseconds: UInt64(delay * 1_000_000_000))
                } catch {
                    finished = true
                }
            }
        }
    }
}

extension Session {
    /// Opens a Server-Sent Events source on `convertible` that reconnects until a `204`, a refused response, or
    /// cancellation of the task iterating it.
    ///
    /// - Parameters:
    ///   - convertible:      The URL of the event stream.
    ///   - headers:          Headers for every connection; `Accept`, `Cache-Control` and `Last-Event-ID` are set
    ///                       by the source. `[]` by default.
    ///   - lastEventID:      The ID to resume after, sent as `Last-Event-ID` on the first connection. `nil` by default.
    ///   - reconnectionTime: The wait before reconnecting until the server sets one with `retry`. 3 seconds by default.
    ///   - interceptor:      `RequestInterceptor` for every connection. `nil` by default.
    /// - Returns: The `EventSource`, an `AsyncSequence` of `ServerSentEvent`.
    public func eventSource(
        _ convertible: any URLConvertible, headers: HTTPHeaders = [], lastEventID: String? = nil,
        reconnectionTime: TimeInterval = 3, interceptor: (any RequestInterceptor)? = nil
    ) -> DataStreamRequest.EventSource {
        DataStreamRequest.EventSource(
            session: self, url: convertible, headers: headers, lastEventID: lastEventID,
            reconnectionTime: reconnectionTime,
            interceptor: interceptor)
    }
}
