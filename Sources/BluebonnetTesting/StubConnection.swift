import Bluebonnet
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The server's side of one stubbed request, for a test that plays it by hand (`StubResponse.script`): send the head,
/// chunks and the end, or a failure or a redirect, in the order the test needs, and wait for the client to stop.
/// Each call after the load stopped, or after the end, does nothing.
public final class StubConnection: @unchecked Sendable {
    // @unchecked: `loader`, `ended` and `stopWaiters` are behind `lock`; the URLProtocol is only asked for its
    // client, which Bluebonnet's takes from any thread.
    private let lock = NSLock()
    private var loader: URLProtocol?
    private var ended = false
    private var stopped = false
    private var stopWaiters: [CheckedContinuation<Void, Never>] = []

    /// The request, as received.
    public let request: RecordedRequest

    init(loader: URLProtocol, request: RecordedRequest) {
        self.loader = loader
        self.request = request
    }

    /// Sends the response head.
    ///
    /// - Parameters:
    ///   - status:  The status code. 200 by default.
    ///   - headers: The header fields.
    public func respond(status: Int = 200, headers: HTTPHeaders = [:]) {
        let fields = Dictionary(headers.map { ($0.name, $0.value) }, uniquingKeysWith: { "\($0), \($1)" })
        guard let url = request.urlRequest.url,
            let response = HTTPURLResponse(url: url, statusCode: status, httpVersion: "HTTP/1.1", headerFields: fields)
        else { return }
        withClient { loader, client in client.urlProtocol(loader, didReceive: response, cacheStoragePolicy: .notAllowed)
        }
    }

    /// Sends a chunk of the body.
    public func send(_ chunk: Data) {
        withClient { loader, client in client.urlProtocol(loader, didLoad: chunk) }
    }

    /// Ends the response.
    public func finish() {
        withClient(ending: true) { loader, client in client.urlProtocolDidFinishLoading(loader) }
    }

    /// Fails the request with `error`, which the request reports as `AFError.sessionTaskFailed(error:)`.
    public func fail(_ error: any Error) {
        withClient(ending: true) { loader, client in client.urlProtocol(loader, didFailWithError: error) }
    }

    /// Redirects the request to `url`, which the session follows by its rules.
    public func redirect(to url: URL, status: Int = 302) {
        guard let from = request.urlRequest.url,
            let response = HTTPURLResponse(url: from, statusCode: status, httpVersion: "HTTP/1.1", headerFields: [:])
        else { return }
        withClient(ending: true) { loader, client in
            client.urlProtocol(loader, wasRedirectedTo: URLRequest(url: url), redirectResponse: response)
        }
    }

    /// Whether the client stopped the load (cancelled, timed out, or done with it).
    public var isStopped: Bool { lock.withLock { stopped } }

    /// Returns once the client stops the load: a barrier for tests of cancellation and timeouts.
    public func waitUntilStopped() async {
        await withCheckedContinuation { continuation in
            let now = lock.withLock {
                if stopped { return true }
                stopWaiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }

    func didStop() {
        let waiters = lock.withLock {
            stopped = true
            loader = nil
            defer { stopWaiters = [] }
            return stopWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private func withClient(ending: Bool = false, _ body: (URLProtocol, any URLProtocolClient) -> Void) {
        let current = lock.withLock { () -> URLProtocol? in
            guard !ended, !stopped else { return nil }
            if ending { ended = true }
            return loader
        }
        guard let current, let client = current.client else { return }
        body(current, client)
    }
}
