import Foundation
import Logging
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a `Request` needs from its `Session`, fixed when the request is made so it never reads session state
/// across threads.
struct SessionContext: Sendable {
    let transport: any HTTPTransport
    /// `URLSessionConfiguration.httpAdditionalHeaders`, sent unless the request sets the same name.
    let additionalHeaders: HTTPHeaders
    /// Whether every one of `additionalHeaders` passes `HeaderValidator`: checked once, when the session is made,
    /// rather than on every request.
    let additionalHeadersAreValid: Bool
    /// `URLSessionConfiguration.timeoutIntervalForRequest`: the engine's idle timeout.
    let requestTimeout: TimeInterval
    /// `URLSessionConfiguration.timeoutIntervalForResource`: a deadline for the whole request, every hop included.
    let resourceTimeout: TimeInterval?
    let startRequestsImmediately: Bool
    /// Whether each request makes its `URLRequest` as soon as it is made (`Session.requestSetup` `.eager`), rather
    /// than on its first `resume()`.
    let setsUpEagerly: Bool
    /// Whether a request's `URLRequest` is made inline by its first `resume()` (the default queues) rather than on
    /// `requestQueue`: the first handler resumes the request at once, so a hop to another thread would only add a
    /// context switch to every request.
    let createsRequestsOnResume: Bool
    /// The session's interceptor, composed with each request's own.
    let interceptor: (any RequestInterceptor)?
    /// `Session.requestQueue`, where a `URLRequest` is made when no `resume()` makes it inline.
    let requestQueue: DispatchQueue

    /// The largest body held in memory, in bytes; `nil` for no limit. A request may set its own.
    let maximumResponseSize: Int64?
    /// `Session.logger`, or `nil` when it discards `.debug`, so a request checks one optional to skip logging.
    let logger: Logger?
    /// What features add to each hop before it leaves, in order.
    let preparers: [any HopPreparing]
    /// What features do with each response head, in order, before its body is read.
    let headSteps: [any ResponseHeadStep]
    /// What decides whether a finished hop leads to another, in order: the first that takes a response decides.
    let followers: [any HopFollowing]
    /// Makes each request's observer (tracing, metrics); `nil` when nothing watches, which costs nothing.
    var observers: (any RequestObserverMaking)? = nil

    /// The request as it goes on the wire, or the error that keeps it from being sent.
    ///
    /// - Parameters:
    ///   - urlRequest:              The hop's request.
    ///   - deadline:                When the whole request must end.
    ///   - sendsSessionCredentials: Whether the session's `Authorization`, `Proxy-Authorization` and `Cookie`
    ///                              headers go along: only while the hop stays on the origin of the first request.
    ///   - maximumBodySize:         The limit on the body held in memory.
    ///   - request:                 The request sending the hop, for the preparers.
    ///   - features:                The request's feature values, for the preparers.
    func transportRequest(
        for urlRequest: URLRequest,
        deadline: Date?,
        sendsSessionCredentials: Bool,
        maximumBodySize: Int64?,
        of request: Request,
        features: FeatureValues
    ) throws -> TransportRequest {
        guard let url = urlRequest.url else {
            throw AFError.parameterEncodingFailed(reason: .missingURL)
        }
        switch RequestTarget.problem(with: url, webSocket: request.kind.carriesWebSocket) {
        case nil:
            break
        case _ where url.scheme == nil || url.host?.isEmpty != false:
            // A URL that parses but names no scheme or no host (`"invalid"`, `"/path"`, `"http://"`) is one the
            // engine cannot load, as URLSession says for Alamofire; `invalidURL` is for strings that do not parse.
            throw AFError.sessionTaskFailed(
                error: URLError(.unsupportedURL, userInfo: [NSURLErrorFailingURLErrorKey: url]))
        case .unsupportedScheme:
            throw AFError.urlRequestValidationFailed(reason: .unsupportedURLScheme(url.scheme))
        case .invalidHost, .invalidPort:
            throw AFError.invalidURL(url: url)
        }
        let method = urlRequest.httpMethod ?? "GET"
        guard HeaderValidator.isValidName(method) else {
            throw AFError.urlRequestValidationFailed(reason: .invalidHTTPMethod(method))
        }
        // Merged into a plain list, not into the URLRequest: every URLRequest mutation copies an NSMutableURLRequest.
        let own = urlRequest.allHTTPHeaderFields ?? [:]
        // One allocation: room for the request's fields, the session's and one a preparer adds (`Cookie`).
        var headers: [(name: String, value: String)] = []
        headers.reserveCapacity(own.count + additionalHeaders.count + 1)
        for (name, value) in own { headers.append((name, value)) }
        let sessionHeadersStart = headers.count
        if !additionalHeaders.isEmpty {
            for header in additionalHeaders
            where !own.keys.contains(where: { $0.equalsIgnoringCase(header.name) }) {
                if !sendsSessionCredentials, Origin.isCredentialHeader(header.name) { continue }
                headers.append((header.name, header.value))
            }
        }
        // URLSession's rule: the request's own interval applies when it is tighter than the session's.
        let idle =
            urlRequest.timeoutInterval > 0 && urlRequest.timeoutInterval < requestTimeout
            ? urlRequest.timeoutInterval : nil
        var hop = TransportRequest(
            urlRequest: urlRequest, headers: headers, idleTimeout: idle, deadline: deadline,
            maximumBodySize: maximumBodySize, logger: logger)
        let sessionHeaders = sessionHeadersStart..<headers.count
        for preparer in preparers { preparer.prepare(&hop, of: request, features: features) }
        // The session's headers were checked once; the request's own and what preparers added, every time.
        if additionalHeadersAreValid && !sessionHeaders.isEmpty && hop.headers.count >= sessionHeaders.upperBound {
            try HeaderValidator.validate(hop.headers[..<sessionHeaders.lowerBound])
            try HeaderValidator.validate(hop.headers[sessionHeaders.upperBound...])
        } else {
            try HeaderValidator.validate(hop.headers[...])
        }
        return hop
    }
}

/// Refuses header bytes that would let a value forge further headers or split the request.
enum HeaderValidator {
    static func validate(_ headers: ArraySlice<(name: String, value: String)>) throws {
        for (name, value) in headers {
            guard isValidName(name) else {
                throw AFError.urlRequestValidationFailed(reason: .invalidHeaderName(name))
            }
            guard isValidValue(value) else {
                throw AFError.urlRequestValidationFailed(reason: .invalidHeaderValue(name: name))
            }
        }
    }

    /// RFC 9110 `token`: visible ASCII but delimiters.
    static func isValidName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy(isTokenByte)
    }

    /// Whether `byte` is an RFC 9110 `tchar`.
    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
            UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            true
        default:
            isASCIIAlphanumeric(byte)
        }
    }

    /// Whether `byte` is an ASCII letter or digit.
    static func isASCIIAlphanumeric(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default: false
        }
    }

    static func isValidValue(_ value: String) -> Bool {
        !value.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }
    }
}

/// What a request knows of the session that made it, as Alamofire's `RequestDelegate`: the request calls these as its
/// lifecycle reaches them.
public protocol RequestDelegate: AnyObject, Sendable {
    /// The configuration of the session (its headers, cookie storage, cache, timeouts).
    var sessionConfiguration: URLSessionConfiguration { get }
    /// Whether the session starts a request when its first response handler is added.
    var startImmediately: Bool { get }

    /// The request is ready to be performed: its `URLRequest` is made and adapted now, as a session with
    /// `requestSetup: .eager` does for each request it makes (a request of a `.lazy` session makes it on its first
    /// `resume()`).
    ///
    /// - Parameter request: The `Request`.
    func readyToPerform(request: Request)

    /// The request ended: the session stops counting it as active.
    ///
    /// - Parameter request: The `Request` to clean up after.
    func cleanup(after request: Request)

    /// Asks the request's retriers (the session's interceptor, then the request's) whether it is sent again after
    /// `error`; a retrier's own failure is `.doNotRetryWithError(.requestRetryFailed(...))`.
    ///
    /// - Parameters:
    ///   - request:    The `Request` that failed.
    ///   - error:      Why it failed.
    ///   - completion: Takes the `RetryResult`, on the session's `rootQueue`.
    func retryResult(for request: Request, dueTo error: AFError, completion: @escaping @Sendable (RetryResult) -> Void)

    /// Sends the request again, after `timeDelay` when there is one, once its retriers decided so; a request whose
    /// lifecycle is not waiting for a retry (it was cancelled meanwhile, say) is left as it is.
    ///
    /// - Parameters:
    ///   - request:   The `Request` to send again.
    ///   - timeDelay: The delay before it is sent, if any.
    func retryRequest(_ request: Request, withDelay timeDelay: TimeInterval?)
}

/// What a `Request` tells the `Session` that made it while the session lives.
protocol RequestLifecycleDelegate: RequestDelegate {
    /// The session's `URLSession`, handed to URLSession's events (`urlSession(...)`) a monitor is told of.
    var eventURLSession: URLSession { get }
    /// The request was resumed for the first time: it is active until it ends. Returns why it may not start (its
    /// session is shutting down), or `nil`.
    func requestDidStart(_ request: Request) -> AFError?
    /// A request that ended is sent again (a serializer's retry): it is active again, whatever the session's state.
    func requestDidRestart(_ request: Request)
    /// The engine that carries the session's WebSockets (`RequestKind.Route.webSocket`), made when first asked for.
    var webSocketTransport: any WebSocketTransport { get }
}
