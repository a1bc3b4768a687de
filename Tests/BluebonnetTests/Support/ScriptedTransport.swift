@testable import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An engine whose every event the test sends by hand, so lifecycle races happen in exactly the order a test
/// names. Used only for those races; behaviour is tested over real sockets.
final class ScriptedTransport: HTTPTransport, @unchecked Sendable {
    // @unchecked: `attempts` and `waiters` are only touched under `lock`.
    private let lock = NSLock()
    private var attempts: [ScriptedAttempt] = []
    private var waiters: [(count: Int, continuation: CheckedContinuation<ScriptedAttempt, Never>)] = []

    func execute(_ request: TransportRequest, sink: any TransportSink) -> any TransportTask {
        let attempt = ScriptedAttempt(request: request, sink: sink)
        lock.lock()
        attempts.append(attempt)
        let count = attempts.count
        let ready = waiters.filter { $0.count <= count }.map { ($0.continuation, attempts[$0.count - 1]) }
        waiters.removeAll { $0.count <= count }
        lock.unlock()
        for (continuation, attempt) in ready { continuation.resume(returning: attempt) }
        return attempt
    }

    func shutdown() {}

    /// How many attempts the engine was handed.
    var attemptCount: Int {
        lock.lock(); defer { lock.unlock() }
        return attempts.count
    }

    /// The `number`-th attempt (from 1), once it has been handed over.
    func attempt(_ number: Int) async -> ScriptedAttempt {
        await withCheckedContinuation { continuation in
            lock.lock()
            if attempts.count >= number {
                let attempt = attempts[number - 1]
                lock.unlock()
                continuation.resume(returning: attempt)
                return
            }
            waiters.append((number, continuation))
            lock.unlock()
        }
    }

    /// A session on this engine.
    func session(
        startRequestsImmediately: Bool = true, interceptor: (any RequestInterceptor)? = nil,
        redirectHandler: (any RedirectHandler)? = nil, eventMonitors: [any EventMonitor] = []
    ) -> Session {
        Session.withTransport(self) {
            Session(
                startRequestsImmediately: startRequestsImmediately, interceptor: interceptor,
                redirectHandler: redirectHandler, eventMonitors: eventMonitors)
        }
    }
}

/// One attempt handed to the scripted engine: what the request asked for, what it did to the task, and the
/// controls that play the server's part.
final class ScriptedAttempt: TransportTask, @unchecked Sendable {
    // @unchecked: `calls` is only touched under `lock`.
    let request: TransportRequest
    private let sink: any TransportSink
    private let lock = NSLock()
    private var calls: [String] = []
    private var completesWhenCancelled = false

    init(request: TransportRequest, sink: any TransportSink) {
        self.request = request
        self.sink = sink
    }

    /// `cancel`, `suspend` and `resume`, in the order the request called them.
    var taskCalls: [String] {
        lock.lock(); defer { lock.unlock() }
        return calls
    }

    private func record(_ call: String) {
        lock.lock(); defer { lock.unlock() }
        calls.append(call)
    }

    /// Makes `cancel()` end the attempt before it returns, as an engine may on its own thread: the tightest race
    /// between a cancel and the attempt's end.
    func completeWhenCancelled() {
        lock.lock(); defer { lock.unlock() }
        completesWhenCancelled = true
    }

    func cancel() {
        record("cancel")
        lock.lock()
        let completes = completesWhenCancelled
        lock.unlock()
        if completes { complete(error: URLError(.cancelled)) }
    }
    func suspend() { record("suspend") }
    func resume() { record("resume") }

    /// Delivers a response head.
    func respond(status: Int = 200, headers: [String: String] = [:]) {
        let url = request.urlRequest.url ?? URL(string: "http://scripted.invalid/")!
        let response = ResponseHead(
            url: url, statusCode: status, httpVersion: "HTTP/1.1",
            fields: headers.map { (name: $0.key, value: $0.value) })
        sink.transportDidSendRequestHead()
        sink.transportDidSendRequest(hadBody: false)
        _ = sink.transportDidReceiveResponse(
            response, expectedBodyLength: -1, encodedBodyLength: .none, protocolName: "http/1.1", setCookieFields: [])
    }

    /// Ends the attempt with `body`, or with `error` (as `.sessionTaskFailed` unless it is an `AFError`).
    func complete(body: Data = Data(), error: (any Error)? = nil) {
        sink.transportDidComplete(body: body, error: error.map { $0 as? AFError ?? .sessionTaskFailed(error: $0) })
    }

    /// A head, then the whole body: a successful exchange.
    func succeed(status: Int = 200, headers: [String: String] = [:], body: String = "") {
        respond(status: status, headers: headers)
        complete(body: Data(body.utf8))
    }
}
