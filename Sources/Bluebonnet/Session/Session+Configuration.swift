import Configuration
import Foundation
import Logging
import X509
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    /// Creates a `Session` from swift-configuration's `ConfigReader`: environment variables, a JSON file, command-line
    /// arguments, or any provider, scoped as the caller likes (`config.scoped(to: "http")`).
    ///
    /// What the engine owns keeps AsyncHTTPClient's key names (`HTTPClient.Configuration(configReader:)`), so one
    /// configuration serves both; retry, cache, cookies, trust and the rest have Bluebonnet's. A key that is absent
    /// keeps `Session()`'s default; a value that cannot be used (a word where a number belongs, a negative timeout, an
    /// unknown mode) throws rather than being ignored. The keys are listed in the "Running in a server" article.
    ///
    /// ```swift
    /// let config = ConfigReader(provider: EnvironmentVariablesProvider())
    /// let session = try Session(configReader: config.scoped(to: "upstream"))
    /// // UPSTREAM_TIMEOUT_READ_MS=5000 UPSTREAM_RETRY_LIMIT=3 UPSTREAM_DNS_OVERRIDES=api.internal:10.0.0.7
    /// ```
    ///
    /// - Parameters:
    ///   - configReader:  Where the settings are read.
    ///   - interceptor:   An interceptor to run before the one `retry.limit` configures, if any. `nil` by default.
    ///   - eventMonitors: Monitors told of every request's events. None by default.
    ///   - logger:        Where request lifecycle lines go. Discards everything by default.
    /// - Throws: `AFError.sessionInvalidated(error:)` carrying a `Session.ConfigurationError` that names the key.
    public convenience init(
        configReader: ConfigReader,
        interceptor: (any RequestInterceptor)? = nil,
        eventMonitors: [any EventMonitor] = [],
        logger: Logger = Session.disabledLogger
    ) throws {
        do {
            let settings = try ConfiguredSettings(reader: SettingsReader(reader: configReader))
            let interceptors = [interceptor, settings.retryPolicy].compactMap { $0 }
            self.init(
                configuration: settings.configuration,
                interceptor: interceptors.count > 1 ? Interceptor(interceptors: interceptors) : interceptors.first,
                tls: settings.tls,
                redirectHandler: settings.redirectHandler,
                eventMonitors: eventMonitors,
                maximumResponseSize: settings.maximumResponseSize,
                logger: logger,
                connections: settings.connections,
                shutdownGracePeriod: settings.shutdownGracePeriod
            )
        } catch let error as Session.ConfigurationError {
            throw AFError.sessionInvalidated(error: error)
        }
    }
}

/// Typed reads of a `ConfigReader` that tell a value that is missing from one that cannot be used.
struct SettingsReader {
    let reader: ConfigReader

    func string(_ key: String) -> String? {
        reader.string(forKey: ConfigKey(key))?.trimmingCharacters(in: .whitespaces)
    }

    func int(_ key: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let value = reader.int(forKey: ConfigKey(key)) else {
            if let text = string(key) { throw Session.ConfigurationError(setting: key, "is \"\(text)\", not a number") }
            return nil
        }
        guard range.contains(value) else {
            throw Session.ConfigurationError(
                setting: key, "is \(value), outside \(range.lowerBound)...\(range.upperBound)")
        }
        return value
    }

    /// A duration in milliseconds, as seconds.
    func seconds(_ key: String, allowingZero: Bool = false) throws -> TimeInterval? {
        try int(key, in: (allowingZero ? 0 : 1)...(365 * 24 * 3_600_000)).map { TimeInterval($0) / 1000 }
    }

    func bool(_ key: String) throws -> Bool? {
        guard let value = reader.bool(forKey: ConfigKey(key)) else {
            if let text = string(key) {
                throw Session.ConfigurationError(setting: key, "is \"\(text)\", not true or false")
            }
            return nil
        }
        return value
    }

    func stringArray(_ key: String) -> [String]? {
        reader.stringArray(forKey: ConfigKey(key))
    }

    func choice(_ key: String, of choices: [String]) throws -> String? {
        guard let value = string(key) else { return nil }
        guard choices.contains(value) else {
            throw Session.ConfigurationError(
                setting: key, "is \"\(value)\", not one of \(choices.map { "\"\($0)\"" }.joined(separator: ", "))")
        }
        return value
    }
}

/// Everything `Session(configReader:)` reads, checked.
struct ConfiguredSettings {
    var configuration = URLSessionConfiguration.af.default
    var connections = Session.ConnectionSettings()
    var tls = TLSSettings.default
    var redirectHandler: (any RedirectHandler)?
    var retryPolicy: RetryPolicy?
    var maximumResponseSize: Int64? = Session.defaultMaximumResponseSize
    var shutdownGracePeriod = Session.defaultShutdownGracePeriod

    init(reader: SettingsReader) throws {
        try readEngine(reader)
        try readRetry(reader)
        try readCache(reader)
        try readCookies(reader)
        try readTrust(reader)
        try readProxy(reader)
        if let bytes = try reader.int("maximumResponseSizeBytes", in: 0...Int.max) {
            maximumResponseSize = bytes == 0 ? nil : Int64(bytes)
        }
        if let grace = try reader.seconds("shutdownGracePeriodMs", allowingZero: true) { shutdownGracePeriod = grace }
        if let problem = connections.problem { throw problem }
    }

    /// AsyncHTTPClient's keys, for what the engine owns.
    private mutating func readEngine(_ reader: SettingsReader) throws {
        for entry in reader.stringArray("dnsOverrides") ?? [] {
            guard let colon = entry.firstIndex(of: ":") else {
                throw Session.ConfigurationError(setting: "dnsOverrides", "holds \"\(entry)\", not host:address")
            }
            let host = entry[..<colon].trimmingCharacters(in: .whitespaces)
            let address = entry[entry.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            guard !host.isEmpty, Session.ConnectionSettings.isIPAddress(address) || !address.isEmpty else {
                throw Session.ConfigurationError(setting: "dnsOverrides", "holds \"\(entry)\", not host:address")
            }
            connections.dnsOverrides[host] = address
        }
        if let connect = try reader.seconds("timeout.connectionMs") { connections.connectTimeout = connect }
        if let read = try reader.seconds("timeout.readMs") { configuration.timeoutIntervalForRequest = read }
        if let total = try reader.seconds("timeout.resourceMs") { configuration.timeoutIntervalForResource = total }
        if let idle = try reader.seconds("connectionPool.idleTimeoutMs") { connections.idleConnectionTimeout = idle }
        if let limit = try reader.int("connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit", in: 1...10_000) {
            configuration.httpMaximumConnectionsPerHost = limit
        }
        if let uses = try reader.int("maximumUsesPerConnection", in: 1...Int.max) {
            connections.maximumUsesPerConnection = uses
        }
        if let address = reader.string("localAddress") { connections.localAddress = address }
        if let version = try reader.choice("httpVersion", of: ["automatic", "http1Only"]) {
            tls.allowsHTTP2 = version == "automatic"
        }
        switch try reader.choice("redirect.mode", of: ["follow", "disallow"]) {
        case "disallow"?:
            redirectHandler = Redirector.doNotFollow
        default:
            if let limit = try reader.int("redirect.maxRedirects", in: 0...1000) {
                redirectHandler = Redirector(behavior: .follow, maximumRedirects: limit)
            }
        }
    }

    private mutating func readRetry(_ reader: SettingsReader) throws {
        guard let limit = try reader.int("retry.limit", in: 0...100), limit > 0 else { return }
        var statusCodes = RetryPolicy.defaultRetryableHTTPStatusCodes
        if let codes = reader.stringArray("retry.statusCodes") {
            statusCodes = try Set(
                codes.map { text in
                    guard let code = Int(text.trimmingCharacters(in: .whitespaces)), (100...599).contains(code) else {
                        throw Session.ConfigurationError(
                            setting: "retry.statusCodes", "holds \"\(text)\", not a status")
                    }
                    return code
                })
        }
        let scale = try reader.seconds("retry.backoffScaleMs") ?? RetryPolicy.defaultExponentialBackoffScale
        let maximumRetryAfter = try reader.seconds("retry.maximumRetryAfterMs") ?? RetryPolicy.defaultMaximumRetryAfter
        retryPolicy = RetryPolicy(
            retryLimit: UInt(limit), exponentialBackoffScale: scale, retryableHTTPStatusCodes: statusCodes,
            maximumRetryAfter: maximumRetryAfter)
    }

    private mutating func readCache(_ reader: SettingsReader) throws {
        guard try reader.bool("cache.enabled") == true else { return }
        let memory = try reader.int("cache.memoryCapacityBytes", in: 0...Int.max) ?? 10 * 1024 * 1024
        let disk = try reader.int("cache.diskCapacityBytes", in: 0...Int.max) ?? 0
        let directory = reader.string("cache.directory").map { URL(fileURLWithPath: $0, isDirectory: true) }
        if disk > 0, directory == nil {
            throw Session.ConfigurationError(setting: "cache.diskCapacityBytes", "needs cache.directory")
        }
        configuration.urlCache = Session.HTTPCache(memoryCapacity: memory, diskCapacity: disk, directory: directory)
    }

    private mutating func readCookies(_ reader: SettingsReader) throws {
        guard try reader.bool("cookies.enabled") == false else { return }
        configuration.httpShouldSetCookies = false
        configuration.httpCookieStorage = nil
    }

    private mutating func readTrust(_ reader: SettingsReader) throws {
        let adding = reader.string("trust.additionalRootsFile")
        let replacing = reader.string("trust.rootsFile")
        if adding != nil, replacing != nil {
            throw Session.ConfigurationError(
                setting: "trust.rootsFile", "and trust.additionalRootsFile exclude each other")
        }
        if let path = adding {
            tls.trustRoots = .adding(try Self.certificates(at: path, key: "trust.additionalRootsFile"))
        }
        if let path = replacing { tls.trustRoots = .replacing(try Self.certificates(at: path, key: "trust.rootsFile")) }
        if let allows = try reader.bool("http2.enabled") { tls.allowsHTTP2 = allows }
    }

    /// The certificates of the file at `path` (PEM, or one DER certificate): at least one, or a configuration error.
    private static func certificates(at path: String, key: String) throws -> [Certificate] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Session.ConfigurationError(setting: key, "names \(path), which cannot be read")
        }
        let certificates = CertificateFiles.certificates(in: data)
        guard !certificates.isEmpty else {
            throw Session.ConfigurationError(setting: key, "names \(path), which holds no certificate")
        }
        return certificates
    }

    /// AsyncHTTPClient's `proxy` keys, and `proxy.fromEnvironment` for the process's `http_proxy` and the like.
    private mutating func readProxy(_ reader: SettingsReader) throws {
        if try reader.bool("proxy.fromEnvironment") == true {
            do {
                configuration.connectionProxyDictionary = try URLSessionConfiguration.af.proxyDictionary()
            } catch {
                throw Session.ConfigurationError(setting: "proxy.fromEnvironment", "found \(error)")
            }
        }
        guard try reader.bool("proxy.enabled") == true else { return }
        guard let host = reader.string("proxy.host"), !host.isEmpty else {
            throw Session.ConfigurationError(setting: "proxy.host", "is required when proxy.enabled is true")
        }
        let type = try reader.choice("proxy.type", of: ["http", "socks"]) ?? "http"
        let port = try reader.int("proxy.port", in: 1...65535)
        if type == "socks" {
            configuration.connectionProxyDictionary = [
                "SOCKSEnable": 1, "SOCKSProxy": host, "SOCKSPort": port ?? 1080,
            ]
            return
        }
        guard let port else {
            throw Session.ConfigurationError(setting: "proxy.port", "is required for an http proxy")
        }
        configuration.connectionProxyDictionary = [
            "HTTPEnable": 1, "HTTPProxy": host, "HTTPPort": port,
            "HTTPSEnable": 1, "HTTPSProxy": host, "HTTPSPort": port,
        ]
    }
}
