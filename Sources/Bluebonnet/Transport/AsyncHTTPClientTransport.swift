import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The default engine: one `HTTPClient` per `Session`, redirects off (the `Request` follows them itself so a
/// `RedirectHandler` sees every hop), gzip/deflate decoding with a ratio limit.
final class AsyncHTTPClientTransport: HTTPTransport {
    /// Decompressed bytes allowed per compressed byte, so a tiny gzip bomb cannot fill memory.
    static let decompressionRatioLimit = 200

    let client: HTTPClient
    /// Set before the client is shut down, so a request that raced the shutdown knows to watch its task.
    private let isShuttingDown = Atomic<Bool>(false)

    init(configuration: TransportConfiguration) {
        var config = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: HTTPClient.Configuration.Timeout(
                connect: Self.timeAmount(min(configuration.requestTimeout, 60)),
                read: Self.timeAmount(configuration.requestTimeout)
            ),
            decompression: .enabled(limit: .ratio(Self.decompressionRatioLimit))
        )
        config.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = configuration.maximumConnectionsPerHost
        // A refused or unresolvable host fails the request at once, as URLSession does, rather than retrying
        // until the timeout.
        config.connectionPool.retryConnectionEstablishment = false
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: config)
    }

    static func timeAmount(_ interval: TimeInterval) -> TimeAmount {
        .nanoseconds(Int64(max(0, min(interval, 1e9)) * 1_000_000_000))
    }

    func execute(_ request: TransportRequest, sink: any TransportSink) -> any TransportTask {
        let urlRequest = request.urlRequest
        let ahcRequest: HTTPClient.Request
        let delegate: AHCResponseDelegate
        do {
            guard let url = urlRequest.url else { throw HTTPClientError.invalidURL }
            var headers = NIOHTTP1.HTTPHeaders()
            headers.reserveCapacity(request.headers.count)
            for (name, value) in request.headers { headers.add(name: name, value: value) }
            let methodName = urlRequest.httpMethod ?? "GET"
            let method = NIOHTTP1.HTTPMethod(rawValue: methodName)
            delegate = AHCResponseDelegate(url: url, sink: sink, idleTimeout: request.idleTimeout, hasUploadBody: request.body != nil,
                                           maximumBodySize: request.maximumBodySize, method: methodName)
            let body = request.body.map { AHCBodyStreamer.body(for: $0, eventLoopGroup: client.eventLoopGroup, gate: delegate) }
                ?? urlRequest.httpBody.map { .bytes($0) }
            ahcRequest = try HTTPClient.Request(url: url, method: method, headers: headers, body: body)
        } catch {
            sink.transportDidComplete(body: Data(), error: TransportErrorMapper.afError(from: error))
            return CompletedTransportTask()
        }
        let deadline = request.deadline.map { NIODeadline.now() + Self.timeAmount($0.timeIntervalSinceNow) }
        // `.indifferent`, measured: pinning delegate and channel to one loop (`.delegateAndChannel`) halves W2's
        // throughput, because the pool must then open and balance connections per loop.
        let task = client.execute(request: ahcRequest, delegate: delegate, eventLoop: .indifferent, deadline: deadline, logger: request.logger)
        delegate.attach(task)
        // Checked after `execute`: a client that refused the request was shutting down, and the flag was set
        // before that began. Only then is the task's own result watched, so a live session pays nothing for it.
        if isShuttingDown.load(ordering: .sequentiallyConsistent) { delegate.reportFailureOfTaskWithoutDelegate(task) }
        return AHCTransportTask(task: task, delegate: delegate)
    }

    func shutdown() {
        isShuttingDown.store(true, ordering: .sequentiallyConsistent)
        client.shutdown { _ in }
    }
}

/// What the engine takes from `URLSessionConfiguration`.
struct TransportConfiguration: Sendable {
    var requestTimeout: TimeInterval
    var maximumConnectionsPerHost: Int
}

/// A running AsyncHTTPClient request.
struct AHCTransportTask: TransportTask {
    let task: HTTPClient.Task<Void>
    let delegate: AHCResponseDelegate

    func cancel() { task.cancel() }
    func suspend() { delegate.suspend() }
    func resume() { delegate.resume() }
}

/// An attempt that failed before it reached the engine; its sink has been told already.
struct CompletedTransportTask: TransportTask {
    func cancel() {}
    func suspend() {}
    func resume() {}
}
