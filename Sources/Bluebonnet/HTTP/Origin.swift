import Foundation

/// An origin (RFC 6454): scheme, host and port. Credentials belong to one; nothing carries them to another.
enum Origin {
    /// Headers that carry credentials: never sent to another origin.
    static let credentialHeaders = ["Authorization", "Proxy-Authorization", "Cookie"]

    /// Whether `name` is one of `credentialHeaders`, in any case.
    static func isCredentialHeader(_ name: String) -> Bool {
        credentialHeaders.contains { $0.equalsIgnoringCase(name) }
    }

    /// Whether two URLs share scheme, host and port (a missing port is the scheme's default).
    static func same(_ lhs: URL, _ rhs: URL) -> Bool {
        lhs.scheme?.lowercased() == rhs.scheme?.lowercased()
            && lhs.host?.lowercased() == rhs.host?.lowercased()
            && effectivePort(lhs) == effectivePort(rhs)
    }

    /// The URL's port, or its scheme's default.
    static func effectivePort(_ url: URL) -> Int {
        url.port ?? (isSecure(url.scheme) ? 443 : 80)
    }

    /// Whether `scheme` is carried over TLS: `https`, a WebSocket's `wss`, or `https+unix` (TLS over a Unix-domain
    /// socket).
    static func isSecure(_ scheme: String?) -> Bool {
        guard let scheme = scheme?.lowercased() else { return false }
        return scheme == "https" || scheme == "wss" || scheme == "https+unix"
    }
}
