import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Retries idempotent requests that failed with a transient status code or network error, with exponential backoff,
/// as Alamofire's policy does; beyond Alamofire, a `Retry-After` on a 429 or 503 sets the delay.
open class RetryPolicy: @unchecked Sendable, RequestInterceptor {
    // @unchecked: every stored property is an immutable `Sendable` value; `open` forbids checked `Sendable`.

    /// 2 retries.
    public static let defaultRetryLimit: UInt = 2
    /// A backoff base of 2.
    public static let defaultExponentialBackoffBase: UInt = 2
    /// A backoff scale of 0.5 s.
    public static let defaultExponentialBackoffScale: Double = 0.5
    /// The methods RFC 9110 calls idempotent: DELETE, GET, HEAD, OPTIONS, PUT, TRACE.
    public static let defaultRetryableHTTPMethods: Set<HTTPMethod> = [.delete, .get, .head, .options, .put, .trace]
    /// 408, 500, 502, 503, 504.
    public static let defaultRetryableHTTPStatusCodes: Set<Int> = [408, 500, 502, 503, 504]
    /// The `URLError` codes of failures a later attempt may not meet (connectivity, DNS, timeouts, bad data).
    public static let defaultRetryableURLErrorCodes: Set<URLError.Code> = [
        .backgroundSessionInUseByAnotherProcess, .backgroundSessionWasDisconnected, .badServerResponse, .callIsActive,
        .cannotConnectToHost, .cannotFindHost, .cannotLoadFromNetwork, .dataNotAllowed, .dnsLookupFailed,
        .downloadDecodingFailedMidStream, .downloadDecodingFailedToComplete, .internationalRoamingOff,
        .networkConnectionLost, .notConnectedToInternet, .secureConnectionFailed, .serverCertificateHasBadDate,
        .serverCertificateNotYetValid, .timedOut,
    ]
    /// The longest `Retry-After` honoured: 60 s. A server asking for longer is not retried.
    public static let defaultMaximumRetryAfter: TimeInterval = 60
    /// The status codes whose `Retry-After` header sets the delay (RFC 9110 §10.2.3).
    public static let retryAfterStatusCodes: Set<Int> = [429, 503]

    /// How many times a request may be retried.
    public let retryLimit: UInt
    /// The backoff base: the n-th retry waits `scale × base^n` seconds.
    public let exponentialBackoffBase: UInt
    /// The backoff scale, in seconds.
    public let exponentialBackoffScale: Double
    /// The methods that may be retried.
    public let retryableHTTPMethods: Set<HTTPMethod>
    /// The status codes that are retried (the request must be validated for a status code to fail it).
    public let retryableHTTPStatusCodes: Set<Int>
    /// The `URLError` codes that are retried.
    public let retryableURLErrorCodes: Set<URLError.Code>
    /// The longest `Retry-After` the policy waits; a longer one ends the request with its error.
    public let maximumRetryAfter: TimeInterval

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - retryLimit:               How many times a request may be retried. 2 by default.
    ///   - exponentialBackoffBase:   The backoff base, at least 2. 2 by default.
    ///   - exponentialBackoffScale:  The backoff scale in seconds. 0.5 by default.
    ///   - retryableHTTPMethods:     The methods that may be retried. The idempotent ones by default.
    ///   - retryableHTTPStatusCodes: The status codes that are retried. 408, 500, 502, 503 and 504 by default.
    ///   - retryableURLErrorCodes:   The `URLError` codes that are retried. `defaultRetryableURLErrorCodes` by default.
    ///   - maximumRetryAfter:        The longest `Retry-After` honoured. 60 s by default.
    public init(
        retryLimit: UInt = RetryPolicy.defaultRetryLimit,
        exponentialBackoffBase: UInt = RetryPolicy.defaultExponentialBackoffBase,
        exponentialBackoffScale: Double = RetryPolicy.defaultExponentialBackoffScale,
        retryableHTTPMethods: Set<HTTPMethod> = RetryPolicy.defaultRetryableHTTPMethods,
        retryableHTTPStatusCodes: Set<Int> = RetryPolicy.defaultRetryableHTTPStatusCodes,
        retryableURLErrorCodes: Set<URLError.Code> = RetryPolicy.defaultRetryableURLErrorCodes,
        maximumRetryAfter: TimeInterval = RetryPolicy.defaultMaximumRetryAfter
    ) {
        precondition(exponentialBackoffBase >= 2, "The `exponentialBackoffBase` must be a minimum of 2.")
        self.retryLimit = retryLimit
        self.exponentialBackoffBase = exponentialBackoffBase
        self.exponentialBackoffScale = exponentialBackoffScale
        self.retryableHTTPMethods = retryableHTTPMethods
        self.retryableHTTPStatusCodes = retryableHTTPStatusCodes
        self.retryableURLErrorCodes = retryableURLErrorCodes
        self.maximumRetryAfter = maximumRetryAfter
    }

    /// Retries with backoff while under the limit and `shouldRetry(request:dueTo:)` agrees.
    ///
    /// - Parameters:
    ///   - request:    The `Request`.
    ///   - session:    The `Session`.
    ///   - error:      The error.
    ///   - completion: Called with `.retryWithDelay` or `.doNotRetry`.
    open func retry(
        _ request: Request, for session: Session, dueTo error: any Error,
        completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        guard request.retryCount < retryLimit, shouldRetry(request: request, dueTo: error) else {
            completion(.doNotRetry)
            return
        }
        let backoff = pow(Double(exponentialBackoffBase), Double(request.retryCount)) * exponentialBackoffScale
        guard let response = request.response, Self.retryAfterStatusCodes.contains(response.statusCode),
            let retryAfter = Self.retryAfter(in: response)
        else {
            completion(.retryWithDelay(backoff))
            return
        }
        completion(retryAfter <= maximumRetryAfter ? .retryWithDelay(max(backoff, retryAfter)) : .doNotRetry)
    }

    /// Whether `request` may be retried after `error`: its method is retryable, and its status code or the
    /// `URLError` behind the error is.
    ///
    /// - Parameters:
    ///   - request: The `Request`.
    ///   - error:   The error.
    /// - Returns: Whether to retry.
    open func shouldRetry(request: Request, dueTo error: any Error) -> Bool {
        guard let method = request.request?.method, retryableHTTPMethods.contains(method) else { return false }
        if let status = request.response?.statusCode, retryableHTTPStatusCodes.contains(status) { return true }
        let code = (error as? URLError)?.code ?? (error.asAFError?.underlyingError as? URLError)?.code
        return code.map(retryableURLErrorCodes.contains) ?? false
    }

    /// The delay a `Retry-After` header asks for, in seconds from now: delta-seconds or an HTTP-date (RFC 9110
    /// §10.2.3); `nil` when absent or malformed.
    ///
    /// - Parameters:
    ///   - response: The response.
    ///   - now:      The current time.
    /// - Returns: The delay, never negative.
    static func retryAfter(in response: HTTPURLResponse, now: Date = Date()) -> TimeInterval? {
        guard let value = response.value(forHTTPHeaderField: "Retry-After")?.trimmingCharacters(in: .whitespaces),
            !value.isEmpty
        else { return nil }
        if value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            // Digits only; too many of them is a delay no one waits for, not a crash.
            return value.count > 12 ? .infinity : TimeInterval(value)
        }
        return HTTPDate.parse(value).map { max(0, $0.timeIntervalSince(now)) }
    }
}

extension RequestInterceptor where Self == RetryPolicy {
    /// A `RetryPolicy` with the default settings.
    public static var retryPolicy: RetryPolicy { RetryPolicy() }

    /// A `RetryPolicy`.
    ///
    /// - Parameters:
    ///   - retryLimit:               How many times a request may be retried.
    ///   - exponentialBackoffBase:   The backoff base, at least 2.
    ///   - exponentialBackoffScale:  The backoff scale in seconds.
    ///   - retryableHTTPMethods:     The methods that may be retried.
    ///   - retryableHTTPStatusCodes: The status codes that are retried.
    ///   - retryableURLErrorCodes:   The `URLError` codes that are retried.
    /// - Returns: The `RetryPolicy`.
    public static func retryPolicy(
        retryLimit: UInt = RetryPolicy.defaultRetryLimit,
        exponentialBackoffBase: UInt = RetryPolicy.defaultExponentialBackoffBase,
        exponentialBackoffScale: Double = RetryPolicy.defaultExponentialBackoffScale,
        retryableHTTPMethods: Set<HTTPMethod> = RetryPolicy.defaultRetryableHTTPMethods,
        retryableHTTPStatusCodes: Set<Int> = RetryPolicy.defaultRetryableHTTPStatusCodes,
        retryableURLErrorCodes: Set<URLError.Code> = RetryPolicy.defaultRetryableURLErrorCodes
    ) -> RetryPolicy {
        RetryPolicy(
            retryLimit: retryLimit, exponentialBackoffBase: exponentialBackoffBase,
            exponentialBackoffScale: exponentialBackoffScale, retryableHTTPMethods: retryableHTTPMethods,
            retryableHTTPStatusCodes: retryableHTTPStatusCodes, retryableURLErrorCodes: retryableURLErrorCodes)
    }
}

/// Retries idempotent requests whose connection was lost (`URLError.networkConnectionLost`), the failure a reused
/// keep-alive connection closed by the server produces.
open class ConnectionLostRetryPolicy: RetryPolicy, @unchecked Sendable {
    // @unchecked: adds no stored property to `RetryPolicy`.
    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - retryLimit:              How many times a request may be retried. 2 by default.
    ///   - exponentialBackoffBase:  The backoff base, at least 2. 2 by default.
    ///   - exponentialBackoffScale: The backoff scale in seconds. 0.5 by default.
    ///   - retryableHTTPMethods:    The methods that may be retried. The idempotent ones by default.
    public init(
        retryLimit: UInt = RetryPolicy.defaultRetryLimit,
        exponentialBackoffBase: UInt = RetryPolicy.defaultExponentialBackoffBase,
        exponentialBackoffScale: Double = RetryPolicy.defaultExponentialBackoffScale,
        retryableHTTPMethods: Set<HTTPMethod> = RetryPolicy.defaultRetryableHTTPMethods
    ) {
        super.init(
            retryLimit: retryLimit, exponentialBackoffBase: exponentialBackoffBase,
            exponentialBackoffScale: exponentialBackoffScale, retryableHTTPMethods: retryableHTTPMethods,
            retryableHTTPStatusCodes: [], retryableURLErrorCodes: [.networkConnectionLost])
    }
}

extension RequestInterceptor where Self == ConnectionLostRetryPolicy {
    /// A `ConnectionLostRetryPolicy` with the default settings.
    public static var connectionLostRetryPolicy: ConnectionLostRetryPolicy { ConnectionLostRetryPolicy() }

    /// A `ConnectionLostRetryPolicy`.
    ///
    /// - Parameters:
    ///   - retryLimit:              How many times a request may be retried.
    ///   - exponentialBackoffBase:  The backoff base, at least 2.
    ///   - exponentialBackoffScale: The backoff scale in seconds.
    ///   - retryableHTTPMethods:    The methods that may be retried.
    /// - Returns: The `ConnectionLostRetryPolicy`.
    public static func connectionLostRetryPolicy(
        retryLimit: UInt = RetryPolicy.defaultRetryLimit,
        exponentialBackoffBase: UInt = RetryPolicy.defaultExponentialBackoffBase,
        exponentialBackoffScale: Double = RetryPolicy.defaultExponentialBackoffScale,
        retryableHTTPMethods: Set<HTTPMethod> = RetryPolicy.defaultRetryableHTTPMethods
    ) -> ConnectionLostRetryPolicy {
        ConnectionLostRetryPolicy(
            retryLimit: retryLimit, exponentialBackoffBase: exponentialBackoffBase,
            exponentialBackoffScale: exponentialBackoffScale, retryableHTTPMethods: retryableHTTPMethods)
    }
}
