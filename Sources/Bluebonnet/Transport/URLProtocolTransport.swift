import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Lets the `URLProtocol` classes of a session's configuration (`URLSessionConfiguration.protocolClasses`) answer
/// requests, as URLSession does: each hop is offered to the classes in order (`canInit(with:)`), and the first that
/// accepts serves it in process through a `URLProtocolClient` of Bluebonnet's; a hop no class accepts goes to the
/// engine underneath. This is how OHHTTPStubs-, Mocker- and Mockingjay-style stubs work with Bluebonnet.
///
/// The protocol sees the request as it would go on the wire: adapted, with the session's headers, cookies and
/// credentials, and the upload's body as `httpBody` (bytes in memory, or a compressed body) or `httpBodyStream` (a
/// file or a stream). What it reports becomes the hop's response: a redirect (`wasRedirectedTo`) is a 3xx with the
/// new URL as `Location`, which the session's redirect rules and `RedirectHandler` then follow; a failure is
/// `AFError.sessionTaskFailed` with its error; a cached response it declares valid is served as one. The session's
/// request timeout and resource deadline apply, and `stopLoading()` is called on cancellation and timeout. Metrics
/// name the class that answered as the hop's `networkProtocolName`.
struct URLProtocolTransport: HTTPTransport {
    let base: any HTTPTransport
    /// The classes asked, in order.
    let protocolClasses: [URLProtocol.Type]
    /// The session's idle timeout, when the request sets none tighter.
    let requestTimeout: TimeInterval

    /// The classes of `configuration` that are not FoundationNetworking's own (its HTTP, FTP and WebSocket
    /// protocols, which would take every request); `nil` when none is left.
    static func protocolClasses(of configuration: URLSessionConfiguration) -> [URLProtocol.Type]? {
        let classes = (configuration.protocolClasses ?? []).compactMap { $0 as? URLProtocol.Type }.filter {
            !String(reflecting: $0).hasPrefix("FoundationNetworking.")
        }
        return classes.isEmpty ? nil : classes
    }

    func execute(_ request: TransportRequest, sink: any TransportSink) -> any TransportTask {
        var sent: URLRequest
        do {
            sent = try Self.requestAsSent(request, codingBody: false)
        } catch {
            sink.transportDidComplete(body: Data(), error: error.asAFError(or: .createUploadableFailed(error: error)))
            return CompletedTransportTask()
        }
        // `canInit` is the user's code: it is asked where the hop is sent from (the request's queues), never on an
        // event loop.
        Confinement.assertOffEventLoop("A URLProtocol's canInit(with:)")
        guard let answering = protocolClasses.first(where: { $0.canInit(with: sent) }) else {
            return base.execute(request, sink: sink)
        }
        // A compressed body is made only for a protocol that takes the hop: the network streams it instead.
        if request.body?.coding != nil {
            do {
                sent = try Self.requestAsSent(request, codingBody: true)
            } catch {
                sink.transportDidComplete(
                    body: Data(), error: error.asAFError(or: .createUploadableFailed(error: error)))
                return CompletedTransportTask()
            }
        }
        let task = URLProtocolTask(
            protocolClass: answering, request: answering.canonicalRequest(for: sent),
            hadBody: request.body != nil || sent.httpBody != nil,
            idleTimeout: min(request.idleTimeout ?? requestTimeout, requestTimeout),
            deadline: request.deadline, maximumBodySize: request.maximumBodySize, sink: sink)
        task.start()
        return task
    }

    func shutdown() {
        base.shutdown()
    }

    func shutdownGracefully() async {
        await base.shutdownGracefully()
    }

    /// `request` as the engine would send it: its wire headers, and its body in `httpBody` or `httpBodyStream`. A
    /// coded (compressed) body is read whole into `httpBody` when `codingBody`, else left out.
    static func requestAsSent(_ request: TransportRequest, codingBody: Bool) throws -> URLRequest {
        var sent = request.urlRequest
        var fields: [String: String] = [:]
        for (name, value) in request.headers {
            let key = fields.keys.first { $0.caseInsensitiveCompare(name) == .orderedSame } ?? name
            fields[key] = fields[key].map { "\($0), \(value)" } ?? value
        }
        sent.allHTTPHeaderFields = fields
        guard let body = request.body else { return sent }
        sent.httpBody = nil
        switch (body.source, body.coding) {
        case let (.data(data), nil):
            sent.httpBody = data
        case let (.file(url), nil):
            guard let stream = InputStream(url: url) else { throw URLError(.fileDoesNotExist) }
            sent.httpBodyStream = stream
        case let (.stream(stream), nil):
            sent.httpBodyStream = stream
        case (_, _?):
            guard codingBody else { break }
            // A coded (compressed) body exists only as the reader makes it: read whole, for the protocol to see.
            let reader = try body.makeReader()
            defer { reader.close() }
            var coded = Data()
            while case let chunk = try reader.read(upTo: 256 * 1024), !chunk.isEmpty { coded.append(chunk) }
            sent.httpBody = coded
        }
        return sent
    }
}

/// One hop served by a `URLProtocol`: its client calls become the sink's, in order, on one serial queue that is never
/// an event loop; a body that streams waits for the consumer between chunks, buffering what the protocol sends
/// meanwhile.
final class URLProtocolTask: NSObject, URLProtocolClient, TransportTask, @unchecked Sendable {
    // @unchecked: everything mutable below is touched only on `queue`, which serialises it; the rest is immutable.
    private enum Event {
        case response(URLResponse)
        case data(Data)
        case finished
        case failed(any Error)
        case redirected(URLRequest, URLResponse)
        case cached(CachedURLResponse)
    }

    private let protocolClass: URLProtocol.Type
    private let request: URLRequest
    private let hadBody: Bool
    private let idleTimeout: TimeInterval
    private let deadline: Date?
    private let maximumBodySize: Int64?
    private let sink: any TransportSink
    private let queue = DispatchQueue(label: "org.bluebonnet.urlprotocol", target: Offload.queue)

    // On `queue` only.
    private var loader: URLProtocol?
    private var events: [Event] = []
    private var waitingForConsumer = false
    private var suspended = false
    private var completed = false
    private var receivedHead = false
    private var streams = false
    private var limit: Int64?
    private var body = Data()
    private var lastActivity = Date()

    init(
        protocolClass: URLProtocol.Type, request: URLRequest, hadBody: Bool, idleTimeout: TimeInterval,
        deadline: Date?, maximumBodySize: Int64?, sink: any TransportSink
    ) {
        self.protocolClass = protocolClass
        self.request = request
        self.hadBody = hadBody
        self.idleTimeout = idleTimeout
        self.deadline = deadline
        self.maximumBodySize = maximumBodySize
        self.sink = sink
        limit = maximumBodySize
    }

    func start() {
        queue.async { [self] in
            Confinement.assertOffEventLoop("A URLProtocol")
            guard !completed else { return }
            sink.transportDidSendRequestHead()
            if let length = request.httpBody?.count, length > 0 { sink.transportDidSendBodyBytes(length) }
            sink.transportDidSendRequest(hadBody: hadBody)
            let loader = protocolClass.init(request: request, cachedResponse: nil, client: self)
            self.loader = loader
            lastActivity = Date()
            armIdleTimer()
            if let deadline {
                queue.asyncAfter(deadline: .now() + max(0, deadline.timeIntervalSinceNow)) { [weak self] in
                    self?.timeOut()
                }
            }
            loader.startLoading()
        }
    }

    // MARK: - URLProtocolClient (any thread)

    func urlProtocol(_ protocol: URLProtocol, wasRedirectedTo request: URLRequest, redirectResponse: URLResponse) {
        enqueue(.redirected(request, redirectResponse))
    }

    func urlProtocol(_ protocol: URLProtocol, cachedResponseIsValid cachedResponse: CachedURLResponse) {
        enqueue(.cached(cachedResponse))
    }

    func urlProtocol(
        _ protocol: URLProtocol, didReceive response: URLResponse, cacheStoragePolicy policy: URLCache.StoragePolicy
    ) {
        enqueue(.response(response))
    }

    func urlProtocol(_ protocol: URLProtocol, didLoad data: Data) {
        enqueue(.data(data))
    }

    func urlProtocolDidFinishLoading(_ protocol: URLProtocol) {
        enqueue(.finished)
    }

    func urlProtocol(_ protocol: URLProtocol, didFailWithError error: any Error) {
        enqueue(.failed(error))
    }

    func urlProtocol(_ protocol: URLProtocol, didReceive challenge: URLAuthenticationChallenge) {
        // Challenges are answered from the response's `WWW-Authenticate`, not asked of a protocol: a protocol that
        // asks gets no answer and is expected to finish the load with its 401.
    }

    func urlProtocol(_ protocol: URLProtocol, didCancel challenge: URLAuthenticationChallenge) {}

    // MARK: - TransportTask

    func cancel() {
        queue.async { [self] in finish(error: .sessionTaskFailed(error: URLError(.cancelled))) }
    }

    func suspend() {
        queue.async { [self] in suspended = true }
    }

    func resume() {
        queue.async { [self] in
            suspended = false
            drain()
        }
    }

    // MARK: - On the queue

    private func enqueue(_ event: Event) {
        queue.async { [self] in
            guard !completed else { return }
            events.append(event)
            lastActivity = Date()
            drain()
        }
    }

    private func drain() {
        while !completed, !waitingForConsumer, !suspended, !events.isEmpty {
            handle(events.removeFirst())
        }
    }

    private func handle(_ event: Event) {
        switch event {
        case let .response(response):
            receiveHead(response)
        case let .data(data):
            receive(data)
        case .finished:
            finish(body: streams ? Data() : body, error: nil)
        case let .failed(error):
            finish(error: (error as? AFError) ?? .sessionTaskFailed(error: error))
        case let .redirected(newRequest, response):
            redirect(to: newRequest, response: response)
        case let .cached(cached):
            sink.transportWillServeFromCache()
            events.insert(contentsOf: [.response(cached.response), .data(cached.data), .finished], at: 0)
        }
    }

    private func receiveHead(_ response: URLResponse) {
        // Only the first head counts; a response that is not HTTP (a custom scheme's) has no head, as a file: URL.
        guard !receivedHead else { return }
        receivedHead = true
        guard let http = response as? HTTPURLResponse else { return }
        let reply = sink.transportDidReceiveResponse(
            ResponseHead(http), expectedBodyLength: http.expectedContentLength, encodedBodyLength: .none,
            protocolName: String(describing: protocolClass),
            setCookieFields: http.value(forHTTPHeaderField: "Set-Cookie").map { [$0] } ?? [])
        streams = reply.streamsBody
        // A streamed body goes to disk or to a consumer, so the memory limit does not apply to it.
        limit = streams ? nil : maximumBodySize
        if let limit, http.expectedContentLength > limit {
            return finish(error: .responseLimitExceeded(reason: .maximumResponseSizeExceeded(limit: limit)))
        }
        guard let hold = reply.hold else { return }
        waitForConsumer(hold)
    }

    private func receive(_ data: Data) {
        guard !data.isEmpty else { return }
        receivedHead = true
        if let limit, Int64(body.count) + Int64(data.count) > limit {
            body = Data()
            return finish(error: .responseLimitExceeded(reason: .maximumResponseSizeExceeded(limit: limit)))
        }
        sink.transportDidReceiveBodyBytes(data.count)
        guard streams else {
            body.append(data)
            return
        }
        waitForConsumer { readiness in self.sink.transportDidReceiveBodyChunk(data, readiness: readiness) }
    }

    /// Stops handling events until the consumer settles the readiness handed to `ask`.
    private func waitForConsumer(_ ask: (TransportReadiness) -> Void) {
        waitingForConsumer = true
        ask(
            TransportReadiness { [self] error in
                queue.async { [self] in
                    if let error { return finish(error: error) }
                    waitingForConsumer = false
                    lastActivity = Date()
                    drain()
                }
            })
    }

    /// A redirect the protocol reported: a 3xx whose `Location` is the new request's URL, for the session to follow.
    private func redirect(to newRequest: URLRequest, response: URLResponse) {
        guard let url = newRequest.url else {
            return finish(error: .sessionTaskFailed(error: URLError(.badURL)))
        }
        let original = response as? HTTPURLResponse
        let status = original.map(\.statusCode).flatMap { (300..<400).contains($0) ? $0 : nil } ?? 302
        var fields = (original?.allHeaderFields as? [String: String]) ?? [:]
        for key in fields.keys where key.caseInsensitiveCompare("Location") == .orderedSame { fields[key] = nil }
        fields["Location"] = url.absoluteString
        guard
            let redirect = HTTPURLResponse(
                url: response.url ?? request.url ?? url, statusCode: status, httpVersion: "HTTP/1.1",
                headerFields: fields)
        else { return finish(error: .sessionTaskFailed(error: URLError(.badServerResponse))) }
        events = [.response(redirect), .finished]
        receivedHead = false
    }

    private func armIdleTimer() {
        let wait = max(0, idleTimeout - Date().timeIntervalSince(lastActivity))
        queue.asyncAfter(deadline: .now() + wait) { [weak self] in
            guard let self, !completed else { return }
            // The consumer's own wait is not the protocol's idleness.
            if waitingForConsumer || suspended { lastActivity = Date() }
            if Date().timeIntervalSince(lastActivity) >= idleTimeout { return timeOut() }
            armIdleTimer()
        }
    }

    private func timeOut() {
        finish(error: .sessionTaskFailed(error: URLError(.timedOut)))
    }

    /// Ends the hop once: stops the protocol and tells the sink.
    private func finish(body: Data = Data(), error: AFError?) {
        guard !completed else { return }
        completed = true
        events = []
        self.body = Data()
        if let loader {
            self.loader = nil
            loader.stopLoading()
        }
        sink.transportDidComplete(body: body, error: error)
    }
}
