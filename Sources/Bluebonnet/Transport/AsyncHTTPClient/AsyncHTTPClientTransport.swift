import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import NIOHTTP1
import NIOSSL
import Synchronization
import Tracing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The default engine: one `HTTPClient` per `Session`, redirects off (the `Request` follows them itself so a
/// `RedirectHandler` sees every hop), gzip, deflate, brotli and zstd decoding with a ratio limit.
final class AsyncHTTPClientTransport: HTTPTransport {
    /// Decompressed bytes allowed per compressed byte, so a tiny gzip bomb cannot fill memory.
    static let decompressionRatioLimit = 200
    /// How much later than the engine's own idle timeout AsyncHTTPClient's connect timeout comes, in seconds: long
    /// enough that the engine has cancelled every request it timed out in the pool's queue before AsyncHTTPClient's
    /// own timer for it fires (measured: with 1 s, 10,000 queued requests still met AsyncHTTPClient's timers).
    static let connectTimeoutMargin: TimeInterval = 30

    let client: HTTPClient
    /// Set before the client is shut down, so a request that raced the shutdown knows to watch its task.
    private let isShuttingDown = Atomic<Bool>(false)
    /// The session's `timeoutIntervalForRequest`: how long a request may go without a byte sent or received.
    private let requestTimeout: TimeInterval
    /// The one idle timer of every request of this engine.
    let idleWatch: IdleWatch
    /// The loops whose connections just came free, which the next requests' delegates run on.
    private let affinity = LoopAffinity()
    private let serverTrustManager: ServerTrustManager?
    private let tls: TLSSettings
    /// The configuration every client starts from.
    private let baseConfiguration: HTTPClient.Configuration
    /// The proxies of the session's configuration, if it enables any.
    private let proxies: ProxyConfiguration?
    /// Clients besides the shared one, made on first use: one per proxy, and one per host that a
    /// `ServerTrustManager` evaluates or that has an identity of its own (its connections are judged by that host's
    /// evaluator, so a pin holds on the very connection that carries the request).
    private let otherClients = Protected([ClientKey: HostClient]())

    private struct ClientKey: Hashable {
        let host: String?
        let proxy: HTTPClient.Configuration.Proxy?
        /// The `host:port` of the HTTP proxy a forwarding client sends plain `http://` requests to.
        var forwarder: String? = nil
    }

    private struct HostClient {
        let client: HTTPClient
        let enforcer: ServerTrustEnforcer?
    }

    /// Records every connection's life, when the session's metrics or debug logging are on.
    private let connectionMetering: ConnectionMetering?
    /// Set when the session's trust roots could not be turned into the TLS layer's: every request then fails with
    /// it rather than trusting less or more than asked.
    private let configurationError: AFError?

    init(configuration: TransportConfiguration) {
        Confinement.installEventLoopProbe { MultiThreadedEventLoopGroup.currentEventLoop != nil }
        serverTrustManager = configuration.serverTrustManager
        tls = configuration.tls
        proxies = configuration.proxies
        requestTimeout = configuration.requestTimeout
        // No read timeout of AsyncHTTPClient's, which re-arms a timer on every read: one timer watches every request
        // of the engine for `timeoutIntervalForRequest` (`IdleWatch`). That timer also ends a request still waiting
        // for a connection, so AsyncHTTPClient's connect timeout, which is also how long its pool lets a request wait
        // for a connection, comes `connectTimeoutMargin` later: AsyncHTTPClient fails each request it times out in
        // its queue with a search of the whole queue (it removes the request twice, the second time finding nothing),
        // so 2,000 requests queued behind a slow host cost 2,000 × 2,000 steps, and ended up to 10 s after their
        // timeout instead of at it. The engine's cancels find theirs at the queue's head.
        // A connect timeout the session sets is AsyncHTTPClient's own, as the user chose it.
        let connectTimeout =
            configuration.connectTimeout ?? (min(configuration.requestTimeout, 60) + Self.connectTimeoutMargin)
        var config = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: HTTPClient.Configuration.Timeout(connect: Self.timeAmount(connectTimeout), read: nil),
            // Decoded by the response delegate (`ResponseBodyDecoding`), which also decodes brotli and zstd and undoes
            // stacked codings in order: NIO's decoder reads only the first coding named.
            decompression: .disabled
        )
        // Bluebonnet traces each request and hop itself (`Observability/`): AsyncHTTPClient's own span per underlying
        // request would be a duplicate with no parent, and with no tracer bootstrapped it still costs a no-op span
        // (about 26,000 instructions of a small GET's).
        config.tracing.tracer = nil
        config.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = configuration.maximumConnectionsPerHost
        // A refused or unresolvable host fails the request at once, as URLSession does, rather than retrying
        // until the timeout.
        config.connectionPool.retryConnectionEstablishment = false
        config.httpVersion = configuration.tls.allowsHTTP2 ? .automatic : .http1Only
        // The session's connection settings, checked by the session: AsyncHTTPClient traps on a use count below 1.
        if configuration.invalidSettings == nil {
            config.dnsOverride = configuration.dnsOverrides
            config.localAddress = configuration.localAddress
            config.maximumUsesPerConnection = configuration.maximumUsesPerConnection
            config.connectionPool.idleTimeout = Self.timeAmount(configuration.idleConnectionTimeout)
        }
        do {
            config.tlsConfiguration = try Self.tlsConfiguration(
                roots: configuration.tls.trustRoots,
                identity: configuration.tls.clientCertificate,
                verification: .fullVerification)
            configurationError = configuration.invalidSettings
        } catch {
            configurationError = .serverTrustEvaluationFailed(reason: .trustEvaluationFailed(error: error))
        }
        // The handshake checks host names; a certificate without subjectAltNames is refused rather than matched by
        // its common name. A client whose connections an evaluator judges replaces this with the evaluator. An HTTP/2
        // connection gets a guard that closes it on a connection error (`HTTP2ConnectionGuard`).
        connectionMetering = configuration.connectionMetering
        config.http1_1ConnectionDebugInitializer = Self.observed(
            connectionMetering, .http1, then: { SubjectAlternativeNameRequirement.verify($0) })
        config.http2ConnectionDebugInitializer = HTTP2ConnectionGuard.initializer(
            then: Self.observed(connectionMetering, .http2, then: { SubjectAlternativeNameRequirement.verify($0) }))
        baseConfiguration = config
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: config)
        idleWatch = IdleWatch(eventLoop: client.eventLoopGroup.next())
    }

    /// A client TLS configuration from the session's choices.
    static func tlsConfiguration(
        roots: TrustRoots, identity: ClientCertificate?,
        verification: CertificateVerification
    ) throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.certificateVerification = verification
        switch roots {
        case .system:
            break
        case let .adding(certificates):
            configuration.additionalTrustRoots = [
                .certificates(try certificates.map(ServerTrustEnforcer.nioCertificate))
            ]
        case let .replacing(certificates):
            configuration.trustRoots = .certificates(try certificates.map(ServerTrustEnforcer.nioCertificate))
        }
        if let identity {
            configuration.certificateChain = identity.chain.map { .certificate($0) }
            configuration.privateKey = .privateKey(identity.privateKey)
        }
        return configuration
    }

    /// The TLS configuration for connections to `host` and the enforcer of its evaluator, if the session's
    /// `ServerTrustManager` has one for it: the session's roots with the evaluator's on top, the host's own client
    /// certificate or the session's, and the handshake's own checks reduced to what the evaluator leaves to it.
    ///
    /// - Parameters:
    ///   - host:               The host; `nil` for the session's defaults.
    ///   - serverTrustManager: The session's manager.
    ///   - tls:                The session's TLS settings.
    /// - Throws: The manager's refusal (`noRequiredEvaluator`), or a root or identity the TLS layer cannot take.
    static func trustSetup(
        host: String?, serverTrustManager: ServerTrustManager?, tls: TLSSettings
    ) throws -> (TLSConfiguration, ServerTrustEnforcer?) {
        let evaluator = try host.flatMap { try serverTrustManager?.serverTrustEvaluator(forHost: $0) }
        let enforcer: ServerTrustEnforcer? =
            if let host, let evaluator { ServerTrustEnforcer(host: host, evaluator: evaluator) } else { nil }
        let configuration = try tlsConfiguration(
            roots: enforcer?.trustRoots(over: tls.trustRoots) ?? tls.trustRoots,
            identity: host.flatMap { tls.clientCertificatesByHost[$0] } ?? tls.clientCertificate,
            verification: enforcer?.certificateVerification ?? .fullVerification
        )
        return (configuration, enforcer)
    }

    /// The client for `url`: the shared one, or one of its own when a proxy carries it or its host is evaluated or
    /// has its own identity.
    ///
    /// - Parameters:
    ///   - url:       The request's URL.
    ///   - forwarder: The HTTP proxy `url` is forwarded through in absolute form (`forwardingProxy(for:)`).
    ///   - routed:    The proxy that carries `url` (`proxy(for:)`).
    private func client(
        for url: URL, forwarder: ProxyConfiguration.Endpoint?, routed: HTTPClient.Configuration.Proxy?
    ) throws -> (HTTPClient, ServerTrustEnforcer?) {
        if let configurationError { throw configurationError }
        // A forwarded request goes to the proxy as to a server: its client has no proxy of AsyncHTTPClient's.
        let proxy = forwarder == nil ? routed : nil
        let ownsHost =
            (serverTrustManager != nil || !tls.clientCertificatesByHost.isEmpty) && url.scheme?.lowercased() == "https"
        guard proxy != nil || forwarder != nil || ownsHost else { return (client, nil) }
        let host = ownsHost ? url.host : nil
        let key = ClientKey(host: host, proxy: proxy, forwarder: forwarder.map { "\($0.host):\($0.port)" })
        if let existing = otherClients.read({ $0[key] }) { return (existing.client, existing.enforcer) }
        let evaluator = try host.flatMap { try serverTrustManager?.serverTrustEvaluator(forHost: $0) }
        let identity = host.flatMap { tls.clientCertificatesByHost[$0] }
        guard proxy != nil || forwarder != nil || evaluator != nil || identity != nil else { return (client, nil) }
        let (tlsConfiguration, enforcer) = try Self.trustSetup(
            host: host, serverTrustManager: serverTrustManager, tls: tls)
        var config = baseConfiguration
        config.proxy = proxy
        config.tlsConfiguration = tlsConfiguration
        if forwarder != nil {
            // Plain HTTP/1.1 to the proxy, each head's target rewritten to absolute form on its connection.
            config.httpVersion = .http1Only
            config.http1_1ConnectionDebugInitializer = Self.observed(
                connectionMetering, .http1, then: AbsoluteFormForwarding.install(on:))
        }
        if let enforcer {
            config.http1_1ConnectionDebugInitializer = Self.observed(
                connectionMetering, .http1, then: { enforcer.verify($0) })
            config.http2ConnectionDebugInitializer = HTTP2ConnectionGuard.initializer(
                then: Self.observed(connectionMetering, .http2, then: { enforcer.verify($0) }))
        }
        return try otherClients.write { clients in
            if let raced = clients[key] { return (raced.client, raced.enforcer) }
            if isShuttingDown.load(ordering: .sequentiallyConsistent) { throw HTTPClientError.alreadyShutdown }
            let made = HostClient(
                client: HTTPClient(eventLoopGroupProvider: .singleton, configuration: config), enforcer: enforcer)
            clients[key] = made
            return (made.client, made.enforcer)
        }
    }

    /// The proxy that carries `url`, if the session has proxies; a Unix-domain socket is reached directly, whatever
    /// the proxy settings say.
    private func proxy(for url: URL) -> HTTPClient.Configuration.Proxy? {
        guard let proxies, !RequestTarget.isUnixSocket(url) else { return nil }
        return proxies.proxy(for: url)
    }

    /// The HTTP proxy a plain `http://` URL is forwarded through in absolute form, if the session has one for it.
    private func forwardingProxy(for url: URL) -> ProxyConfiguration.Endpoint? {
        guard let proxies, !RequestTarget.isUnixSocket(url) else { return nil }
        return proxies.forwardingEndpoint(for: url)
    }

    /// `check`, after `metering` recorded the connection, when the session watches connections.
    private static func observed(
        _ metering: ConnectionMetering?, _ version: ConnectionMetering.HTTPVersion,
        then check: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> @Sendable (any Channel) -> EventLoopFuture<Void> {
        metering.map { $0.initializer(version, then: check) } ?? check
    }

    static func timeAmount(_ interval: TimeInterval) -> TimeAmount {
        .nanoseconds(Int64(max(0, min(interval, 1e9)) * 1_000_000_000))
    }

    func execute(_ request: TransportRequest, sink: any TransportSink) -> any TransportTask {
        let urlRequest = request.urlRequest
        let ahcRequest: HTTPClient.Request
        let delegate: AHCResponseDelegate
        let client: HTTPClient
        do {
            guard let url = urlRequest.url else { throw HTTPClientError.invalidURL }
            // Each worked out once: they are nil checks without proxies, and read the exceptions list with them.
            let forwarder = forwardingProxy(for: url)
            let routed = proxy(for: url)
            let (chosen, enforcer) = try self.client(for: url, forwarder: forwarder, routed: routed)
            client = chosen
            var headers = NIOHTTP1.HTTPHeaders()
            // Exactly the request's fields: AsyncHTTPClient adds `Host` and the framing fields to a copy it makes when
            // it writes the head (its request still holds these), so room kept here for them would go unused.
            headers.reserveCapacity(request.headers.count)
            for (name, value) in request.headers { headers.add(name: name, value: value) }
            let engineURL = try forwarder.map {
                try AbsoluteFormForwarding.prepare(url, through: $0, headers: &headers)
            }
            let methodName = urlRequest.httpMethod ?? "GET"
            let method = NIOHTTP1.HTTPMethod(rawValue: methodName)
            // The resource deadline is kept by the engine's one timer with the idle timeout, not handed to
            // AsyncHTTPClient, which would arm a timer of its own on an event loop from this thread (waking it).
            let resourceDeadline = request.deadline.map { NIODeadline.now() + Self.timeAmount($0.timeIntervalSinceNow) }
            delegate = AHCResponseDelegate(
                url: url, sink: sink, idleTimeout: request.idleTimeout ?? requestTimeout,
                resourceDeadline: resourceDeadline, idleWatch: idleWatch,
                hasUploadBody: request.body != nil,
                maximumBodySize: request.maximumBodySize, method: methodName, trust: enforcer,
                proxy: routed, affinity: affinity)
            let body =
                request.body.map {
                    AHCBodyStreamer.body(for: $0, eventLoopGroup: client.eventLoopGroup, gate: delegate)
                }
                ?? urlRequest.httpBody.map { .bytes($0) }
            ahcRequest = try HTTPClient.Request(url: engineURL ?? url, method: method, headers: headers, body: body)
        } catch {
            sink.transportDidComplete(body: Data(), error: TransportErrorMapper.afError(from: error))
            return CompletedTransportTask()
        }
        // The delegate runs on the loop a finished request just left, where its connection waits (`LoopAffinity`);
        // never pinned with its channel (`.delegateAndChannel`), which measured half W2's throughput, because the
        // pool must then open and balance connections per loop.
        let preference = affinity.preference(onEventLoop: MultiThreadedEventLoopGroup.currentEventLoop != nil)
        let task = client.execute(
            request: ahcRequest, delegate: delegate, eventLoop: preference, deadline: nil, logger: request.logger
        )
        delegate.attach(task)
        // Checked after `execute`: a client that refused the request was shutting down, and the flag was set
        // before that began. Only then is the task's own result watched, so a live session pays nothing for it.
        if isShuttingDown.load(ordering: .sequentiallyConsistent) { delegate.reportFailureOfTaskWithoutDelegate(task) }
        return AHCTransportTask(task: task, delegate: delegate)
    }

    func shutdown() {
        for client in beginShutdown() { client.shutdown { _ in } }
    }

    func shutdownGracefully() async {
        // Each client's shutdown completes once its connections closed; it never blocks a thread.
        for client in beginShutdown() { try? await client.shutdown() }
    }

    /// Refuses new clients and stops the timer; returns every client to shut down, once.
    private func beginShutdown() -> [HTTPClient] {
        guard !isShuttingDown.exchange(true, ordering: .sequentiallyConsistent) else { return [] }
        idleWatch.stop()
        return [client]
            + otherClients.write { clients in
                defer { clients = [:] }
                return clients.values.map(\.client)
            }
    }
}

/// What the engine takes from `URLSessionConfiguration`.
struct TransportConfiguration: Sendable {
    var requestTimeout: TimeInterval
    var maximumConnectionsPerHost: Int
    var serverTrustManager: ServerTrustManager? = nil
    var tls = TLSSettings.default
    var proxies: ProxyConfiguration? = nil
    /// Host names connected to at another address.
    var dnsOverrides: [String: String] = [:]
    /// The local address connections are made from.
    var localAddress: String? = nil
    /// Requests a connection carries before it is replaced.
    var maximumUsesPerConnection: Int? = nil
    /// How long an idle connection is kept, in seconds.
    var idleConnectionTimeout: TimeInterval = 60
    /// How long making a connection may take, in seconds; `nil` for the idle timeout (at most 60 s) plus the margin.
    var connectTimeout: TimeInterval? = nil
    /// Why the session's connection settings cannot be used: every request fails with it.
    var invalidSettings: AFError? = nil
    var connectionMetering: ConnectionMetering? = nil
}

/// A running AsyncHTTPClient request.
struct AHCTransportTask: TransportTask {
    let task: HTTPClient.Task<Void>
    let delegate: AHCResponseDelegate

    func cancel() { task.cancel() }
    func suspend() { delegate.suspend() }
    func resume() { delegate.resume() }

    /// AsyncHTTPClient's own result for the task, settled once it has let go of the request (which may be after the
    /// attempt ended: `IdleWatch`), for tests.
    var engineResult: EventLoopFuture<Void> { task.futureResult }
}
