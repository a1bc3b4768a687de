import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The request's own cached response handler, set by `cacheResponse(using:)`; it prevails over the session's.
enum CachedResponseHandlerOverride: FeatureKey {
    typealias Value = any CachedResponseHandler
}

/// What the cache asks before it stores a response: the handler's answer, with the request it belongs to.
struct CacheDecision: Sendable {
    let decide:
        @Sendable (_ proposed: CachedURLResponse, _ completion: @escaping @Sendable (CachedURLResponse?) -> Void) ->
            Void
}

/// The hop's `CacheDecision`, set on the `TransportRequest` for `CachingTransport`.
enum CacheDecisionKey: FeatureKey {
    typealias Value = CacheDecision
}

/// Hands each hop the handler that decides what the cache stores of it: the request's, else the session's.
struct CacheHandlerPreparer: HopPreparing {
    let sessionHandler: (any CachedResponseHandler)?

    func prepare(_ hop: inout TransportRequest, of request: Request, features: FeatureValues) {
        let handler = features[CachedResponseHandlerOverride.self] ?? sessionHandler
        // A monitor hears of the proposal before the handler decides, as URLSession tells Alamofire's delegate.
        let monitored = request.sessionMonitoredEvents.contains(.other)
        guard handler != nil || monitored else { return }
        hop.features[CacheDecisionKey.self] = CacheDecision { proposed, completion in
            if monitored { request.tellWillCacheResponse(proposed) }
            guard let handler else { return completion(proposed) }
            handler.request(request, willCacheResponse: proposed, completion: completion)
        }
    }
}

/// After a successful unsafe method, invalidates the stored responses of its URL and of the `Location` and
/// `Content-Location` it names on the same origin (RFC 9111 §4.4), before the body is read, so no request made after
/// completion finds the old response; off the event loop, as a store may touch its files.
struct CacheInvalidationStep: ResponseHeadStep {
    let cache: any ResponseStore

    private static let safeMethods: Set<String> = ["GET", "HEAD", "OPTIONS", "TRACE"]

    func work(for head: ResponseHeadFacts) -> HeadWork? {
        // The status and fields from the head itself: an `HTTPURLResponse` is made only for a caller who reads one.
        guard (200..<400).contains(head.head.statusCode), let request = head.hopRequest, let url = request.url,
            !Self.safeMethods.contains((request.httpMethod ?? "GET").uppercased())
        else { return nil }
        var targets = [url]
        for name in ["Location", "Content-Location"] {
            guard let value = head.head.value(for: name),
                let target = URL(string: value, relativeTo: url)?.absoluteURL,
                Origin.same(url, target)
            else { continue }
            targets.append(target)
        }
        let keys = targets.compactMap(CacheEntry.key(for:))
        guard !keys.isEmpty else { return nil }
        return { [cache] _, done in
            for key in keys { cache.invalidate(key: key) }
            done(nil)
        }
    }
}

extension Request {
    /// Sets the cached response handler for this request, overriding the session's: it decides what the session's
    /// cache (its configuration's `urlCache`) stores of this request's responses.
    ///
    /// - Parameter handler: The `CachedResponseHandler`.
    /// - Returns: The instance.
    @discardableResult
    public func cacheResponse(using handler: any CachedResponseHandler) -> Self {
        setFeature(CachedResponseHandlerOverride.self, to: handler)
        return self
    }

    /// The cached response handler set with `cacheResponse(using:)`, which overrides the session's; `nil` when none
    /// was set.
    public var cachedResponseHandler: (any CachedResponseHandler)? { feature(CachedResponseHandlerOverride.self) }
}
