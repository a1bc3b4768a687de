import Foundation

extension Session {
    /// How a `Session`'s engine makes and keeps its connections: the knobs AsyncHTTPClient, the engine underneath, offers
    /// that `URLSessionConfiguration` has no name for.
    ///
    /// `URLSessionConfiguration` keeps what Foundation names: `timeoutIntervalForRequest` (the idle timeout),
    /// `timeoutIntervalForResource`, `httpMaximumConnectionsPerHost` and `connectionProxyDictionary`. Whether HTTP/2 is
    /// offered is `TLSSettings.allowsHTTP2`. Unix-domain sockets need no setting: request an `http+unix://` or
    /// `https+unix://` URL whose host is the socket's path, percent-encoded (`http+unix://%2Fvar%2Frun%2Fdocker.sock/info`).
    ///
    /// ```swift
    /// var connections = Session.ConnectionSettings()
    /// connections.dnsOverrides = ["api.internal": "10.0.0.7"]
    /// connections.maximumUsesPerConnection = 1_000
    /// let session = Session(connections: connections)
    /// ```
    public struct ConnectionSettings: Sendable, Equatable {
        /// Host names connected to at another address: `["api.example.com": "127.0.0.1"]` connects to `127.0.0.1` for
        /// `https://api.example.com/`, while the request's `Host`, the TLS server name and the certificate check stay
        /// `api.example.com` (for tests and split-horizon setups). Empty by default.
        public var dnsOverrides: [String: String]
        /// The local IP address connections are made from (`"127.0.0.2"`, `"::1"`), on a machine with several; the port is
        /// chosen by the system. `nil` (the system's choice) by default.
        public var localAddress: String?
        /// How many requests one connection carries before it is closed and a new one made (HTTP/1.1 requests, HTTP/2
        /// streams). `nil` (no limit) by default.
        public var maximumUsesPerConnection: Int?
        /// How long an idle connection is kept open in the pool for the next request, in seconds. 60 by default.
        public var idleConnectionTimeout: TimeInterval
        /// How long making a connection (TCP, and TLS or a proxy's tunnel) may take, in seconds, apart from
        /// `timeoutIntervalForRequest`, which limits the time without progress once a request is sent. `nil` by default:
        /// a request waits for its connection as long as `timeoutIntervalForRequest` allows (at most 60 s).
        public var connectTimeout: TimeInterval?

        /// Settings with every default.
        public static let `default` = ConnectionSettings()

        /// Creates settings.
        ///
        /// - Parameters:
        ///   - dnsOverrides:             Host names connected to at another address. Empty by default.
        ///   - localAddress:             The local IP address connections are made from. `nil` by default.
        ///   - maximumUsesPerConnection: Requests one connection carries before it is replaced. `nil` (no limit) by default.
        ///   - idleConnectionTimeout:    How long an idle connection is kept open, in seconds. 60 by default.
        ///   - connectTimeout:           How long making a connection may take, in seconds. `nil` by default.
        public init(
            dnsOverrides: [String: String] = [:], localAddress: String? = nil, maximumUsesPerConnection: Int? = nil,
            idleConnectionTimeout: TimeInterval = 60, connectTimeout: TimeInterval? = nil
        ) {
            self.dnsOverrides = dnsOverrides
            self.localAddress = localAddress
            self.maximumUsesPerConnection = maximumUsesPerConnection
            self.idleConnectionTimeout = idleConnectionTimeout
            self.connectTimeout = connectTimeout
        }

        /// The first problem with these settings, said as a person would, or `nil`.
        var problem: ConfigurationError? {
            if let maximumUsesPerConnection, maximumUsesPerConnection < 1 {
                return ConfigurationError(
                    setting: "maximumUsesPerConnection", "must be at least 1 (it is \(maximumUsesPerConnection))")
            }
            if !(idleConnectionTimeout > 0 && idleConnectionTimeout.isFinite) {
                return ConfigurationError(
                    setting: "idleConnectionTimeout", "must be more than 0 seconds (it is \(idleConnectionTimeout))")
            }
            if let connectTimeout, !(connectTimeout > 0 && connectTimeout.isFinite) {
                return ConfigurationError(
                    setting: "connectTimeout", "must be more than 0 seconds (it is \(connectTimeout))")
            }
            if let localAddress, !Self.isIPAddress(localAddress) {
                return ConfigurationError(
                    setting: "localAddress",
                    "must be an IP address, such as 127.0.0.2 or ::1 (it is \"\(localAddress)\")")
            }
            for (host, address) in dnsOverrides.sorted(by: { $0.key < $1.key }) where host.isEmpty || address.isEmpty {
                return ConfigurationError(
                    setting: "dnsOverrides", "maps \"\(host)\" to \"\(address)\": neither may be empty")
            }
            return nil
        }

        static func isIPAddress(_ text: String) -> Bool {
            var v4 = in_addr()
            var v6 = in6_addr()
            return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
        }
    }

    /// A session setting that cannot be used: a `ConnectionSettings` value out of range (every request of the session
    /// then fails with `AFError.sessionInvalidated(error:)` carrying it), or a configuration key whose value
    /// `Session(configReader:)` cannot take (thrown inside `AFError.sessionInvalidated(error:)`).
    public struct ConfigurationError: Error, CustomStringConvertible, Sendable, Equatable {
        /// The setting or configuration key, such as `maximumUsesPerConnection` or `timeout.readMs`.
        public let setting: String
        /// What is wrong with its value, in words.
        public let problem: String

        /// The setting and what is wrong with it.
        public var description: String { "\(setting) \(problem)" }

        init(setting: String, _ problem: String) {
            self.setting = setting
            self.problem = problem
        }
    }
}
