import AsyncHTTPClient
import Foundation
import NIOHTTP1

/// The proxies of `URLSessionConfiguration.connectionProxyDictionary`, with CFNetwork's keys (`HTTPEnable`,
/// `HTTPProxy`, `HTTPPort`, the same with `HTTPS` and `SOCKS`, `ExceptionsList`) and Basic credentials: one proxy's
/// own under `HTTPProxyUsername`/`HTTPProxyPassword` (likewise `HTTPS…`), or CFNetwork's
/// `kCFProxyUsernameKey`/`kCFProxyPasswordKey` for every proxy of the dictionary. A plain `http://` URL goes to the
/// HTTP proxy in absolute form (`AbsoluteFormForwarding`), any other through a `CONNECT` tunnel; either way the
/// credentials go to the proxy alone, never to the origin. A SOCKS proxy (SOCKS5, no authentication: AsyncHTTPClient
/// offers no other) carries what no HTTP or HTTPS proxy of the dictionary does, as CFNetwork does.
struct ProxyConfiguration: Sendable, Equatable {
    struct Endpoint: Sendable, Equatable {
        var host: String
        var port: Int
        var username: String?
        var password: String?
    }

    var http: Endpoint?
    var https: Endpoint?
    var socks: Endpoint?
    /// Hosts reached directly: exact names or IP addresses, `.example.com`, `*.example.com` or `example.com` for a
    /// domain and its subdomains, `*` for every host.
    var exceptions: [String] = []

    /// The proxies `dictionary` enables; `nil` when it enables none.
    init?(dictionary: [AnyHashable: Any]?) {
        guard let dictionary else { return nil }
        func string(_ key: String) -> String? {
            (dictionary[key] as? String)?.trimmingCharacters(in: .whitespaces).nilIfEmpty
        }
        func integer(_ key: String) -> Int? {
            if let number = dictionary[key] as? Int { return number }
            if let number = dictionary[key] as? NSNumber { return number.intValue }
            return string(key).flatMap { Int($0) }
        }
        func enabled(_ key: String) -> Bool {
            if let flag = dictionary[key] as? Bool { return flag }
            return integer(key).map { $0 != 0 } ?? false
        }
        func endpoint(_ prefix: String, defaultPort: Int) -> Endpoint? {
            guard enabled("\(prefix)Enable"), let host = string("\(prefix)Proxy") else { return nil }
            let port = integer("\(prefix)Port") ?? defaultPort
            guard (1...65535).contains(port) else { return nil }
            // This proxy's own credentials win; CFNetwork's global keys are for every proxy of the dictionary.
            if let username = string("\(prefix)ProxyUsername") {
                return Endpoint(host: host, port: port, username: username, password: string("\(prefix)ProxyPassword"))
            }
            return Endpoint(
                host: host, port: port, username: string("kCFProxyUsernameKey"), password: string("kCFProxyPasswordKey")
            )
        }
        http = endpoint("HTTP", defaultPort: 80)
        https = endpoint("HTTPS", defaultPort: 443)
        socks = endpoint("SOCKS", defaultPort: 1080)
        exceptions = (dictionary["ExceptionsList"] as? [Any] ?? []).compactMap { ($0 as? String)?.lowercased() }
        guard http != nil || https != nil || socks != nil else { return nil }
    }

    /// How a connection to `url` is carried: through an HTTP proxy's `CONNECT` tunnel, through a SOCKS proxy, or
    /// directly (`nil`).
    enum Route: Sendable, Equatable {
        case tunnel(Endpoint)
        case socks(Endpoint)
    }

    /// The route to `url`; `nil` to connect directly.
    func route(for url: URL) -> Route? {
        guard let host = url.host?.lowercased(), !bypasses(host) else { return nil }
        if let endpoint = Origin.isSecure(url.scheme) ? https : http { return .tunnel(endpoint) }
        return socks.map { .socks($0) }
    }

    /// The HTTP proxy that takes `url` in absolute form (`AbsoluteFormForwarding`): a plain `http://` URL that the
    /// dictionary's HTTP proxy carries. A secure URL, and a WebSocket's, go through a tunnel.
    func forwardingEndpoint(for url: URL) -> Endpoint? {
        guard url.scheme?.lowercased() == "http", case let .tunnel(endpoint)? = route(for: url) else { return nil }
        return endpoint
    }

    /// AsyncHTTPClient's proxy for `url`, or `nil` to connect directly.
    func proxy(for url: URL) -> HTTPClient.Configuration.Proxy? {
        switch route(for: url) {
        case nil:
            return nil
        case let .tunnel(endpoint):
            let authorization = endpoint.username.map {
                HTTPClient.Authorization.basic(username: $0, password: endpoint.password ?? "")
            }
            return .server(host: endpoint.host, port: endpoint.port, authorization: authorization)
        case let .socks(endpoint):
            return .socksServer(host: endpoint.host, port: endpoint.port)
        }
    }

    /// Whether `host` is one of the exceptions.
    func bypasses(_ host: String) -> Bool {
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        return exceptions.contains { exception in
            if exception == "*" { return true }
            var domain = exception
            if domain.hasPrefix("*.") { domain.removeFirst(2) } else if domain.hasPrefix(".") { domain.removeFirst() }
            guard !domain.isEmpty else { return false }
            return bare == domain || bare.hasSuffix("." + domain)
        }
    }
}

extension String {
    /// `nil` for the empty string.
    var nilIfEmpty: String? { isEmpty ? nil : self }
}
