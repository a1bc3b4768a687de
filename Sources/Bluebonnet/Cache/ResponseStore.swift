import Foundation

/// Where a session's cache keeps responses: an `HTTPCache`, or any other `URLCache` through its public API.
protocol ResponseStore: Sendable {
    /// The largest body stored, in bytes.
    var largestEntry: Int { get }
    /// Whether anything may be stored for `key`; cheap, as every `GET` asks. `true` when the store cannot tell.
    func hasEntries(for key: String) -> Bool
    /// The stored variant the request's fields select, with its body. May read the disk.
    func lookup(key: String, headers: [(name: String, value: String)]) -> (CacheEntry, Data)?
    /// Stores a variant, replacing the one it matches. May write the disk.
    func store(_ entry: CacheEntry, body: Data, memoryOnly: Bool)
    /// Removes every variant of `key`.
    func invalidate(key: String)
}

extension Session.HTTPCache: ResponseStore {}

/// A `URLCache` other than `HTTPCache` (FoundationNetworking's own), used through `cachedResponse(for:)` and
/// `storeCachedResponse(_:for:)`. It keeps one response per URL, so the variant's `Vary` values travel in the
/// response's `userInfo` and a response for other values is a miss, never served. It also keys a URL by its host, port
/// and path alone, so `/a?x=1` and `/a?x=2` would replace each other: a URL with a query is stored twice, under its own
/// URL (where the cache's owner looks, and where the latest query wins, as on Linux) and under one whose path carries
/// the query (where the session looks first). Its memory store is quick; its disk
/// store took 80 ms a response when measured, which is why `URLCache.shared` is not used unless set on purpose.
struct FoundationResponseStore: ResponseStore, @unchecked Sendable {
    // `URLCache` is not marked `Sendable`; FoundationNetworking's takes a lock in every method.
    let cache: URLCache

    static let metadataKey = "org.bluebonnet.cache-entry"

    var largestEntry: Int { max(cache.memoryCapacity, cache.diskCapacity) / 8 }

    /// A memory-only cache is asked at once (microseconds, no file); one with a disk cannot be asked on the caller's
    /// thread, which may be an event loop, so it says "maybe".
    func hasEntries(for key: String) -> Bool {
        guard cache.diskCapacity == 0 else { return true }
        guard let url = URL(string: String(key.dropFirst(4))) else { return false }
        return Self.storageRequests(for: url).contains { cache.cachedResponse(for: $0) != nil }
    }

    private static let pathCharacters = CharacterSet.urlPathAllowed.subtracting(CharacterSet(charactersIn: "/?%;"))

    /// The requests a response for `url` is stored under: the one whose path carries the query first, if any.
    static func storageRequests(for url: URL) -> [URLRequest] {
        guard let query = url.query(percentEncoded: true),
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return [URLRequest(url: url)] }
        // Encoded again as a whole (its `%` too), so that it is valid in a path and no two queries meet.
        guard let encoded = query.addingPercentEncoding(withAllowedCharacters: Self.pathCharacters) else {
            return [URLRequest(url: url)]
        }
        components.percentEncodedQuery = nil
        components.percentEncodedPath += "%3F" + encoded
        guard let queryKeyed = components.url else { return [URLRequest(url: url)] }
        return [URLRequest(url: queryKeyed), URLRequest(url: url)]
    }

    func lookup(key: String, headers: [(name: String, value: String)]) -> (CacheEntry, Data)? {
        guard let url = URL(string: String(key.dropFirst(4))) else { return nil }
        return Self.storageRequests(for: url).lazy.compactMap { lookup(key: key, headers: headers, at: $0) }.first
    }

    private func lookup(key: String, headers: [(name: String, value: String)], at request: URLRequest) -> (
        CacheEntry, Data
    )? {
        guard let cached = cache.cachedResponse(for: request) else { return nil }
        let stored = (cached.userInfo?[Self.metadataKey] as? Data).flatMap {
            try? JSONDecoder().decode(CacheEntry.self, from: $0)
        }
        // Stored by someone else: its times are unknown, so it is treated as old (revalidated, never served as fresh).
        guard
            let entry = stored
                ?? CacheEntry(
                    cached: cached, key: key, requestHeaders: [:],
                    requestTime: .distantPast, responseTime: .distantPast),
            entry.key == key, entry.matches(headers)
        else { return nil }
        return (entry, cached.data)
    }

    func store(_ entry: CacheEntry, body: Data, memoryOnly: Bool) {
        guard body.count <= largestEntry,
            let metadata = try? JSONEncoder().encode(entry)
        else { return }
        var userInfo = entry.decodedUserInfo ?? [:]
        userInfo[Self.metadataKey] = metadata
        let cached = CachedURLResponse(
            response: entry.httpResponse(), data: body, userInfo: userInfo,
            storagePolicy: memoryOnly ? .allowedInMemoryOnly : .allowed)
        for request in Self.storageRequests(for: entry.url) { cache.storeCachedResponse(cached, for: request) }
    }

    func invalidate(key: String) {
        guard let url = URL(string: String(key.dropFirst(4))) else { return }
        for request in Self.storageRequests(for: url) { cache.removeCachedResponse(for: request) }
    }
}
