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

extension HTTPCache: ResponseStore {}

/// A `URLCache` other than `HTTPCache` (FoundationNetworking's own), used through `cachedResponse(for:)` and
/// `storeCachedResponse(_:for:)`. It keeps one response per URL, so the variant's `Vary` values travel in the
/// response's `userInfo` and a response for other values is a miss, never served. Its memory store is quick; its disk
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
        return cache.cachedResponse(for: URLRequest(url: url)) != nil
    }

    func lookup(key: String, headers: [(name: String, value: String)]) -> (CacheEntry, Data)? {
        guard let url = URL(string: String(key.dropFirst(4))),
            let cached = cache.cachedResponse(for: URLRequest(url: url))
        else {
            return nil
        }
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
        guard body.count <= largestEntry, let response = entry.httpResponse(),
            let metadata = try? JSONEncoder().encode(entry)
        else { return }
        var userInfo = entry.decodedUserInfo ?? [:]
        userInfo[Self.metadataKey] = metadata
        let cached = CachedURLResponse(
            response: response, data: body, userInfo: userInfo,
            storagePolicy: memoryOnly ? .allowedInMemoryOnly : .allowed)
        cache.storeCachedResponse(cached, for: URLRequest(url: entry.url))
    }

    func invalidate(key: String) {
        guard let url = URL(string: String(key.dropFirst(4))) else { return }
        cache.removeCachedResponse(for: URLRequest(url: url))
    }
}
