import Foundation

/// RFC 9111's arithmetic for a stored response: its freshness lifetime (§4.2.1, with the 10% heuristic of §4.2.2)
/// and its current age (§4.2.3).
enum CacheFreshness {
    /// Status codes a cache may store and give a heuristic lifetime (RFC 9110 §15.1).
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]
    /// The longest heuristic lifetime given, whatever the dates say.
    static let maximumHeuristicLifetime: TimeInterval = 7 * 86400

    /// How long the response is fresh for, in seconds; 0 when it never is.
    static func lifetime(of entry: CacheEntry) -> TimeInterval {
        let control = CacheControl(entry.field("Cache-Control"))
        if let maxAge = control.maxAge { return TimeInterval(maxAge) }
        let date = entry.field("Date").flatMap { HTTPDate.parse($0) } ?? Date(timeIntervalSince1970: entry.responseTime)
        if let expires = entry.field("Expires") {
            // An `Expires` that does not parse (`0`, `-1`) means already expired (§5.3).
            guard let expiry = HTTPDate.parse(expires) else { return 0 }
            return max(0, expiry.timeIntervalSince(date))
        }
        guard heuristicallyCacheable.contains(entry.statusCode) || control.isPublic,
            let lastModified = entry.field("Last-Modified").flatMap({ HTTPDate.parse($0) })
        else { return 0 }
        return min(maximumHeuristicLifetime, max(0, date.timeIntervalSince(lastModified) / 10))
    }

    /// How old the response is at `now`, in seconds: what it was when it arrived (the larger of what `Date` and
    /// `Age` say), plus how long it has been stored.
    static func currentAge(of entry: CacheEntry, now: Date) -> TimeInterval {
        let ageValue =
            entry.field("Age").flatMap { CacheControl.deltaSeconds(String($0.trimmingWhitespace())) }.map(
                TimeInterval.init) ?? 0
        let dateValue = entry.field("Date").flatMap { HTTPDate.parse($0) }?.timeIntervalSince1970 ?? entry.responseTime
        let apparentAge = max(0, entry.responseTime - dateValue)
        let responseDelay = max(0, entry.responseTime - entry.requestTime)
        let correctedInitialAge = max(apparentAge, ageValue + responseDelay)
        return correctedInitialAge + max(0, now.timeIntervalSince1970 - entry.responseTime)
    }

    /// Whether the response carries a validator a conditional request can use.
    static func hasValidator(_ entry: CacheEntry) -> Bool {
        entry.field("ETag") != nil || entry.field("Last-Modified") != nil
    }
}
