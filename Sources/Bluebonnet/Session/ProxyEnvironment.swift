import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why a proxy variable of the environment could not be used.
public enum ProxyEnvironmentError: Error, Sendable, Equatable {
    /// The variable names a proxy Bluebonnet cannot speak to (an `https://` proxy, a SOCKS proxy for one scheme only
    /// or with credentials, or no host), so it is refused rather than ignored, which would send traffic around the
    /// proxy.
    case unsupportedProxy(variable: String, value: String)
}

extension AlamofireExtension where ExtendedType: URLSessionConfiguration {
    /// A `connectionProxyDictionary` made from the environment's proxy variables, for a process that opts in:
    /// `http_proxy`/`HTTP_PROXY` for `http` URLs, `https_proxy`/`HTTPS_PROXY` for `https` URLs (the lowercase one wins),
    /// `all_proxy`/`ALL_PROXY` for the schemes neither names, `no_proxy`/`NO_PROXY` for the hosts reached directly
    /// (comma-separated: names, `.domain`, `*`). A value is `host:port` or `http://[user:password@]host:port`;
    /// credentials become that proxy's Basic credentials (under `HTTPProxyUsername`/`HTTPProxyPassword` or
    /// `HTTPSProxyUsername`/`HTTPSProxyPassword`), and never go to the other. `all_proxy` may also name a SOCKS5 proxy,
    /// `socks5://host[:port]` or `socks5h://host[:port]` (1080 by default), for every scheme without a proxy of its
    /// own; either way the proxy resolves the target's name (as `socks5h` says), and SOCKS credentials are refused.
    ///
    /// Do not opt in inside a CGI program: there `HTTP_PROXY` can come from a request's `Proxy` header ("httpoxy").
    ///
    /// - Parameter environment: The variables. The process's by default.
    /// - Returns: The dictionary, empty when no proxy is set.
    /// - Throws: `ProxyEnvironmentError.unsupportedProxy(variable:value:)`.
    public static func proxyDictionary(
        fromEnvironment environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> [AnyHashable: Any] {
        func value(_ name: String) -> (String, String)? {
            for variable in [name.lowercased(), name.uppercased()] {
                if let value = environment[variable]?.trimmingCharacters(in: .whitespaces), !value.isEmpty {
                    return (variable, value)
                }
            }
            return nil
        }
        var dictionary: [AnyHashable: Any] = [:]
        func parsed(_ variable: String, _ text: String, schemes: Set<String>) throws -> (URL, String) {
            let url = URL(string: text.contains("://") ? text : "http://" + text)
            guard let url, let scheme = url.scheme?.lowercased(), schemes.contains(scheme), let host = url.host,
                !host.isEmpty
            else {
                throw ProxyEnvironmentError.unsupportedProxy(variable: variable, value: text)
            }
            return (url, host)
        }
        func addHTTPProxy(_ prefix: String, _ url: URL, host: String) {
            dictionary["\(prefix)Enable"] = 1
            dictionary["\(prefix)Proxy"] = host
            dictionary["\(prefix)Port"] = url.port ?? 80
            // Credentials belong to the proxy they came with: scoped to this scheme's proxy, never the global keys
            // CFNetwork applies to every proxy of the dictionary.
            if let user = url.user {
                dictionary["\(prefix)ProxyUsername"] = user.removingPercentEncoding ?? user
                dictionary["\(prefix)ProxyPassword"] = url.password.map { $0.removingPercentEncoding ?? $0 } ?? ""
            }
        }
        for (prefix, name) in [("HTTP", "http_proxy"), ("HTTPS", "https_proxy")] {
            guard let (variable, text) = value(name) else { continue }
            let (url, host) = try parsed(variable, text, schemes: ["http"])
            addHTTPProxy(prefix, url, host: host)
        }
        if let (variable, text) = value("all_proxy") {
            let (url, host) = try parsed(variable, text, schemes: ["http", "socks5", "socks5h"])
            if url.scheme?.lowercased() == "http" {
                for prefix in ["HTTP", "HTTPS"] where dictionary["\(prefix)Enable"] == nil {
                    addHTTPProxy(prefix, url, host: host)
                }
            } else {
                // SOCKS5 carries no credentials here: refused rather than sent without them.
                guard url.user == nil else {
                    throw ProxyEnvironmentError.unsupportedProxy(variable: variable, value: text)
                }
                dictionary["SOCKSEnable"] = 1
                dictionary["SOCKSProxy"] = host
                dictionary["SOCKSPort"] = url.port ?? 1080
            }
        }
        if let (_, list) = value("no_proxy") {
            dictionary["ExceptionsList"] = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }
        }
        return dictionary
    }
}
