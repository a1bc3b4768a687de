import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A private HTTP cache (RFC 9111) in front of the engine: answers from `HTTPCache` when a stored response may be
/// used, revalidates one that is stale, stores what may be stored, and invalidates a URL an unsafe method changed.
///
/// Only `GET` is served and stored. A request with `Range` or its own conditional fields is left to the network, as
/// it manages validation itself. Lookups that may read the disk, stores and the `CachedResponseHandler` run on a
/// global queue, never on an event loop; a request with nothing stored under its URL pays one dictionary lookup.
struct CachingTransport: HTTPTransport {
    let base: any HTTPTransport
    let cache: any ResponseStore
    /// `URLSessionConfiguration.requestCachePolicy`, for requests that leave theirs at `.useProtocolCachePolicy`.
    let defaultPolicy: URLRequest.CachePolicy

    private static let conditionalFields = [
        "if-none-match", "if-modified-since", "if-match", "if-unmodified-since", "if-range",
    ]

    func execute(_ request: TransportRequest, sink: any TransportSink) -> any TransportTask {
        let method = (request.urlRequest.httpMethod ?? "GET").uppercased()
        guard let url = request.urlRequest.url, let key = CacheEntry.key(for: url) else {
            return base.execute(request, sink: sink)
        }
        // Other methods go to the network; `CacheInvalidationStep` forgets what an unsafe one changed.
        guard method == "GET" else { return base.execute(request, sink: sink) }
        let requestControl = CacheControl(
            Self.field("cache-control", in: request.headers), pragma: Self.field("pragma", in: request.headers))
        let managesItself = request.headers.contains {
            Self.conditionalFields.contains($0.name.lowercased()) || $0.name.lowercased() == "range"
        }
        if requestControl.noStore || managesItself { return base.execute(request, sink: sink) }
        let policy =
            request.urlRequest.cachePolicy == .useProtocolCachePolicy ? defaultPolicy : request.urlRequest.cachePolicy
        let context = CacheSink.Context(
            cache: cache, key: key, request: request, decision: request.features[CacheDecisionKey.self])
        switch policy {
        case .reloadIgnoringLocalCacheData, .reloadIgnoringLocalAndRemoteCacheData:
            return network(request, sink: sink, context: context)
        default:
            break
        }
        // `only-if-cached` (RFC 9111 §5.2.1.7): the cache answers or the request fails, as `.returnCacheDataDontLoad`.
        let cacheOnly = requestControl.onlyIfCached || policy == .returnCacheDataDontLoad
        guard cache.hasEntries(for: key) else {
            return miss(request, sink: sink, context: context, cacheOnly: cacheOnly)
        }
        // Something is stored: the lookup may read a file, so it runs off the caller's thread (an event loop, when an
        // adapter calls back on one).
        let task = DeferredTransportTask()
        Offload.run {
            guard !task.isCancelled else {
                sink.transportDidComplete(body: Data(), error: .sessionTaskFailed(error: URLError(.cancelled)))
                return
            }
            task.attach(
                decide(
                    request, sink: sink, context: context, policy: policy, requestControl: requestControl,
                    cacheOnly: cacheOnly))
        }
        return task
    }

    func shutdown() {
        base.shutdown()
    }

    func shutdownGracefully() async {
        await base.shutdownGracefully()
    }

    /// Answers from the stored variant, revalidates it, or goes to the network.
    private func decide(
        _ request: TransportRequest, sink: any TransportSink, context: CacheSink.Context,
        policy: URLRequest.CachePolicy, requestControl: CacheControl, cacheOnly: Bool
    ) -> any TransportTask {
        guard let (entry, body) = cache.lookup(key: context.key, headers: request.headers) else {
            return miss(request, sink: sink, context: context, cacheOnly: cacheOnly)
        }
        let now = Date()
        let age = CacheFreshness.currentAge(of: entry, now: now)
        switch policy {
        case .returnCacheDataElseLoad, .returnCacheDataDontLoad:
            return replay(entry, body: body, age: age, sink: sink)
        case .reloadRevalidatingCacheData:
            return revalidate(entry, body: body, request: request, sink: sink, context: context)
        default:
            break
        }
        let responseControl = CacheControl(entry.field("Cache-Control"))
        if requestControl.noCache || responseControl.noCache {
            return revalidate(entry, body: body, request: request, sink: sink, context: context)
        }
        let lifetime = CacheFreshness.lifetime(of: entry)
        var usable = lifetime > age
        if let maxAge = requestControl.maxAge, age > TimeInterval(maxAge) { usable = false }
        if let minFresh = requestControl.minFresh, lifetime - age < TimeInterval(minFresh) { usable = false }
        if !usable, let maxStale = requestControl.maxStale, !responseControl.mustRevalidate, lifetime <= age,
            age - lifetime <= TimeInterval(maxStale)
        {
            usable = true
        }
        if usable { return replay(entry, body: body, age: age, sink: sink) }
        if cacheOnly { return miss(request, sink: sink, context: context, cacheOnly: true) }
        return revalidate(entry, body: body, request: request, sink: sink, context: context)
    }

    private func replay(_ entry: CacheEntry, body: Data, age: TimeInterval, sink: any TransportSink)
        -> any TransportTask
    {
        let replay = CachedResponseReplay(
            entry: entry, body: body, age: Int(min(age, TimeInterval(Int32.max))), fromCache: true, sink: sink)
        replay.start()
        return replay
    }

    /// A conditional request with the stored validators; without any, a plain one.
    private func revalidate(
        _ entry: CacheEntry, body: Data, request: TransportRequest, sink: any TransportSink,
        context: CacheSink.Context
    ) -> any TransportTask {
        guard CacheFreshness.hasValidator(entry) else { return network(request, sink: sink, context: context) }
        var conditional = request
        if let etag = entry.field("ETag") { conditional.headers.append(("If-None-Match", etag)) }
        if let lastModified = entry.field("Last-Modified") {
            conditional.headers.append(("If-Modified-Since", lastModified))
        }
        var validating = context
        validating.stored = (entry, body)
        return base.execute(conditional, sink: CacheSink(sink: sink, context: validating))
    }

    /// Nothing usable is stored.
    private func miss(_ request: TransportRequest, sink: any TransportSink, context: CacheSink.Context, cacheOnly: Bool)
        -> any TransportTask
    {
        guard !cacheOnly else {
            // URLSession's answer when the cache must answer and cannot.
            sink.transportDidComplete(body: Data(), error: .sessionTaskFailed(error: URLError(.resourceUnavailable)))
            return CompletedTransportTask()
        }
        return network(request, sink: sink, context: context)
    }

    private func network(_ request: TransportRequest, sink: any TransportSink, context: CacheSink.Context)
        -> any TransportTask
    {
        base.execute(request, sink: CacheSink(sink: sink, context: context))
    }

    static func field(_ name: String, in headers: [(name: String, value: String)]) -> String? {
        let values = headers.filter { $0.name.lowercased() == name }.map(\.value)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }
}

/// A task whose real task is made later (after a lookup off the caller's thread); what happens to it meanwhile is
/// passed on when it arrives.
final class DeferredTransportTask: TransportTask {
    private struct State {
        var task: (any TransportTask)?
        var cancelled = false
        var suspended = false
    }

    private let state = Protected(State())

    var isCancelled: Bool { state.read { $0.cancelled } }

    func attach(_ task: any TransportTask) {
        let (cancelled, suspended) = state.write { state in
            state.task = task
            return (state.cancelled, state.suspended)
        }
        if cancelled { task.cancel() } else if suspended { task.suspend() }
    }

    func cancel() {
        state.write { state -> (any TransportTask)? in
            state.cancelled = true
            return state.task
        }?.cancel()
    }

    func suspend() {
        state.write { state -> (any TransportTask)? in
            state.suspended = true
            return state.task
        }?.suspend()
    }

    func resume() {
        state.write { state -> (any TransportTask)? in
            state.suspended = false
            return state.task
        }?.resume()
    }
}
