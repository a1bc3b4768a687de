import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why a proxy variable of the environment could not be used.
public enum ProxyEnvironmentError: Error, Sendable, Equatable {
    /// The variable names a proxy Bluebonnet cannot speak to (an `https://` or `socks` proxy, or no host), so it is
    /// refused rather than ignored, which would send traffic around the proxy.
    case unsupportedProxy(variable: String, value: String)
}

extension AlamofireExtension where ExtendedType: URLSessionConfiguration {
    /// A `connectionProxyDictionary` made from the environment's proxy variables, for a process that opts in:
    /// `http_proxy`/`HTTP_PROXY` for `http` URLs, `https_proxy`/`HTTPS_PROXY` for `https` URLs (the lowercase one wins),
    /// `no_proxy`/`NO_PROXY` for the hosts reached directly (comma-separated: names, `.domain`, `*`). A value is
    /// `host:port` or `http://[user:password@]host:port`; credentials become that proxy's Basic credentials (under
    /// `HTTPProxyUsername`/`HTTPProxyPassword` or `HTTPSProxyUsername`/`HTTPSProxyPassword`), and never go to the other.
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
        for (prefix, name) in [("HTTP", "http_proxy"), ("HTTPS", "https_proxy")] {
            guard let (variable, text) = value(name) else { continue }
            let url = URL(string: text.contains("://") ? text : "http://" + text)
            guard let url, url.scheme?.lowercased() == "http", let host = url.host, !host.isEmpty else {
                throw ProxyEnvironmentError.unsupportedProxy(variable: variable, value: text)
            }
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
        if let (_, list) = value("no_proxy") {
            dictionary["ExceptionsList"] = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty }
        }
        return dictionary
    }
}
