import Foundation
import Tracing
import Logging
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The default `Session`, as in Alamofire.
public let AF = Session.default

/// Alamofire 4's name for `Session`.
public typealias SessionManager = Session

/// A closure that changes the `URLRequest` made by `Session.request(...)` before it is encoded and sent.
public typealias RequestModifier = @Sendable (inout URLRequest) throws -> Void

/// Creates and manages requests: one connection pool, the configuration they share, and the queues they use.
open class Session: @unchecked Sendable, RequestDelegate, RequestLifecycleDelegate {
    // @unchecked: every stored property is immutable; the set of active requests is behind its own lock.

    /// A closure that changes the `URLRequest` a request is made with, as Alamofire names it in `Session`.
    public typealias RequestModifier = Bluebonnet.RequestModifier

    /// The shared `Session`, used by `AF`; it lives for the whole process. It posts Alamofire's notifications.
    /// It is not ended by a `ServiceGroup` it runs in (see `run()`).
    public static let `default`: Session = {
        let session = Session(eventMonitors: [AlamofireNotifications()])
        session.activity.write { $0.isProcessLived = true }
        return session
    }()

    /// When a request makes its `URLRequest` and starts its lifecycle.
    public enum RequestSetup: Sendable {
        /// On its first `resume()` (the default, as in Alamofire 5.11 and later): a request nobody resumes costs
        /// nothing, and everything chained onto it before the resume sees every event.
        case lazy
        /// As soon as it is made, on `requestQueue` (Alamofire before 5.11).
        case eager
    }

    /// The serial queue every request's work ultimately targets.
    public let rootQueue: DispatchQueue
    /// Whether requests start as soon as their first response handler is added. `true` by default.
    public let startRequestsImmediately: Bool
    /// When requests make their `URLRequest`. `.lazy` by default.
    public let requestSetup: RequestSetup
    /// The queue where `URLRequest`s are made (conversion and encoding).
    public let requestQueue: DispatchQueue
    /// The queue where responses are serialized.
    public let serializationQueue: DispatchQueue
    /// The session-wide interceptor: adapts every request and decides about retrying failed ones.
    public let interceptor: (any RequestInterceptor)?
    /// The session-wide redirect handler; `nil` means follow redirects.
    public let redirectHandler: (any RedirectHandler)?
    /// The session-wide cached response handler: decides what the configuration's `urlCache` stores.
    public let cachedResponseHandler: (any CachedResponseHandler)?
    /// Chooses how each TLS host's identity is judged; `nil` when the system's roots and host names decide.
    public let serverTrustManager: ServerTrustManager?
    /// The trust roots, client certificates and HTTP/2 offer of every TLS connection.
    public let tls: TLSSettings

    /// A `URLSession` on this session's configuration whose delegate is `delegate`, as Alamofire's
    /// `Session.session`, for code that reads `session.configuration` (its cookie storage, cache and headers are this
    /// session's own objects): the one given to `init(session:delegate:rootQueue:...)`, or one made on first use.
    /// Bluebonnet sends nothing through it: tasks made on it directly are FoundationNetworking's.
    public var session: URLSession {
        urlSession.write { made in
            if let made { return made }
            let urlSession = URLSession(configuration: configurationCopy, delegate: delegate, delegateQueue: nil)
            made = urlSession
            return urlSession
        }
    }

    /// `session`, for the URLSession events a request tells monitors of.
    var eventURLSession: URLSession { session }

    /// The delegate of `session`, whose `FileManager` moves downloaded files to their destinations.
    public let delegate: SessionDelegate

    private let configurationCopy: URLSessionConfiguration
    private let urlSession: Protected<URLSession?>
    /// The monitor told of every request's events, when any monitor was given.
    public let eventMonitor: CompositeEventMonitor?
    /// The largest response body, in decoded bytes, a request holds in memory; `nil` for no limit.
    public let maximumResponseSize: Int64?
    /// Where the session writes request lifecycle lines (`.debug`), with each request's id as metadata; it is handed to
    /// AsyncHTTPClient too, for its own lines. Discards everything by default.
    public let logger: Logger

    /// Requests resumed and not yet finished, for `withAllRequests(perform:)`, `cancelAllRequests` and shutting down,
    /// with the session's lifetime: one lock, so a shutdown never misses a request that started as it began.
    let activity = Protected(SessionActivity())
    /// How long `shutdown()` lets requests in flight finish before cancelling them, in seconds.
    public let shutdownGracePeriod: TimeInterval
    /// How the engine makes and keeps connections.
    public let connections: ConnectionSettings

    /// The default `shutdownGracePeriod`: 30 seconds.
    public static let defaultShutdownGracePeriod: TimeInterval = 30

    /// The default `maximumResponseSize`: 100 MiB.
    public static let defaultMaximumResponseSize: Int64 = 100 * 1024 * 1024

    let context: SessionContext

    /// What the WebSocket engine is made with: the HTTP engine's trust, TLS, proxies and timeout.
    private let webSocketConfiguration: TransportConfiguration
    /// The WebSocket engine, made by the first WebSocket request.
    let webSockets = Protected<NIOWebSocketTransport?>(nil)

    /// The engine that carries this session's WebSockets.
    var webSocketTransport: any WebSocketTransport {
        webSockets.write { made in
            if let made { return made }
            let transport = NIOWebSocketTransport(configuration: webSocketConfiguration)
            made = transport
            return transport
        }
    }

    /// Creates a `Session`.
    ///
    /// - Parameters:
    ///   - configuration:            The `URLSessionConfiguration` whose timeouts, additional headers and
    ///                               connections per host the engine honours. `URLSessionConfiguration.af.default`
    ///                               by default.
    ///   - delegate:                 The delegate of `session`, whose `FileManager` moves downloaded files.
    ///                               `SessionDelegate()` by default.
    ///   - rootQueue:                The serial root queue. Must be serial.
    ///   - startRequestsImmediately: Whether requests start on their first response handler. `true` by default.
    ///   - requestSetup:             When requests make their `URLRequest`: on the first `resume()` (`.lazy`, the
    ///                               default) or at once on `requestQueue` (`.eager`).
    ///   - requestQueue:             The queue where `URLRequest`s are made. By default, a session that starts requests
    ///                               immediately makes each on the first resume, saving a thread hop.
    ///   - serializationQueue:       The queue where responses are serialized. A queue targeting `rootQueue` by default.
    ///   - interceptor:              The `RequestInterceptor` for every request, after each request's own. `nil` by default.
    ///   - serverTrustManager:       Chooses how each TLS host's identity is judged (pinning, self-signed servers).
    ///                               `nil` (the system's trust roots and host names) by default.
    ///   - tls:                      The trust roots, client certificates and HTTP/2 offer of every TLS connection.
    ///                               `.default` (system roots, no client identity, HTTP/2 offered) by default.
    ///   - redirectHandler:          The `RedirectHandler` for every request. `nil` (follow, up to 16 hops) by default.
    ///   - cachedResponseHandler:    Decides what the configuration's `urlCache` stores (an `HTTPCache`, or any
    ///                               `URLCache` but the default `URLCache.shared`, which is not used).
    ///                               `nil` (store what RFC 9111 allows) by default.
    ///   - eventMonitors:            Monitors told of every request's events. None by default.
    ///   - maximumResponseSize:      The largest body, in decoded bytes, a request holds in memory; a larger one fails
    ///                               with `AFError.responseLimitExceeded`. A request may set its own with
    ///                               `maximumResponseSize(_:)`. 100 MiB by default; `nil` for no limit.
    ///   - logger:                   Where request lifecycle lines go (never a header or a query string). Discards
    ///                               everything by default.
    ///   - tracer:                   Traces every request: a client span per request, parented on the caller's
    ///                               context, with a span per hop whose context goes to the server. `nil` (the
    ///                               tracer bootstrapped in `InstrumentationSystem`, if any) by default.
    ///   - metrics:                  What is measured with swift-metrics. `.default` (OpenTelemetry's HTTP client
    ///                               metrics, when a `MetricsSystem` factory is bootstrapped) by default.
    ///   - connections:              How the engine makes and keeps connections: DNS overrides, a local address, uses
    ///                               per connection, the pool's idle timeout, a connect timeout. `.default` by default.
    ///   - shutdownGracePeriod:      How long `shutdown()` (and a `ServiceGroup`'s graceful shutdown) lets requests in
    ///                               flight finish before cancelling them, in seconds. 30 by default.
    public init(
        configuration: URLSessionConfiguration = URLSessionConfiguration.af.default,
        delegate: SessionDelegate = SessionDelegate(),
        rootQueue: DispatchQueue = DispatchQueue(label: "org.bluebonnet.session.rootQueue"),
        startRequestsImmediately: Bool = true,
        requestSetup: RequestSetup = .lazy,
        requestQueue: DispatchQueue? = nil,
        serializationQueue: DispatchQueue? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        serverTrustManager: ServerTrustManager? = nil,
        tls: TLSSettings = .default,
        redirectHandler: (any RedirectHandler)? = nil,
        cachedResponseHandler: (any CachedResponseHandler)? = nil,
        eventMonitors: [any EventMonitor] = [],
        maximumResponseSize: Int64? = Session.defaultMaximumResponseSize,
        logger: Logger = Session.disabledLogger,
        tracer: (any Tracer)? = nil,
        metrics: MetricsOptions = .default,
        connections: ConnectionSettings = .default,
        shutdownGracePeriod: TimeInterval = Session.defaultShutdownGracePeriod
    ) {
        self.requestSetup = requestSetup
        self.connections = connections
        self.shutdownGracePeriod = shutdownGracePeriod.isFinite ? max(0, shutdownGracePeriod) : 0
        // A copy, as URLSession keeps: later changes to the caller's configuration change nothing here.
        configurationCopy = configuration.copy() as? URLSessionConfiguration ?? configuration
        urlSession = Protected(nil)
        self.delegate = delegate
        self.logger = logger
        self.maximumResponseSize = maximumResponseSize
        self.rootQueue = rootQueue
        self.startRequestsImmediately = startRequestsImmediately
        self.requestQueue = requestQueue ?? DispatchQueue(label: "\(rootQueue.label).requestQueue", target: rootQueue)
        self.serializationQueue =
            serializationQueue ?? DispatchQueue(label: "\(rootQueue.label).serializationQueue", target: rootQueue)
        self.interceptor = interceptor
        self.redirectHandler = redirectHandler
        self.cachedResponseHandler = cachedResponseHandler
        self.serverTrustManager = serverTrustManager
        self.tls = tls
        eventMonitor = eventMonitors.isEmpty ? nil : CompositeEventMonitor(monitors: eventMonitors)
        let requestTimeout = configuration.timeoutIntervalForRequest > 0 ? configuration.timeoutIntervalForRequest : 60
        let resourceTimeout =
            configuration.timeoutIntervalForResource > 0 ? configuration.timeoutIntervalForResource : nil
        let maximumConnections =
            configuration.httpMaximumConnectionsPerHost > 0 ? configuration.httpMaximumConnectionsPerHost : 8
        let transportConfiguration = TransportConfiguration(
            requestTimeout: requestTimeout,
            maximumConnectionsPerHost: maximumConnections,
            serverTrustManager: serverTrustManager,
            tls: tls,
            proxies: ProxyConfiguration(dictionary: configuration.connectionProxyDictionary),
            dnsOverrides: connections.dnsOverrides,
            localAddress: connections.localAddress,
            maximumUsesPerConnection: connections.maximumUsesPerConnection,
            idleConnectionTimeout: connections.idleConnectionTimeout,
            connectTimeout: connections.connectTimeout,
            invalidSettings: connections.problem.map { .sessionInvalidated(error: $0) },
            connectionMetering: Self.connectionMetering(metrics: metrics, logger: logger)
        )
        webSocketConfiguration = transportConfiguration
        let network =
            Self.injectedTransport ?? AsyncHTTPClientTransport(configuration: transportConfiguration)
        // The configuration's `URLProtocol` classes answer the hops they accept, below the cache as URLSession's
        // protocols load beneath its cache; none configured costs nothing.
        let engine: any HTTPTransport =
            if let classes = URLProtocolTransport.protocolClasses(of: configuration) {
                URLProtocolTransport(base: network, protocolClasses: classes, requestTimeout: requestTimeout)
            } else {
                network
            }
        // `HTTPCache`, or another `URLCache` set on purpose. Not the default `URLCache.shared`: FoundationNetworking's
        // disk store took 80 ms a response, which every default session would pay.
        let store: (any ResponseStore)? =
            switch configuration.urlCache {
            case let cache as HTTPCache: cache
            case let cache? where cache !== URLCache.shared: FoundationResponseStore(cache: cache)
            default: nil
            }
        let transport: any HTTPTransport =
            if let store {
                CachingTransport(base: engine, cache: store, defaultPolicy: configuration.requestCachePolicy)
            } else {
                engine
            }
        // The features on each seam, in order: what a hop adds before it leaves, what a response head sets off
        // before its body is read, and what may turn a finished hop into another.
        let cookieJar = configuration.httpCookieStorage.map {
            CookieJar(
                storage: $0, sendsCookies: configuration.httpShouldSetCookies,
                acceptPolicy: configuration.httpCookieAcceptPolicy)
        }
        let sessionLogger = logger.logLevel <= .debug ? logger : nil
        var preparers: [any HopPreparing] = []
        var headSteps: [any ResponseHeadStep] = []
        if let cookieJar { preparers.append(CookieHeaderPreparer(jar: cookieJar)) }
        if let store {
            preparers.append(CacheHandlerPreparer(sessionHandler: cachedResponseHandler))
            headSteps.append(CacheInvalidationStep(cache: store))
        }
        if let cookieJar { headSteps.append(CookieStoringStep(jar: cookieJar)) }
        let followers: [any HopFollowing] = [
            ChallengeFollower(storage: configuration.urlCredentialStorage, logger: sessionLogger),
            RedirectFollower(sessionHandler: redirectHandler ?? Redirector.follow),
        ]
        context = SessionContext(
            transport: transport,
            additionalHeaders: configuration.headers,
            additionalHeadersAreValid: (try? HeaderValidator.validate(
                configuration.headers.map { ($0.name, $0.value) }[...]))
                != nil,
            requestTimeout: requestTimeout,
            resourceTimeout: resourceTimeout,
            startRequestsImmediately: startRequestsImmediately,
            setsUpEagerly: requestSetup == .eager,
            createsRequestsOnResume: requestSetup == .lazy && requestQueue == nil,
            interceptor: interceptor,
            requestQueue: self.requestQueue,
            maximumResponseSize: maximumResponseSize,
            logger: sessionLogger,
            preparers: preparers,
            headSteps: headSteps,
            followers: followers,
            observers: Self.observers(tracer: tracer, metrics: metrics)
        )
        // Alamofire's task-level events carry `session`: made now, on the caller's thread, rather than lazily by the
        // first event, which may come from an event loop.
        if let eventMonitor, !eventMonitor.handledEvents.isDisjoint(with: [.metrics, .other]) { _ = session }
    }

    /// Creates a `Session` from a `URLSession`, as Alamofire's designated initializer does: `session` becomes
    /// `Session.session`, and its configuration is the one the engine honours (see `init(configuration:...)`). Its
    /// tasks are not used: Bluebonnet's requests go through its own engine.
    ///
    /// - Parameters:
    ///   - session:                  The `URLSession` shown as `Session.session`.
    ///   - delegate:                 The delegate, normally `session`'s, whose `FileManager` moves downloaded files.
    ///   - rootQueue:                The serial root queue. Must be serial.
    ///   - startRequestsImmediately: Whether requests start on their first response handler. `true` by default.
    ///   - requestSetup:             When requests make their `URLRequest`. `.lazy` by default.
    ///   - requestQueue:             The queue where `URLRequest`s are made. As in `init(configuration:...)` by default.
    ///   - serializationQueue:       The queue where responses are serialized. A queue targeting `rootQueue` by
    ///                               default.
    ///   - interceptor:              The `RequestInterceptor` for every request. `nil` by default.
    ///   - serverTrustManager:       Chooses how each TLS host's identity is judged. `nil` by default.
    ///   - redirectHandler:          The `RedirectHandler` for every request. `nil` by default.
    ///   - cachedResponseHandler:    Decides what the configuration's `urlCache` stores. `nil` by default.
    ///   - eventMonitors:            Monitors told of every request's events. None by default.
    public convenience init(
        session: URLSession,
        delegate: SessionDelegate,
        rootQueue: DispatchQueue,
        startRequestsImmediately: Bool = true,
        requestSetup: RequestSetup = .lazy,
        requestQueue: DispatchQueue? = nil,
        serializationQueue: DispatchQueue? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        serverTrustManager: ServerTrustManager? = nil,
        redirectHandler: (any RedirectHandler)? = nil,
        cachedResponseHandler: (any CachedResponseHandler)? = nil,
        eventMonitors: [any EventMonitor] = []
    ) {
        self.init(
            configuration: session.configuration, delegate: delegate, rootQueue: rootQueue,
            startRequestsImmediately: startRequestsImmediately, requestSetup: requestSetup, requestQueue: requestQueue,
            serializationQueue: serializationQueue, interceptor: interceptor, serverTrustManager: serverTrustManager,
            redirectHandler: redirectHandler, cachedResponseHandler: cachedResponseHandler,
            eventMonitors: eventMonitors)
        urlSession.write { $0 = session }
    }

    /// What watches each request: tracing and metrics. With no tracer and no metrics factory bootstrapped or given,
    /// nothing, which costs nothing.
    private static func observers(tracer: (any Tracer)?, metrics: MetricsOptions) -> (any RequestObserverMaking)? {
        let tracer = tracer ?? (InstrumentationSystem.tracer is NoOpTracer ? nil : InstrumentationSystem.tracer)
        var makers: [any RequestObserverMaking] = []
        if let tracer { makers.append(RequestTracing(tracer: tracer)) }
        if let metering = metrics.metering { makers.append(metering) }
        switch makers.count {
        case 0: return nil
        case 1: return makers[0]
        default: return CompositeRequestObserving(makers: makers)
        }
    }

    /// What watches the engine's connections: the session's metrics factory and its logger at `.debug`; `nil`, which
    /// costs nothing, when neither is on.
    private static func connectionMetering(metrics: MetricsOptions, logger: Logger) -> ConnectionMetering? {
        let metering = metrics.metering
        let debugLogger = logger.logLevel <= .debug ? logger : nil
        guard metering != nil || debugLogger != nil else { return nil }
        return ConnectionMetering(
            factory: metering?.factory, dimensions: metering?.dimensions ?? [], logger: debugLogger)
    }

    /// The default `logger`: discards everything.
    public static let disabledLogger = Logger(
        label: "org.bluebonnet.session", factory: { _ in SwiftLogNoOpLogHandler() })

    deinit {
        // Requests set up and waiting to start finish now, as in Alamofire; those on the wire end with the engine,
        // which is told to shut down without waiting (unless `shutdown()` already released it).
        let (requests, shutDown) = activity.read { ($0.requests, $0.phase == .shutDown) }
        for request in requests { request.abandonForSessionDeinit() }
        if !shutDown {
            context.transport.shutdown()
            webSockets.read()?.shutdown()
        }
        let made = urlSession.read()
        // Made at init whenever a monitor listens for these events.
        if let eventMonitor, let made, eventMonitor.handledEvents.contains(.other) {
            eventMonitor.urlSession(made, didBecomeInvalidWithError: nil)
        }
        made?.finishTasksAndInvalidate()
    }

    /// The engine a `Session` made inside `withTransport(_:make:)` uses instead of AsyncHTTPClient (`BluebonnetTesting`'s
    /// `StubTransport`, which orders events exactly). A task-local, so every public initializer keeps Alamofire's
    /// signature and the engine seam stays out of the API an app sees.
    @TaskLocal static var injectedTransport: (any HTTPTransport)?

    /// Makes a `Session` on `transport` instead of AsyncHTTPClient.
    ///
    /// - Parameters:
    ///   - transport: The engine.
    ///   - make:      Makes the session with any of the public initializers.
    /// - Returns: The session.
    @_spi(Transport) public static func withTransport(_ transport: any HTTPTransport, make: () -> Session) -> Session {
        $injectedTransport.withValue(transport) { make() }
    }

    // MARK: - RequestDelegate

    /// A copy of the session's configuration, as Alamofire's `sessionConfiguration` (`URLSession.configuration`
    /// returns a copy too): changing it changes nothing here.
    public var sessionConfiguration: URLSessionConfiguration {
        configurationCopy.copy() as? URLSessionConfiguration ?? configurationCopy
    }

    /// `startRequestsImmediately`, as Alamofire's `RequestDelegate` names it.
    public var startImmediately: Bool { startRequestsImmediately }

    // MARK: - All requests

    /// Runs `action` on `rootQueue` with every active request: one resumed, or set up at once (`.eager`), that has not
    /// finished, as in Alamofire.
    ///
    /// A `.lazy` request never resumed is not active: it has no `URLRequest`, no task and nothing to cancel.
    ///
    /// - Parameter action: The closure. Keep it short: it runs on `rootQueue`.
    public func withAllRequests(perform action: @escaping @Sendable (Set<Request>) -> Void) {
        rootQueue.async { [activity] in action(activity.read { $0.requests }) }
    }

    /// Cancels every active request, then calls `completion`.
    ///
    /// - Parameters:
    ///   - queue:      The queue `completion` runs on. `.main` by default.
    ///   - completion: Called once every active request has been told to cancel. `nil` by default.
    public func cancelAllRequests(
        completingOnQueue queue: DispatchQueue = .main, completion: (@Sendable () -> Void)? = nil
    ) {
        withAllRequests { requests in
            for request in requests { request.cancel() }
            queue.async { completion?() }
        }
    }

    func requestDidStart(_ request: Request) -> AFError? {
        activity.write { $0.start(request) }
    }

    func requestDidRestart(_ request: Request) {
        activity.write { _ = $0.requests.insert(request) }
    }

    public func cleanup(after request: Request) {
        activity.write { $0.end(request) }?.resume()
    }

    public func readyToPerform(request: Request) {
        if let refusal = requestDidStart(request) { return request.abandon(with: refusal) }
        request.createURLRequestOnRequestQueue(keepingAlive: self)
    }

    public func retryResult(
        for request: Request, dueTo error: AFError, completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        guard let retrier = request.retrier else {
            rootQueue.async { completion(.doNotRetry) }
            return
        }
        request.underlyingQueue.async { [self] in
            Confinement.assertOffEventLoop("A request retrier")
            retrier.retry(request, for: self, dueTo: error) { [rootQueue] result in
                rootQueue.async {
                    guard case let .doNotRetryWithError(retryError) = result else { return completion(result) }
                    completion(
                        .doNotRetryWithError(
                            AFError.requestRetryFailed(retryError: retryError, originalError: error)))
                }
            }
        }
    }

    public func retryRequest(_ request: Request, withDelay timeDelay: TimeInterval?) {
        request.sendRetry(after: timeDelay)
    }

    // MARK: - DataRequest

    /// Makes a `URLRequestConvertible` from a URL, method, parameters and encoding.
    struct RequestConvertible: URLRequestConvertible {
        let url: any URLConvertible
        let method: HTTPMethod
        let parameters: Parameters?
        let encoding: any ParameterEncoding
        let headers: HTTPHeaders?
        let requestModifier: RequestModifier?

        func asURLRequest() throws -> URLRequest {
            try encoding.encode(
                Session.modifiedRequest(url: url, method: method, headers: headers, modifier: requestModifier),
                with: parameters)
        }
    }

    /// The `URLRequest` both convertibles encode their parameters into: the URL, method and headers, then the
    /// request's modifier, as Alamofire orders them.
    static func modifiedRequest(
        url: any URLConvertible, method: HTTPMethod, headers: HTTPHeaders?, modifier: RequestModifier?
    ) throws -> URLRequest {
        var request = try URLRequest(url: url, method: method, headers: headers)
        try modifier?(&request)
        return request
    }

    /// Creates a `DataRequest` from a `URLRequest` made of the given parts.
    ///
    /// - Parameters:
    ///   - convertible:     `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - method:          `HTTPMethod` for the `URLRequest`. `.get` by default.
    ///   - parameters:      `Parameters` (a.k.a. `[String: any Any & Sendable]`) value to be encoded. `nil` by default.
    ///   - encoding:        `ParameterEncoding` to be used to encode the `parameters`. `URLEncoding.default` by default.
    ///   - headers:         `HTTPHeaders` value to be added to the `URLRequest`. `nil` by default.
    ///   - interceptor:     `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first response handler resumes the request; `nil` (the default)
    ///                      follows the session's `startRequestsImmediately`.
    ///   - requestModifier: `RequestModifier` applied to the `URLRequest` before encoding. `nil` by default.
    /// - Returns: The created `DataRequest`.
    open func request(
        _ convertible: any URLConvertible,
        method: HTTPMethod = .get,
        parameters: Parameters? = nil,
        encoding: any ParameterEncoding = URLEncoding.default,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        requestModifier: RequestModifier? = nil
    ) -> DataRequest {
        request(
            RequestConvertible(
                url: convertible, method: method, parameters: parameters, encoding: encoding,
                headers: headers, requestModifier: requestModifier), interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume)
    }

    /// Makes a `URLRequestConvertible` from a URL, method, `Encodable` parameters and encoder.
    struct RequestEncodableConvertible<Parameters: Encodable & Sendable>: URLRequestConvertible {
        let url: any URLConvertible
        let method: HTTPMethod
        let parameters: Parameters?
        let encoder: any ParameterEncoder
        let headers: HTTPHeaders?
        let requestModifier: RequestModifier?

        func asURLRequest() throws -> URLRequest {
            let request = try Session.modifiedRequest(
                url: url, method: method, headers: headers, modifier: requestModifier)
            return try parameters.map { try encoder.encode($0, into: request) } ?? request
        }
    }

    /// Creates a `DataRequest` from a `URLRequest` made of the given parts, with `Encodable` parameters.
    ///
    /// - Parameters:
    ///   - convertible:     `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - method:          `HTTPMethod` for the `URLRequest`. `.get` by default.
    ///   - parameters:      `Encodable` value to be encoded into the `URLRequest`. `nil` by default.
    ///   - encoder:         `ParameterEncoder` to be used to encode the `parameters`. `URLEncodedFormParameterEncoder.default` by default.
    ///   - headers:         `HTTPHeaders` value to be added to the `URLRequest`. `nil` by default.
    ///   - interceptor:     `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first response handler resumes the request; `nil` (the default)
    ///                      follows the session's `startRequestsImmediately`.
    ///   - requestModifier: `RequestModifier` applied to the `URLRequest` before encoding. `nil` by default.
    /// - Returns: The created `DataRequest`.
    open func request<Parameters: Encodable & Sendable>(
        _ convertible: any URLConvertible,
        method: HTTPMethod = .get,
        parameters: Parameters? = nil,
        encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        requestModifier: RequestModifier? = nil
    ) -> DataRequest {
        request(
            RequestEncodableConvertible(
                url: convertible, method: method, parameters: parameters, encoder: encoder,
                headers: headers, requestModifier: requestModifier), interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume)
    }

    /// Creates a `DataRequest` from a `URLRequestConvertible` value.
    ///
    /// - Parameters:
    ///   - convertible: `URLRequestConvertible` value to be used to create the `URLRequest`.
    ///   - interceptor: `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first response handler resumes the request; `nil` (the default)
    ///                  follows the session's `startRequestsImmediately`.
    /// - Returns: The created `DataRequest`.
    open func request(
        _ convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil
    ) -> DataRequest {
        let request = DataRequest(
            convertible: convertible,
            underlyingQueue: rootQueue,
            serializationQueue: serializationQueue,
            eventMonitor: eventMonitor,
            interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume,
            context: context,
            delegate: self
        )
        perform(request)
        return request
    }

    // MARK: - Downloads (in the class, so that subclasses can override them, as in Alamofire)

    /// Creates a `DownloadRequest` from a `URLRequest` made of the given parts.
    ///
    /// - Parameters:
    ///   - convertible:     `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - method:          `HTTPMethod` for the `URLRequest`. `.get` by default.
    ///   - parameters:      `Parameters` (a.k.a. `[String: any Any & Sendable]`) value to be encoded. `nil` by default.
    ///   - encoding:        `ParameterEncoding` to be used to encode the `parameters`. `URLEncoding.default` by default.
    ///   - headers:         `HTTPHeaders` value to be added to the `URLRequest`. `nil` by default.
    ///   - interceptor:     `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first response handler resumes the request; `nil` (the default)
    ///                  follows the session's `startRequestsImmediately`.
    ///   - requestModifier: `RequestModifier` applied to the `URLRequest` before encoding. `nil` by default.
    ///   - destination:     `DownloadRequest.Destination` closure used to determine where the file is moved. `nil`
    ///                      by default: a file of its own in the temporary directory.
    /// - Returns: The created `DownloadRequest`.
    open func download(
        _ convertible: any URLConvertible,
        method: HTTPMethod = .get,
        parameters: Parameters? = nil,
        encoding: any ParameterEncoding = URLEncoding.default,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        requestModifier: RequestModifier? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        download(
            RequestConvertible(
                url: convertible, method: method, parameters: parameters, encoding: encoding,
                headers: headers, requestModifier: requestModifier),
            interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, to: destination)
    }

    /// Creates a `DownloadRequest` from a `URLRequest` made of the given parts, with `Encodable` parameters.
    ///
    /// - Parameters:
    ///   - convertible:     `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - method:          `HTTPMethod` for the `URLRequest`. `.get` by default.
    ///   - parameters:      `Encodable` value to be encoded into the `URLRequest`. `nil` by default.
    ///   - encoder:         `ParameterEncoder` to be used to encode the `parameters`.
    ///                      `URLEncodedFormParameterEncoder.default` by default.
    ///   - headers:         `HTTPHeaders` value to be added to the `URLRequest`. `nil` by default.
    ///   - interceptor:     `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first response handler resumes the request; `nil` (the default)
    ///                  follows the session's `startRequestsImmediately`.
    ///   - requestModifier: `RequestModifier` applied to the `URLRequest` before encoding. `nil` by default.
    ///   - destination:     `DownloadRequest.Destination` closure used to determine where the file is moved. `nil`
    ///                      by default.
    /// - Returns: The created `DownloadRequest`.
    open func download<Parameters: Encodable & Sendable>(
        _ convertible: any URLConvertible,
        method: HTTPMethod = .get,
        parameters: Parameters? = nil,
        encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        requestModifier: RequestModifier? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        download(
            RequestEncodableConvertible(
                url: convertible, method: method, parameters: parameters, encoder: encoder,
                headers: headers, requestModifier: requestModifier),
            interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, to: destination)
    }

    /// Creates a `DownloadRequest` from a `URLRequestConvertible` value.
    ///
    /// - Parameters:
    ///   - convertible: `URLRequestConvertible` value to be used to create the `URLRequest`.
    ///   - interceptor: `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first response handler resumes the request; `nil` (the default)
    ///                  follows the session's `startRequestsImmediately`.
    ///   - destination: `DownloadRequest.Destination` closure used to determine where the file is moved. `nil` by
    ///                  default.
    /// - Returns: The created `DownloadRequest`.
    open func download(
        _ convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil, to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        makeDownload(
            .request(convertible), interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume,
            destination: destination)
    }

    /// Creates a `DownloadRequest` that continues an earlier download from its `resumeData`: it asks for the rest
    /// with `Range` and `If-Range`, appends a `206` to the partial file, and starts over on a `200` (the resource
    /// changed). Resume data that is malformed or whose partial file is gone fails with
    /// `AFError.createURLRequestFailed(error: DownloadResumeError)`.
    ///
    /// - Parameters:
    ///   - data:        The resume data of an earlier `DownloadRequest`.
    ///   - interceptor: `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first response handler resumes the request; `nil` (the default)
    ///                  follows the session's `startRequestsImmediately`.
    ///   - destination: `DownloadRequest.Destination` closure used to determine where the file is moved. `nil` by
    ///                  default.
    /// - Returns: The created `DownloadRequest`.
    open func download(
        resumingWith data: Data, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil, to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        makeDownload(
            .resumeData(data), interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume,
            destination: destination)
    }

    // MARK: - Streams

    /// Creates a `DataStreamRequest` from a `URLRequest` made of the given parts, with `Encodable` parameters.
    ///
    /// - Parameters:
    ///   - convertible:                      `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - method:                           `HTTPMethod` for the `URLRequest`. `.get` by default.
    ///   - parameters:                       `Encodable` value to be encoded into the `URLRequest`. `nil` by default.
    ///   - encoder:                          `ParameterEncoder` to be used to encode the `parameters`.
    ///                                       `URLEncodedFormParameterEncoder.default` by default.
    ///   - headers:                          `HTTPHeaders` value to be added to the `URLRequest`. `nil` by default.
    ///   - automaticallyCancelOnStreamError: Whether a stream handler that throws cancels the request. `false` by
    ///                                       default.
    ///   - interceptor:                      `RequestInterceptor` for this request. `nil` by default.
    ///   - shouldAutomaticallyResume:        Whether the first stream handler resumes the request; `nil` (the default)
    ///                                       follows the session's `startRequestsImmediately`.
    ///   - requestModifier:                  `RequestModifier` applied to the `URLRequest`. `nil` by default.
    /// - Returns: The created `DataStreamRequest`.
    open func streamRequest<Parameters: Encodable & Sendable>(
        _ convertible: any URLConvertible,
        method: HTTPMethod = .get,
        parameters: Parameters? = nil,
        encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default,
        headers: HTTPHeaders? = nil,
        automaticallyCancelOnStreamError: Bool = false,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        requestModifier: RequestModifier? = nil
    ) -> DataStreamRequest {
        streamRequest(
            RequestEncodableConvertible(
                url: convertible, method: method, parameters: parameters, encoder: encoder,
                headers: headers, requestModifier: requestModifier),
            automaticallyCancelOnStreamError: automaticallyCancelOnStreamError, interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume)
    }

    /// Creates a `DataStreamRequest` from a `URLRequest` made of the given parts, without parameters.
    ///
    /// - Parameters:
    ///   - convertible:                      `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - method:                           `HTTPMethod` for the `URLRequest`. `.get` by default.
    ///   - headers:                          `HTTPHeaders` value to be added to the `URLRequest`. `nil` by default.
    ///   - automaticallyCancelOnStreamError: Whether a stream handler that throws cancels the request. `false` by
    ///                                       default.
    ///   - interceptor:                      `RequestInterceptor` for this request. `nil` by default.
    ///   - shouldAutomaticallyResume:        Whether the first stream handler resumes the request; `nil` (the default)
    ///                                       follows the session's `startRequestsImmediately`.
    ///   - requestModifier:                  `RequestModifier` applied to the `URLRequest`. `nil` by default.
    /// - Returns: The created `DataStreamRequest`.
    open func streamRequest(
        _ convertible: any URLConvertible,
        method: HTTPMethod = .get,
        headers: HTTPHeaders? = nil,
        automaticallyCancelOnStreamError: Bool = false,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        requestModifier: RequestModifier? = nil
    ) -> DataStreamRequest {
        streamRequest(
            RequestEncodableConvertible<Empty>(
                url: convertible, method: method, parameters: nil,
                encoder: URLEncodedFormParameterEncoder.default, headers: headers,
                requestModifier: requestModifier),
            automaticallyCancelOnStreamError: automaticallyCancelOnStreamError, interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume)
    }

    /// Creates a `DataStreamRequest` from a `URLRequestConvertible` value.
    ///
    /// - Parameters:
    ///   - convertible:                      `URLRequestConvertible` value to be used to create the `URLRequest`.
    ///   - automaticallyCancelOnStreamError: Whether a stream handler that throws cancels the request. `false` by
    ///                                       default.
    ///   - interceptor:                      `RequestInterceptor` for this request. `nil` by default.
    ///   - shouldAutomaticallyResume:        Whether the first stream handler resumes the request; `nil` (the default)
    ///                                       follows the session's `startRequestsImmediately`.
    /// - Returns: The created `DataStreamRequest`.
    open func streamRequest(
        _ convertible: any URLRequestConvertible, automaticallyCancelOnStreamError: Bool = false,
        interceptor: (any RequestInterceptor)? = nil, shouldAutomaticallyResume: Bool? = nil
    ) -> DataStreamRequest {
        let request = DataStreamRequest(
            convertible: convertible, automaticallyCancelOnStreamError: automaticallyCancelOnStreamError,
            underlyingQueue: rootQueue, serializationQueue: serializationQueue, eventMonitor: eventMonitor,
            interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, context: context,
            delegate: self)
        perform(request)
        return request
    }

    // MARK: - WebSockets

    /// Creates a `WebSocketRequest` to `url`.
    ///
    /// - Parameters:
    ///   - url:                       The `URLConvertible` (`ws:`, `wss:`, `http:` or `https:`).
    ///   - configuration:             The socket's options. `.default` by default.
    ///   - headers:                   `HTTPHeaders` for the upgrade request. `nil` by default.
    ///   - interceptor:               `RequestInterceptor` for this request. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first handler resumes the request; `nil` (the default) follows the
    ///                                session's `startRequestsImmediately`.
    ///   - requestModifier:           `RequestModifier` applied to the `URLRequest`. `nil` by default.
    /// - Returns: The created `WebSocketRequest`.
    open func webSocketRequest(
        to url: any URLConvertible,
        configuration: WebSocketRequest.Configuration = .default,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        requestModifier: RequestModifier? = nil
    ) -> WebSocketRequest {
        webSocketRequest(
            to: url, configuration: configuration, parameters: Empty?.none,
            encoder: URLEncodedFormParameterEncoder.default, headers: headers, interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume, requestModifier: requestModifier)
    }

    /// Creates a `WebSocketRequest` to `url` with `parameters` encoded by `encoder` (in the query, by default).
    ///
    /// - Parameters:
    ///   - url:                       The `URLConvertible` (`ws:`, `wss:`, `http:` or `https:`).
    ///   - configuration:             The socket's options. `.default` by default.
    ///   - parameters:                `Encodable` parameters. `nil` by default.
    ///   - encoder:                   The `ParameterEncoder`. `URLEncodedFormParameterEncoder.default` by default.
    ///   - headers:                   `HTTPHeaders` for the upgrade request. `nil` by default.
    ///   - interceptor:               `RequestInterceptor` for this request. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first handler resumes the request; `nil` (the default) follows the
    ///                                session's `startRequestsImmediately`.
    ///   - requestModifier:           `RequestModifier` applied to the `URLRequest`. `nil` by default.
    /// - Returns: The created `WebSocketRequest`.
    open func webSocketRequest<Parameters>(
        to url: any URLConvertible,
        configuration: WebSocketRequest.Configuration = .default,
        parameters: Parameters? = nil,
        encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        requestModifier: RequestModifier? = nil
    ) -> WebSocketRequest where Parameters: Encodable & Sendable {
        webSocketRequest(
            performing: RequestEncodableConvertible(
                url: url, method: .get, parameters: parameters, encoder: encoder, headers: headers,
                requestModifier: requestModifier),
            configuration: configuration, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume
        )
    }

    /// Creates a `WebSocketRequest` from a `URLRequestConvertible`.
    ///
    /// - Parameters:
    ///   - convertible:               The `URLRequestConvertible`.
    ///   - configuration:             The socket's options. `.default` by default.
    ///   - interceptor:               `RequestInterceptor` for this request. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first handler resumes the request; `nil` (the default) follows the
    ///                                session's `startRequestsImmediately`.
    /// - Returns: The created `WebSocketRequest`.
    open func webSocketRequest(
        performing convertible: any URLRequestConvertible,
        configuration: WebSocketRequest.Configuration = .default,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil
    ) -> WebSocketRequest {
        let request = WebSocketRequest(
            convertible: convertible, configuration: configuration, underlyingQueue: rootQueue,
            serializationQueue: serializationQueue, eventMonitor: eventMonitor, interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume, context: context, delegate: self)
        perform(request)
        return request
    }

    // MARK: - Uploads

    /// Creates an `UploadRequest` that sends `data`.
    ///
    /// - Parameters:
    ///   - data:            The body.
    ///   - convertible:     The `URLConvertible` to send it to.
    ///   - method:          The `HTTPMethod`. `.post` by default.
    ///   - headers:         `HTTPHeaders` for the request. `nil` by default.
    ///   - interceptor:     `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first response handler resumes the request; `nil` (the default)
    ///                      follows the session's `startRequestsImmediately`.
    ///   - fileManager:     The `FileManager` for the request. `.default` by default.
    ///   - requestModifier: `RequestModifier` applied to the `URLRequest` when it is made. `nil` by default.
    /// - Returns: The created `UploadRequest`.
    open func upload(
        _ data: Data,
        to convertible: any URLConvertible,
        method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        upload(
            data,
            with: Self.uploadRequest(convertible, method: method, headers: headers, requestModifier: requestModifier),
            interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }

    /// Creates an `UploadRequest` that sends `data` with the given `URLRequest`.
    ///
    /// - Parameters:
    ///   - data:        The body.
    ///   - convertible: The `URLRequestConvertible`.
    ///   - interceptor: `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first response handler resumes the request; `nil` (the default)
    ///                  follows the session's `startRequestsImmediately`.
    ///   - fileManager: The `FileManager` for the request. `.default` by default.
    /// - Returns: The created `UploadRequest`.
    open func upload(
        _ data: Data, with convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default
    ) -> UploadRequest {
        upload(
            Upload(request: convertible, uploadable: UploadRequest.Uploadable.data(data)), interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }

    /// Creates an `UploadRequest` that streams the file at `fileURL` from disk.
    ///
    /// - Parameters:
    ///   - fileURL:         The `file:` URL of the body.
    ///   - convertible:     The `URLConvertible` to send it to.
    ///   - method:          The `HTTPMethod`. `.post` by default.
    ///   - headers:         `HTTPHeaders` for the request. `nil` by default.
    ///   - interceptor:     `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first response handler resumes the request; `nil` (the default)
    ///                      follows the session's `startRequestsImmediately`.
    ///   - fileManager:     The `FileManager` used to measure the file. `.default` by default.
    ///   - requestModifier: `RequestModifier` applied to the `URLRequest` when it is made. `nil` by default.
    /// - Returns: The created `UploadRequest`.
    open func upload(
        _ fileURL: URL,
        to convertible: any URLConvertible,
        method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        upload(
            fileURL,
            with: Self.uploadRequest(convertible, method: method, headers: headers, requestModifier: requestModifier),
            interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }

    /// Creates an `UploadRequest` that streams the file at `fileURL` with the given `URLRequest`.
    ///
    /// - Parameters:
    ///   - fileURL:     The `file:` URL of the body.
    ///   - convertible: The `URLRequestConvertible`.
    ///   - interceptor: `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first response handler resumes the request; `nil` (the default)
    ///                  follows the session's `startRequestsImmediately`.
    ///   - fileManager: The `FileManager` used to measure the file. `.default` by default.
    /// - Returns: The created `UploadRequest`.
    open func upload(
        _ fileURL: URL, with convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default
    ) -> UploadRequest {
        upload(
            Upload(request: convertible, uploadable: UploadRequest.Uploadable.file(fileURL, shouldRemove: false)),
            interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }

    /// Creates an `UploadRequest` that sends what `stream` yields, with chunked transfer encoding.
    ///
    /// - Parameters:
    ///   - stream:          The `InputStream`; it is read once, off the caller's thread.
    ///   - convertible:     The `URLConvertible` to send it to.
    ///   - method:          The `HTTPMethod`. `.post` by default.
    ///   - headers:         `HTTPHeaders` for the request. `nil` by default.
    ///   - interceptor:     `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - fileManager:     The `FileManager` for the request. `.default` by default.
    ///   - requestModifier: `RequestModifier` applied to the `URLRequest` when it is made. `nil` by default.
    /// - Returns: The created `UploadRequest`.
    open func upload(
        _ stream: InputStream,
        to convertible: any URLConvertible,
        method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        fileManager: FileManager = .default,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        upload(
            stream,
            with: Self.uploadRequest(convertible, method: method, headers: headers, requestModifier: requestModifier),
            interceptor: interceptor, fileManager: fileManager)
    }

    /// Creates an `UploadRequest` that sends what `stream` yields with the given `URLRequest`.
    ///
    /// - Parameters:
    ///   - stream:      The `InputStream`; it is read once, off the caller's thread.
    ///   - convertible: The `URLRequestConvertible`.
    ///   - interceptor: `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first response handler resumes the request; `nil` (the default)
    ///                  follows the session's `startRequestsImmediately`.
    ///   - fileManager: The `FileManager` for the request. `.default` by default.
    /// - Returns: The created `UploadRequest`.
    open func upload(
        _ stream: InputStream, with convertible: any URLRequestConvertible,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default
    ) -> UploadRequest {
        upload(
            Upload(request: convertible, uploadable: UploadRequest.Uploadable.stream(stream)), interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }

    /// Creates an `UploadRequest` that sends the multipart form `multipartFormData` builds.
    ///
    /// The builder runs at once, on the caller's thread; the form is encoded later, on `requestQueue`: in memory
    /// below `encodingMemoryThreshold`, otherwise into a temporary file that is streamed, then removed.
    ///
    /// - Parameters:
    ///   - multipartFormData:       The closure that appends the form's parts.
    ///   - url:                     The `URLConvertible` to send it to.
    ///   - encodingMemoryThreshold: The size above which the form goes through a file. 10 MB by default.
    ///   - method:                  The `HTTPMethod`. `.post` by default.
    ///   - headers:                 `HTTPHeaders` for the request. `nil` by default.
    ///   - interceptor:             `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - fileManager:             The `FileManager` for the form and its temporary file. `.default` by default.
    ///   - requestModifier:         `RequestModifier` applied to the `URLRequest` when it is made. `nil` by default.
    /// - Returns: The created `UploadRequest`.
    open func upload(
        multipartFormData: @escaping (MultipartFormData) -> Void,
        to url: any URLConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        fileManager: FileManager = .default,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        let form = MultipartFormData(fileManager: fileManager)
        multipartFormData(form)
        return upload(
            multipartFormData: form, to: url, usingThreshold: encodingMemoryThreshold, method: method,
            headers: headers, interceptor: interceptor, fileManager: fileManager, requestModifier: requestModifier)
    }

    /// Creates an `UploadRequest` that sends the multipart form `multipartFormData` builds, with the given
    /// `URLRequest`.
    ///
    /// - Parameters:
    ///   - multipartFormData:       The closure that appends the form's parts; it runs at once.
    ///   - request:                 The `URLRequestConvertible`.
    ///   - encodingMemoryThreshold: The size above which the form goes through a file. 10 MB by default.
    ///   - interceptor:             `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - fileManager:             The `FileManager` for the form and its temporary file. `.default` by default.
    /// - Returns: The created `UploadRequest`.
    open func upload(
        multipartFormData: @escaping (MultipartFormData) -> Void,
        with request: any URLRequestConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        interceptor: (any RequestInterceptor)? = nil,
        fileManager: FileManager = .default
    ) -> UploadRequest {
        let form = MultipartFormData(fileManager: fileManager)
        multipartFormData(form)
        return upload(
            multipartFormData: form, with: request, usingThreshold: encodingMemoryThreshold, interceptor: interceptor,
            fileManager: fileManager)
    }

    /// Creates an `UploadRequest` that sends a `MultipartFormData`.
    ///
    /// - Parameters:
    ///   - multipartFormData:       The form.
    ///   - url:                     The `URLConvertible` to send it to.
    ///   - encodingMemoryThreshold: The size above which the form goes through a file. 10 MB by default.
    ///   - method:                  The `HTTPMethod`. `.post` by default.
    ///   - headers:                 `HTTPHeaders` for the request. `nil` by default.
    ///   - interceptor:             `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first response handler resumes the request; the session decides when `nil`
    ///                              (the default).
    ///   - fileManager:             The `FileManager` for the temporary file. `.default` by default.
    ///   - requestModifier:         `RequestModifier` applied to the `URLRequest` when it is made. `nil` by default.
    /// - Returns: The created `UploadRequest`.
    open func upload(
        multipartFormData: MultipartFormData,
        to url: any URLConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        let request = Self.uploadRequest(url, method: method, headers: headers, requestModifier: requestModifier)
        return upload(
            multipartFormData: multipartFormData, with: request, usingThreshold: encodingMemoryThreshold,
            interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }

    /// Creates an `UploadRequest` that sends a `MultipartFormData` with the given `URLRequest`.
    ///
    /// - Parameters:
    ///   - multipartFormData:       The form.
    ///   - request:                 The `URLRequestConvertible`.
    ///   - encodingMemoryThreshold: The size above which the form goes through a file. 10 MB by default.
    ///   - interceptor:             `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first response handler resumes the request; the session decides when `nil`
    ///                              (the default).
    ///   - fileManager:             The `FileManager` for the temporary file. `.default` by default.
    /// - Returns: The created `UploadRequest`.
    open func upload(
        multipartFormData: MultipartFormData,
        with request: any URLRequestConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default
    ) -> UploadRequest {
        upload(
            MultipartUpload(
                multipartFormData: multipartFormData, encodingMemoryThreshold: encodingMemoryThreshold,
                request: request, fileManager: fileManager), interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }

    /// With `.eager` setup, makes the request's `URLRequest` on `requestQueue` at once; a `.lazy` request makes it on
    /// its first `resume()`.
    func perform(_ request: Request) {
        guard requestSetup == .eager else { return }
        readyToPerform(request: request)
    }
}
