import Foundation

/// A request URL as RFC 6265 sees it: a canonical host, whether it is secure, and its path.
struct CookieTarget: Sendable {
    /// The host, lower-cased, without an IPv6 literal's brackets.
    let host: String
    let isIPAddress: Bool
    /// `https`/`wss`, or a loopback host, which browsers also count as secure for cookies.
    let isSecure: Bool
    /// The path as sent, `/` when empty.
    let path: String

    /// Reads a URL; `nil` without a host.
    init?(_ url: URL) {
        guard var host = url.host?.lowercased(), !host.isEmpty else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        self.host = host
        let address = HostAddress(host)
        isIPAddress = address != nil
        let loopback: Bool =
            if let bytes = address?.bytes {
                bytes.count == 4 ? bytes[0] == 127 : bytes == Array(repeating: 0, count: 15) + [1]
            } else {
                host == "localhost" || host.hasSuffix(".localhost")
            }
        let scheme = url.scheme?.lowercased()
        isSecure = scheme == "https" || scheme == "wss" || loopback
        let encoded = URLComponents(url: url, resolvingAgainstBaseURL: true)?.percentEncodedPath ?? url.path
        path = encoded.isEmpty ? "/" : encoded
    }

    /// §5.1.4's default-path: the path up to, not including, its last `/`; `/` when that leaves nothing.
    var defaultPath: String {
        guard path.hasPrefix("/"), let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }

    /// The registrable domain the host belongs to (its "site"), or the host itself for an IP address or a suffix.
    var site: String {
        isIPAddress ? host : Self.site(ofDomain: host)
    }

    /// The registrable domain of a cookie's bare domain, or the domain itself when it has none.
    static func site(ofDomain domain: String) -> String {
        // An IP address is its own site, as `site` says of a request's host: its last labels are no domain.
        if HostAddress(domain) != nil { return domain }
        return PublicSuffixList.registrableDomain(of: domain).map(String.init) ?? domain
    }

    /// Whether a stored cookie's domain applies to the host: a host-only cookie (no leading dot) by equality, a
    /// domain cookie by §5.1.3's domain-match, never by suffix for an IP address.
    func domainMatches(_ cookieDomain: String) -> Bool {
        guard cookieDomain.hasPrefix(".") else { return cookieDomain == host }
        let bare = cookieDomain.dropFirst()
        if host == bare { return true }
        return !isIPAddress && host.hasSuffix(cookieDomain)
    }

    /// §5.1.4's path-match against this request's path.
    func pathMatches(_ cookiePath: String) -> Bool {
        Self.pathMatches(path, cookiePath: cookiePath)
    }

    /// Whether `requestPath` path-matches `cookiePath`: equal, or `cookiePath` is a prefix ending at a `/`.
    static func pathMatches(_ requestPath: String, cookiePath: String) -> Bool {
        if requestPath == cookiePath { return true }
        guard requestPath.hasPrefix(cookiePath) else { return false }
        return cookiePath.hasSuffix("/") || requestPath.utf8.dropFirst(cookiePath.utf8.count).first == UInt8(ascii: "/")
    }
}
