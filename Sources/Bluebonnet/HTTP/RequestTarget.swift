import Foundation

/// The checks a URL passes before it reaches the engine, for the first request and every redirect hop.
///
/// Foundation parses any run of digits as a port, and the engine narrows it to 16 bits: NIO traps on an IP address
/// with a port above 65535, and wraps one with a host name (`localhost:65536` connects to port 0). So a server's
/// `Location` could crash the process or send a request to a port it never named.
enum RequestTarget {
    /// What is wrong with a URL as a request target.
    enum Problem: Equatable {
        case unsupportedScheme
        case invalidHost
        case invalidPort
    }

    static let validPorts = 0...65535

    /// The first problem of `url` as a target, or `nil` when the engine may connect to it.
    ///
    /// - Parameters:
    ///   - url:       The target.
    ///   - webSocket: Whether the target is a WebSocket's, which may also be `ws:` or `wss:`.
    static func problem(with url: URL, webSocket: Bool = false) -> Problem? {
        let scheme = url.scheme?.lowercased()
        guard
            scheme == "http" || scheme == "https" || (webSocket && (scheme == "ws" || scheme == "wss"))
                || (!webSocket && (scheme == "http+unix" || scheme == "https+unix"))
        else {
            return .unsupportedScheme
        }
        guard let host = url.host, isValidHost(host) else { return .invalidHost }
        if let port = url.port, !validPorts.contains(port) { return .invalidPort }
        return nil
    }

    /// Whether `url` names a Unix-domain socket (`http+unix:`, `https+unix:`), whose host is the socket's path,
    /// percent-encoded.
    static func isUnixSocket(_ url: URL) -> Bool {
        switch url.scheme?.lowercased() {
        case "http+unix", "https+unix": true
        default: false
        }
    }

    /// A host holds no control character, space or NUL, in whatever form Foundation hands it over.
    private static func isValidHost(_ host: String) -> Bool {
        guard !host.isEmpty else { return false }
        if host.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) { return false }
        // Decoding allocates, so only a host that holds an escape pays for it.
        guard host.utf8.contains(UInt8(ascii: "%")) else { return true }
        let decoded = host.removingPercentEncoding ?? host
        return !decoded.utf8.contains { $0 <= 0x20 || $0 == 0x7F }
    }
}
