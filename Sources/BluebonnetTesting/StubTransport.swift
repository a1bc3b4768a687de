@_spi(Transport) import Bluebonnet
import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An engine whose every event the test sends by hand, so that what a request does when events come in a given order
/// (a cancel racing the response, a suspend before the request is made, a redirect decision arriving after a
/// cancel) can be tested in exactly that order.
///
/// ```swift
/// let transport = StubTransport()
/// let session = transport.session()
/// let request = session.request("https://api.example.com/user")
/// let response = request.serializingString()
/// let attempt = await transport.attempt(1)   // the first attempt the session handed over
/// attempt.respond()                          // the head
/// request.cancel()                           // a cancel before the body
/// attempt.complete(body: Data("late".utf8))  // the body arrives after it
/// XCTAssertEqual(await response.response.error?.isExplicitlyCancelledError, true)
/// XCTAssertEqual(attempt.taskCalls, ["cancel"])
/// ```
///
/// The session runs as with a real server above the engine (adapters, redirects, retries, validation, serializers,
/// events); only the network is replaced, and nothing happens on it unless the test says so. Where `HTTPStubs`
/// answers requests the way a server would, this one lets a test be the server, one event at a time.
public final class StubTransport: Sendable {
    private let engine = Engine()

    /// Makes an engine with no attempts yet.
    public init() {}

    /// How many attempts sessions on this engine have handed over (one per hop: a redirect or a retry is another).
    public var attemptCount: Int {
        engine.attemptCount
    }

    /// The `number`-th attempt (from 1), once a session has handed it over.
    ///
    /// - Parameter number: The attempt's number, from 1.
    /// - Returns: The attempt.
    public func attempt(_ number: Int) async -> Attempt {
        await engine.attempt(number)
    }

    /// A session whose requests go to this engine.
    ///
    /// - Parameter make: Makes the session, with any of `Session`'s initializers.
    /// - Returns: The session `make` made, on this engine.
    public func session(_ make: () -> Session) -> Session {
        Session.withTransport(engine, make: make)
    }

    /// A session whose requests go to this engine.
    ///
    /// - Parameters:
    ///   - configuration:            The configuration. `URLSessionConfiguration.af.default` by default.
    ///   - startRequestsImmediately: Whether a request starts when its first handler is added. `true` by default.
    ///   - interceptor:              The session's interceptor. `nil` by default.
    ///   - redirectHandler:          The session's redirect handler. `nil` by default.
    ///   - eventMonitors:            Monitors told of every request's events. None by default.
    /// - Returns: The session.
    public func session(
        configuration: URLSessionConfiguration = URLSessionConfiguration.af.default,
        startRequestsImmediately: Bool = true,
        interceptor: (any RequestInterceptor)? = nil,
        redirectHandler: (any RedirectHandler)? = nil,
        eventMonitors: [any EventMonitor] = []
    ) -> Session {
        session {
            Session(
                configuration: configuration, startRequestsImmediately: startRequestsImmediately,
                interceptor: interceptor, redirectHandler: redirectHandler, eventMonitors: eventMonitors)
        }
    }

    /// One attempt a session handed to the engine: what the request sent, what the request did to it, and the
    /// server's part, played by the test. Each event reaches the request on the calling thread, before the call
    /// returns, as an engine delivers it on its own thread.
    public final class Attempt: Sendable {
        private struct State {
            var calls: [String] = []
            var completesWhenCancelled = false
        }

        private let request: TransportRequest
        private let sink: any TransportSink
        private let state = Mutex(State())

        init(request: TransportRequest, sink: any TransportSink) {
            self.request = request
            self.sink = sink
        }

        /// The request as the session sent it: adapted, with its `URL` for this hop.
        public var urlRequest: URLRequest {
            request.urlRequest
        }

        /// The header fields as they went on the wire: the request's own, then the session's it does not override,
        /// with cookies and credentials; in order, repeated fields apart.
        public var headers: [(name: String, value: String)] {
            request.headers
        }

        /// `cancel`, `suspend` and `resume`, in the order the request called them on the attempt.
        public var taskCalls: [String] {
            state.withLock { $0.calls }
        }

        /// Makes `cancel()` end the attempt before it returns, as an engine may on its own thread: the tightest race
        /// between a cancel and the attempt's end.
        public func completeWhenCancelled() {
            state.withLock { $0.completesWhenCancelled = true }
        }

        /// Sends the response head (after the request head and body, which this also reports as sent).
        ///
        /// - Parameters:
        ///   - status:  The status code. 200 by default.
        ///   - headers: The header fields, in order.
        public func respond(status: Int = 200, headers: HTTPHeaders = [:]) {
            let url = request.urlRequest.url ?? URL(fileURLWithPath: "/")
            let head = ResponseHead(
                url: url, statusCode: status, httpVersion: "HTTP/1.1",
                fields: headers.map { (name: $0.name, value: $0.value) })
            sink.transportDidSendRequestHead()
            sink.transportDidSendRequest(hadBody: false)
            _ = sink.transportDidReceiveResponse(
                head, expectedBodyLength: -1, encodedBodyLength: .none, protocolName: "http/1.1",
                setCookieFields: headers.filter { $0.name.lowercased() == "set-cookie" }.map(\.value))
        }

        /// Ends the attempt with `body`, or fails it with `error` (as `AFError.sessionTaskFailed` unless it is an
        /// `AFError`, as a network failure arrives).
        ///
        /// - Parameters:
        ///   - body:  The whole body. Empty by default.
        ///   - error: The failure, if the attempt fails. `nil` by default.
        public func complete(body: Data = Data(), error: (any Error)? = nil) {
            if error == nil, !body.isEmpty { sink.transportDidReceiveBodyBytes(body.count) }
            sink.transportDidComplete(
                body: error == nil ? body : Data(),
                error: error.map { $0 as? AFError ?? .sessionTaskFailed(error: $0) })
        }

        /// A head, then the whole body: a successful exchange.
        ///
        /// - Parameters:
        ///   - status:  The status code. 200 by default.
        ///   - headers: The header fields.
        ///   - body:    The body, as UTF-8. Empty by default.
        public func succeed(status: Int = 200, headers: HTTPHeaders = [:], body: String = "") {
            respond(status: status, headers: headers)
            complete(body: Data(body.utf8))
        }

        fileprivate func record(_ call: String) -> Bool {
            state.withLock { state in
                state.calls.append(call)
                return call == "cancel" && state.completesWhenCancelled
            }
        }
    }
}

/// The engine a session is made on: hands each attempt to the test, in order, and waits with those waiting for one.
private final class Engine: HTTPTransport {
    private struct State {
        var attempts: [StubTransport.Attempt] = []
        var waiters: [(number: Int, continuation: CheckedContinuation<StubTransport.Attempt, Never>)] = []
    }

    private let state = Mutex(State())

    var attemptCount: Int {
        state.withLock { $0.attempts.count }
    }

    func execute(_ request: TransportRequest, sink: any TransportSink) -> any TransportTask {
        let attempt = StubTransport.Attempt(request: request, sink: sink)
        let ready = state.withLock { state in
            state.attempts.append(attempt)
            let count = state.attempts.count
            let ready = state.waiters.filter { $0.number <= count }
            state.waiters.removeAll { $0.number <= count }
            return ready.map { ($0.continuation, state.attempts[$0.number - 1]) }
        }
        for (continuation, handed) in ready { continuation.resume(returning: handed) }
        return Task(attempt: attempt)
    }

    func shutdown() {}

    func attempt(_ number: Int) async -> StubTransport.Attempt {
        await withCheckedContinuation { continuation in
            let handed = state.withLock { state -> StubTransport.Attempt? in
                if number >= 1, state.attempts.count >= number { return state.attempts[number - 1] }
                state.waiters.append((number, continuation))
                return nil
            }
            if let handed { continuation.resume(returning: handed) }
        }
    }

    /// What the request does to its attempt, recorded; a cancel may end the attempt at once.
    private struct Task: TransportTask {
        let attempt: StubTransport.Attempt

        func cancel() {
            if attempt.record("cancel") { attempt.complete(error: URLError(.cancelled)) }
        }

        func suspend() { _ = attempt.record("suspend") }

        func resume() { _ = attempt.record("resume") }
    }
}
