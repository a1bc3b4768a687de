import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// RFC 6265 between a session and its `HTTPCookieStorage`: which `Set-Cookie` fields are stored and how, and which
/// cookies go with each request.
///
/// The storage stays the one place cookies live, so code that reads or sets `HTTPCookieStorage` directly (as
/// Alamofire users do) sees what the session sees. FoundationNetworking's own matching is by domain only; this one
/// applies host-only and domain cookies, paths, `Secure`, expiry and the Public Suffix List. A host-only cookie is
/// stored with its host as `domain`, a domain cookie with a leading dot, which is how Foundation tells them apart.
struct CookieJar: @unchecked Sendable {
    // `HTTPCookieStorage` is not marked `Sendable`, but every method of it takes its own lock.
    let storage: HTTPCookieStorage
    /// Whether requests carry the storage's cookies: `URLSessionConfiguration.httpShouldSetCookies`.
    let sendsCookies: Bool
    /// `URLSessionConfiguration.httpCookieAcceptPolicy`.
    let acceptPolicy: HTTPCookie.AcceptPolicy
    /// The writer of a storage that rewrites a file on every change (`HTTPCookieStorage.shared`), found once here
    /// rather than on every request; `nil` for a storage written at once.
    let writer: PendingCookieWrites?

    init(storage: HTTPCookieStorage, sendsCookies: Bool, acceptPolicy: HTTPCookie.AcceptPolicy) {
        self.storage = storage
        self.sendsCookies = sendsCookies
        self.acceptPolicy = acceptPolicy
        writer = PendingCookieWrites.isPersistent(storage) ? PendingCookieWrites.writer(for: storage) : nil
    }

    /// The storage's cookies, with changes not yet written to a persistent storage.
    var currentCookies: [HTTPCookie] {
        let stored = storage.cookies ?? []
        return writer?.applied(to: stored) ?? stored
    }

    /// The most `Set-Cookie` fields read from one response; the rest are ignored.
    static let maximumFieldsPerResponse = 50
    /// The most cookies kept for one registrable domain; the oldest go first.
    static let maximumCookiesPerDomain = 180
    /// The most cookies kept in all; the oldest go first.
    static let maximumCookies = 3000
    /// The longest a cookie lives, whatever the server says (RFC 6265bis: 400 days).
    static let maximumLifetime: TimeInterval = 400 * 86400

    /// Whether responses' cookies are stored at all.
    var storesCookies: Bool { acceptPolicy != .never }

    // MARK: - Sending

    /// The `Cookie` header for a request to `url`, or `nil` when no cookie applies.
    ///
    /// - Parameters:
    ///   - url: The hop's URL.
    ///   - now: The current time.
    /// - Returns: `name=value` pairs joined by `; `, longest path first, then oldest first (§5.4).
    func cookieHeader(for url: URL, now: Date = Date()) -> String? {
        guard sendsCookies else { return nil }
        let cookies = Self.matching(currentCookies, in: storage, url: url, now: now)
        guard !cookies.isEmpty else { return nil }
        return cookies.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// The cookies of `candidates` (of `storage`) that go with a request to `url`, in sending order.
    static func matching(_ candidates: [HTTPCookie], in storage: HTTPCookieStorage, url: URL, now: Date) -> [HTTPCookie]
    {
        guard !candidates.isEmpty, let target = CookieTarget(url) else { return [] }
        let matched = candidates.filter { cookie in
            if let expires = cookie.expiresDate, expires <= now { return false }
            if cookie.isSecure, !target.isSecure { return false }
            return target.domainMatches(cookie.domain.lowercased()) && target.pathMatches(cookie.path)
        }
        guard matched.count > 1 else { return matched }
        let created = CookieAttributes.creationTimes(of: matched, in: storage)
        return zip(matched, created).sorted { first, second in
            let (firstLength, secondLength) = (first.0.path.utf8.count, second.0.path.utf8.count)
            if firstLength != secondLength { return firstLength > secondLength }
            return first.1 < second.1
        }.map(\.0)
    }

    // MARK: - Storing

    /// Stores what a response's `Set-Cookie` fields ask for, by §5.3 and RFC 6265bis's rules for `Secure`, as one
    /// batch: worked out in memory against one read of the jar, then handed to the storage at once (to a persistent
    /// storage through its `PendingCookieWrites`, so no file write delays the response).
    ///
    /// - Parameters:
    ///   - fields:          The fields, one per header line, as received.
    ///   - url:             The URL of the hop that received them.
    ///   - mainDocumentURL: The URL whose domain `.onlyFromMainDocumentDomain` compares with.
    ///   - now:             The current time.
    func store(_ fields: [String], from url: URL, mainDocumentURL: URL?, now: Date = Date()) {
        guard storesCookies, let target = CookieTarget(url) else { return }
        if acceptPolicy == .onlyFromMainDocumentDomain, let main = mainDocumentURL.flatMap(CookieTarget.init),
            main.site != target.site
        {
            return
        }
        let parsed = fields.prefix(Self.maximumFieldsPerResponse).compactMap(SetCookie.init)
        guard !parsed.isEmpty else { return }
        var batch = CookieBatch(current: currentCookies, storage: storage)
        var stored = false
        for cookie in parsed {
            stored = store(cookie, target: target, now: now, in: &batch) || stored
        }
        // Once per response, not per field: a server sending the most fields costs one pass over the jar.
        if stored { evictIfNeeded(sites: [target.site], now: now, in: &batch) }
        commit(batch)
    }

    /// Stores one cookie in `batch`; `true` when one was added.
    private func store(_ parsed: SetCookie, target: CookieTarget, now: Date, in batch: inout CookieBatch) -> Bool {
        // Domain: a public suffix is refused unless it is the host itself, which then gets a host-only cookie, as an
        // IP address always does.
        var domain = target.host
        var hostOnly = true
        if let requested = parsed.domain {
            if target.isIPAddress || PublicSuffixList.isPublicSuffix(requested) {
                guard requested == target.host else { return false }
            } else {
                guard requested == target.host || target.host.hasSuffix("." + requested) else { return false }
                domain = requested
                hostOnly = false
            }
        }
        let path = parsed.path ?? target.defaultPath
        // RFC 6265bis §5.7: only a secure origin sets a `Secure` cookie, and a non-secure one may not shadow one.
        if parsed.secure, !target.isSecure { return false }
        // RFC 6265bis matches the prefixes case-insensitively: `__HOST-` binds a server as `__Host-` does.
        if Self.hasPrefix("__secure-", parsed.name), !parsed.secure { return false }
        if Self.hasPrefix("__host-", parsed.name), !parsed.secure || !hostOnly || path != "/" { return false }

        if !target.isSecure,
            batch.cookies.values.contains(where: { old in
                old.isSecure && old.name == parsed.name && CookieTarget.pathMatches(path, cookiePath: old.path)
                    && (Self.bareDomain(old) == domain || target.domainMatches(old.domain.lowercased()))
            })
        {
            return false
        }

        var expires: Date?
        if let maxAge = parsed.maxAge {
            expires =
                maxAge <= 0 ? .distantPast : now.addingTimeInterval(min(TimeInterval(maxAge), Self.maximumLifetime))
        } else if let date = parsed.expires {
            expires = min(date, now.addingTimeInterval(Self.maximumLifetime))
        }
        // The same name, domain and path replace the old cookie, whether it was host-only or not, keeping its age.
        let replaced = [domain, "." + domain].compactMap {
            batch.cookies[Self.key(domain: $0, path: path, name: parsed.name)]
        }
        let created = replaced.first.map { batch.creationTime(of: $0) }
        for old in replaced { batch.delete(old) }
        if let expires, expires <= now { return false }

        guard
            let cookie = Self.makeCookie(
                name: parsed.name, value: parsed.value, domain: hostOnly ? domain : "." + domain,
                path: path, expires: expires, secure: parsed.secure, httpOnly: parsed.httpOnly)
        else {
            return false
        }
        batch.set(cookie, extras: .init(sameSite: parsed.sameSite, created: created))
        return true
    }

    /// Keeps within `maximumCookiesPerDomain` for each of `sites` and `maximumCookies` in all: expired cookies go
    /// first, then the oldest.
    private func evictIfNeeded(sites: Set<String>, now: Date, in batch: inout CookieBatch) {
        let all = Array(batch.cookies.values)
        let isExpired: (HTTPCookie) -> Bool = { ($0.expiresDate ?? .distantFuture) <= now }
        var doomed = all.filter(isExpired)
        let live = all.filter { !isExpired($0) }
        let bySite = Dictionary(
            grouping: live.filter { sites.contains(CookieTarget.site(ofDomain: Self.bareDomain($0))) }
        ) {
            CookieTarget.site(ofDomain: Self.bareDomain($0))
        }.filter { $0.value.count > Self.maximumCookiesPerDomain }
        guard !bySite.isEmpty || live.count > Self.maximumCookies || !doomed.isEmpty else { return }
        let stamped = CookieAttributes.creationTimes(of: live, in: storage)
        let created = Dictionary(
            zip(live, stamped).map { cookie, time in
                let key = Self.key(of: cookie)
                return (key, batch.carriedCreationTime(of: key) ?? time)
            }, uniquingKeysWith: { first, _ in first })
        let oldestFirst: (HTTPCookie, HTTPCookie) -> Bool = {
            created[Self.key(of: $0)] ?? 0 < created[Self.key(of: $1)] ?? 0
        }
        var evicted: Set<String> = []
        for sameSite in bySite.values {
            let oldest = sameSite.sorted(by: oldestFirst).prefix(sameSite.count - Self.maximumCookiesPerDomain)
            doomed += oldest
            evicted.formUnion(oldest.map(Self.key))
        }
        let remaining = live.count - evicted.count
        if remaining > Self.maximumCookies {
            doomed += live.filter { !evicted.contains(Self.key(of: $0)) }.sorted(by: oldestFirst).prefix(
                remaining - Self.maximumCookies)
        }
        for cookie in doomed { batch.delete(cookie) }
    }

    /// Adds `cookies` as one batch, replacing any with the same identity, within the jar's limits: what a file
    /// brings back is bounded like what a server sends.
    ///
    /// - Parameter cookies: The cookies, with what `HTTPCookie` cannot hold.
    func add(_ cookies: [(cookie: HTTPCookie, extras: CookieAttributes.Extras)]) {
        var batch = CookieBatch(current: currentCookies, storage: storage)
        for (cookie, extras) in cookies { batch.set(cookie, extras: extras) }
        let sites = Set(cookies.map { CookieTarget.site(ofDomain: Self.bareDomain($0.cookie)) })
        evictIfNeeded(sites: sites, now: Date(), in: &batch)
        commit(batch)
    }

    /// Hands `batch`'s changes to the storage: a persistent one gets them through its writer, any other at once.
    private func commit(_ batch: CookieBatch) {
        let changes = batch.changes
        guard !changes.isEmpty else { return }
        for (_, change) in changes {
            switch change {
            case let .set(cookie, extras): CookieAttributes.remember(extras, of: cookie, in: storage)
            case let .delete(cookie): CookieAttributes.forget(cookie, in: storage)
            }
        }
        if let writer {
            writer.enqueue(
                changes.map { key, change in
                    switch change {
                    case let .set(cookie, _): (key, .set(cookie))
                    case let .delete(cookie): (key, .delete(cookie))
                    }
                })
            return
        }
        for (_, change) in changes {
            switch change {
            case let .set(cookie, _): storage.setCookie(cookie)
            case let .delete(cookie): storage.deleteCookie(cookie)
            }
        }
    }

    /// An `HTTPCookie` as Foundation stores one: a domain cookie's `domain` starts with a dot.
    static func makeCookie(
        name: String, value: String, domain: String, path: String, expires: Date?, secure: Bool,
        httpOnly: Bool
    ) -> HTTPCookie? {
        var properties: [HTTPCookiePropertyKey: Any] = [
            .name: name, .value: value, .domain: domain, .path: path, .version: "0",
        ]
        if let expires { properties[.expires] = expires } else { properties[.discard] = "TRUE" }
        if secure { properties[.secure] = "TRUE" }
        if httpOnly { properties[HTTPCookiePropertyKey("HttpOnly")] = "TRUE" }
        return HTTPCookie(properties: properties)
    }

    /// Whether `name` starts with `prefix` (lower-case ASCII), in any case.
    static func hasPrefix(_ prefix: String, _ name: String) -> Bool {
        var characters = name.utf8.makeIterator()
        for expected in prefix.utf8 {
            guard let byte = characters.next() else { return false }
            let lowered = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte | 0x20 : byte
            guard lowered == expected else { return false }
        }
        return true
    }

    /// A cookie's domain without the leading dot of a domain cookie, lower-cased.
    static func bareDomain(_ cookie: HTTPCookie) -> String {
        let domain = cookie.domain.lowercased()
        return domain.hasPrefix(".") ? String(domain.dropFirst()) : domain
    }

    /// Foundation's identity of a stored cookie.
    static func key(of cookie: HTTPCookie) -> String {
        key(domain: cookie.domain, path: cookie.path, name: cookie.name)
    }

    /// The identity of a cookie with these fields (`domain` as stored: a domain cookie's with its leading dot).
    static func key(domain: String, path: String, name: String) -> String { domain + "\u{0}" + path + "\u{0}" + name }

    /// When the `HTTPCookie` was made, as Foundation records it (seconds since the reference date).
    static func foundationCreationTime(of cookie: HTTPCookie) -> Double {
        switch cookie.properties?[HTTPCookiePropertyKey("Created")] {
        case let value as Double: value
        case let value as NSNumber: value.doubleValue
        case let value as String: Double(value) ?? 0
        default: 0
        }
    }
}

/// A response's cookie changes, worked out against the jar as it will be: the cookies by key after each change,
/// and the changes themselves, last one per cookie, in the order first made.
struct CookieBatch {
    enum Change {
        case set(HTTPCookie, CookieAttributes.Extras)
        case delete(HTTPCookie)
    }

    /// The jar as the batch leaves it, by `CookieJar.key(of:)`.
    private(set) var cookies: [String: HTTPCookie]
    private var changed: [String: Change] = [:]
    private var order: [String] = []
    /// Keys the jar held before the batch: a cookie both made and removed within it was never there.
    private let before: Set<String>
    private let storage: HTTPCookieStorage

    init(current: [HTTPCookie], storage: HTTPCookieStorage) {
        cookies = Dictionary(current.map { (CookieJar.key(of: $0), $0) }, uniquingKeysWith: { _, last in last })
        before = Set(cookies.keys)
        self.storage = storage
    }

    mutating func set(_ cookie: HTTPCookie, extras: CookieAttributes.Extras) {
        let key = CookieJar.key(of: cookie)
        cookies[key] = cookie
        record(key, .set(cookie, extras))
    }

    mutating func delete(_ cookie: HTTPCookie) {
        let key = CookieJar.key(of: cookie)
        cookies[key] = nil
        if before.contains(key) {
            record(key, .delete(cookie))
        } else {
            changed[key] = nil
        }
    }

    private mutating func record(_ key: String, _ change: Change) {
        if changed.updateValue(change, forKey: key) == nil { order.append(key) }
    }

    /// The changes, one per cookie, in the order first made.
    var changes: [(key: String, change: Change)] {
        order.compactMap { key in changed[key].map { (key, $0) } }
    }

    /// The creation time a cookie this batch sets carries over from the one it replaced.
    func carriedCreationTime(of key: String) -> Double? {
        if case let .set(_, extras)? = changed[key] { return extras.created }
        return nil
    }

    /// When `cookie` was first created, counting the creation times this batch carries over.
    func creationTime(of cookie: HTTPCookie) -> Double {
        carriedCreationTime(of: CookieJar.key(of: cookie))
            ?? CookieAttributes.creationTimes(of: [cookie], in: storage)[0]
    }
}
