import Foundation
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
open class Session: @unchecked Sendable, RequestDelegate {
    // @unchecked: every stored property is immutable; the set of active requests is behind its own lock.

    /// The shared `Session`, used by `AF`; it lives for the whole process. It posts Alamofire's notifications.
    public static let `default` = Session(eventMonitors: [AlamofireNotifications()])

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

    /// A `URLSession` on this session's configuration, as Alamofire's `Session.session`, for code that reads
    /// `session.configuration` (its cookie storage, cache and headers are this session's own objects). Made on first
    /// use. Bluebonnet sends nothing through it: tasks made on it directly are FoundationNetworking's.
    public var session: URLSession {
        urlSession.write { made in
            if let made { return made }
            let urlSession = URLSession(configuration: configurationCopy)
            made = urlSession
            return urlSession
        }
    }

    private let configurationCopy: URLSessionConfiguration
    private let urlSession = Protected<URLSession?>(nil)
    /// The monitor told of every request's events, when any monitor was given.
    public let eventMonitor: CompositeEventMonitor?
    /// The largest response body, in decoded bytes, a request holds in memory; `nil` for no limit.
    public let maximumResponseSize: Int64?
    /// Where the session writes request lifecycle lines (`.debug`), with each request's id as metadata; it is handed to
    /// AsyncHTTPClient too, for its own lines. Discards everything by default.
    public let logger: Logger

    /// Requests resumed and not yet finished, for `withAllRequests(perform:)` and `cancelAllRequests`.
    private let activeRequests = Protected<Set<Request>>([])

    /// The default `maximumResponseSize`: 100 MiB.
    public static let defaultMaximumResponseSize: Int64 = 100 * 1024 * 1024

    let context: SessionContext

    /// Creates a `Session`.
    ///
    /// - Parameters:
    ///   - configuration:            The `URLSessionConfiguration` whose timeouts, additional headers and
    ///                               connections per host the engine honours. `URLSessionConfiguration.af.default`
    ///                               by default.
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
    public init(
        configuration: URLSessionConfiguration = URLSessionConfiguration.af.default,
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
        logger: Logger = Session.disabledLogger
    ) {
        self.requestSetup = requestSetup
        // A copy, as URLSession keeps: later changes to the caller's configuration change nothing here.
        configurationCopy = configuration.copy() as? URLSessionConfiguration ?? configuration
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
        let engine =
            Self.injectedTransport
            ?? AsyncHTTPClientTransport(
                configuration: TransportConfiguration(
                    requestTimeout: requestTimeout,
                    maximumConnectionsPerHost: maximumConnections,
                    serverTrustManager: serverTrustManager,
                    tls: tls,
                    proxies: ProxyConfiguration(dictionary: configuration.connectionProxyDictionary)
                ))
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
            requestSetup: requestSetup,
            createsRequestsOnResume: requestSetup == .lazy && requestQueue == nil,
            interceptor: interceptor,
            requestQueue: self.requestQueue,
            maximumResponseSize: maximumResponseSize,
            logger: sessionLogger,
            preparers: preparers,
            headSteps: headSteps,
            followers: followers
        )
    }

    /// The default `logger`: discards everything.
    public static let disabledLogger = Logger(
        label: "org.bluebonnet.session", factory: { _ in SwiftLogNoOpLogHandler() })

    deinit {
        context.transport.shutdown()
        urlSession.read()?.finishTasksAndInvalidate()
    }

    /// The engine a `Session` made inside `withTransport(_:make:)` uses instead of AsyncHTTPClient: a test double that
    /// orders events exactly (the lifecycle race tests' scripted transport). A task-local, so a public initializer
    /// keeps Alamofire's signature and nothing else can reach it.
    @TaskLocal static var injectedTransport: (any HTTPTransport)?

    /// Makes a `Session` on `transport` instead of AsyncHTTPClient.
    ///
    /// - Parameters:
    ///   - transport: The engine.
    ///   - make:      Makes the session with any of the public initializers.
    /// - Returns: The session.
    static func withTransport(_ transport: any HTTPTransport, make: () -> Session) -> Session {
        $injectedTransport.withValue(transport) { make() }
    }

    // MARK: - All requests

    /// Runs `action` on `rootQueue` with every request that was resumed and has not finished.
    ///
    /// A request that was never resumed is not active: it has no connection and nothing to cancel.
    ///
    /// - Parameter action: The closure. Keep it short: it runs on `rootQueue`.
    public func withAllRequests(perform action: @escaping @Sendable (Set<Request>) -> Void) {
        rootQueue.async { [activeRequests] in action(activeRequests.read()) }
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

    func requestDidStart(_ request: Request) {
        activeRequests.write { _ = $0.insert(request) }
    }

    func requestDidEnd(_ request: Request) {
        activeRequests.write { _ = $0.remove(request) }
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
            var request = try URLRequest(url: url, method: method, headers: headers)
            try requestModifier?(&request)
            return try encoding.encode(request, with: parameters)
        }
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
            var request = try URLRequest(url: url, method: method, headers: headers)
            try requestModifier?(&request)
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

    /// With `.eager` setup, makes the request's `URLRequest` on `requestQueue` at once; a `.lazy` request makes it on
    /// its first `resume()`.
    func perform(_ request: Request) {
        guard requestSetup == .eager else { return }
        request.createURLRequestOnRequestQueue()
    }
}
