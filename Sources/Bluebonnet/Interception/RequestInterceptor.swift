import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What an adapter knows of the request whose `URLRequest` it adapts.
public struct RequestAdapterState: Sendable {
    /// The `id` of the `Request` being adapted.
    public let requestID: UUID
    /// The `Session` that runs the request.
    public let session: Session
    /// For an upload whose body is not in `httpBody`: where an adapter (a request compressor) chooses a coding for
    /// the body as it streams. `nil` for other requests.
    let uploadBodyCoding: UploadBodyCodingChoice?

    init(requestID: UUID, session: Session, uploadBodyCoding: UploadBodyCodingChoice? = nil) {
        self.requestID = requestID
        self.session = session
        self.uploadBodyCoding = uploadBodyCoding
    }
}

/// Changes a `URLRequest` before each attempt is sent (the first and every retry): adds a token, signs it, or
/// refuses it.
public protocol RequestAdapter: Sendable {
    /// Adapts `urlRequest`; call `completion` exactly once, from any thread.
    ///
    /// - Parameters:
    ///   - urlRequest: The `URLRequest` to adapt.
    ///   - session:    The `Session` that will send it.
    ///   - completion: Called with the `URLRequest` to send, or the error that fails the request with
    ///                 `AFError.requestAdaptationFailed(error:)`.
    func adapt(
        _ urlRequest: URLRequest, for session: Session,
        completion: @escaping @Sendable (_ result: Result<URLRequest, any Error>) -> Void)

    /// Adapts `urlRequest`, knowing which request it belongs to; by default calls `adapt(_:for:completion:)`.
    ///
    /// - Parameters:
    ///   - urlRequest: The `URLRequest` to adapt.
    ///   - state:      The request's id and session.
    ///   - completion: Called with the `URLRequest` to send, or the error.
    func adapt(
        _ urlRequest: URLRequest, using state: RequestAdapterState,
        completion: @escaping @Sendable (_ result: Result<URLRequest, any Error>) -> Void)
}

extension RequestAdapter {
    /// Calls `adapt(_:for:completion:)` with the state's session.
    ///
    /// - Parameters:
    ///   - urlRequest: The `URLRequest` to adapt.
    ///   - state:      The request's id and session.
    ///   - completion: Called with the `URLRequest` to send, or the error.
    public func adapt(
        _ urlRequest: URLRequest, using state: RequestAdapterState,
        completion: @escaping @Sendable (_ result: Result<URLRequest, any Error>) -> Void
    ) {
        adapt(urlRequest, for: state.session, completion: completion)
    }
}

/// What a retrier decided about a failed attempt.
public enum RetryResult: Sendable {
    /// Retry now.
    case retry
    /// Retry after this many seconds.
    case retryWithDelay(TimeInterval)
    /// Do not retry: the request ends with its error.
    case doNotRetry
    /// Do not retry: the request ends with `AFError.requestRetryFailed(retryError:originalError:)` carrying this error.
    case doNotRetryWithError(any Error)
}

extension RetryResult {
    // The views Alamofire's own tests read (internal there too, reached with `@testable import`).

    /// Whether the request is tried again.
    var retryRequired: Bool {
        switch self {
        case .retry, .retryWithDelay: true
        case .doNotRetry, .doNotRetryWithError: false
        }
    }

    /// The delay before the retry, if one was asked for.
    var delay: TimeInterval? {
        guard case let .retryWithDelay(delay) = self else { return nil }
        return delay
    }

    /// The error that ends the request instead of a retry.
    var error: (any Error)? {
        guard case let .doNotRetryWithError(error) = self else { return nil }
        return error
    }
}

/// Decides whether a failed attempt (a transport error, a validation failure, a failed adaptation) is tried again.
public protocol RequestRetrier: Sendable {
    /// Decides about `request`; call `completion` exactly once, from any thread, after as long as it takes.
    ///
    /// - Parameters:
    ///   - request:    The `Request` that failed.
    ///   - session:    The `Session` that ran it.
    ///   - error:      The error of the attempt.
    ///   - completion: Called with the decision.
    func retry(
        _ request: Request, for session: Session, dueTo error: any Error,
        completion: @escaping @Sendable (RetryResult) -> Void)
}

/// Both an adapter and a retrier. The defaults pass the request through and never retry.
public protocol RequestInterceptor: RequestAdapter, RequestRetrier {}

extension RequestInterceptor {
    /// Sends `urlRequest` unchanged.
    ///
    /// - Parameters:
    ///   - urlRequest: The `URLRequest`.
    ///   - session:    The `Session`.
    ///   - completion: Called with `urlRequest`.
    public func adapt(
        _ urlRequest: URLRequest, for session: Session,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        completion(.success(urlRequest))
    }

    /// Never retries.
    ///
    /// - Parameters:
    ///   - request:    The `Request`.
    ///   - session:    The `Session`.
    ///   - error:      The error.
    ///   - completion: Called with `.doNotRetry`.
    public func retry(
        _ request: Request, for session: Session, dueTo error: any Error,
        completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        completion(.doNotRetry)
    }
}

/// The closure form of `RequestAdapter.adapt(_:for:completion:)`.
public typealias AdaptHandler =
    @Sendable (
        _ request: URLRequest, _ session: Session,
        _ completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) -> Void

/// The closure form of `RequestRetrier.retry(_:for:dueTo:completion:)`.
public typealias RetryHandler =
    @Sendable (
        _ request: Request, _ session: Session, _ error: any Error,
        _ completion: @escaping @Sendable (RetryResult) -> Void
    ) -> Void

/// A `RequestAdapter` made of a closure.
open class Adapter: @unchecked Sendable, RequestInterceptor {
    // @unchecked: the only stored property is an immutable `@Sendable` closure; `open` forbids checked `Sendable`.
    private let adaptHandler: AdaptHandler

    /// Creates an adapter.
    ///
    /// - Parameter adaptHandler: The closure that adapts.
    public init(_ adaptHandler: @escaping AdaptHandler) {
        self.adaptHandler = adaptHandler
    }

    /// Calls the closure.
    ///
    /// - Parameters:
    ///   - urlRequest: The `URLRequest`.
    ///   - session:    The `Session`.
    ///   - completion: Called with the result.
    open func adapt(
        _ urlRequest: URLRequest, for session: Session,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        adaptHandler(urlRequest, session, completion)
    }

    /// Calls the closure with the state's session.
    ///
    /// - Parameters:
    ///   - urlRequest: The `URLRequest`.
    ///   - state:      The request's id and session.
    ///   - completion: Called with the result.
    open func adapt(
        _ urlRequest: URLRequest, using state: RequestAdapterState,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        adaptHandler(urlRequest, state.session, completion)
    }
}

extension RequestAdapter where Self == Adapter {
    /// An `Adapter` made of `closure`.
    ///
    /// - Parameter closure: The closure that adapts.
    /// - Returns: The `Adapter`.
    public static func adapter(using closure: @escaping AdaptHandler) -> Adapter {
        Adapter(closure)
    }
}

/// A `RequestRetrier` made of a closure.
open class Retrier: @unchecked Sendable, RequestInterceptor {
    // @unchecked: the only stored property is an immutable `@Sendable` closure; `open` forbids checked `Sendable`.
    private let retryHandler: RetryHandler

    /// Creates a retrier.
    ///
    /// - Parameter retryHandler: The closure that decides.
    public init(_ retryHandler: @escaping RetryHandler) {
        self.retryHandler = retryHandler
    }

    /// Calls the closure.
    ///
    /// - Parameters:
    ///   - request:    The `Request`.
    ///   - session:    The `Session`.
    ///   - error:      The error.
    ///   - completion: Called with the decision.
    open func retry(
        _ request: Request, for session: Session, dueTo error: any Error,
        completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        retryHandler(request, session, error, completion)
    }
}

extension RequestRetrier where Self == Retrier {
    /// A `Retrier` made of `closure`.
    ///
    /// - Parameter closure: The closure that decides.
    /// - Returns: The `Retrier`.
    public static func retrier(using closure: @escaping RetryHandler) -> Retrier {
        Retrier(closure)
    }
}

/// Several adapters and retriers as one interceptor. Adapters run in order, each on the previous one's result, until
/// one fails; retriers are asked in order until one says anything but `.doNotRetry`.
open class Interceptor: @unchecked Sendable, RequestInterceptor {
    // @unchecked: both stored arrays are immutable and hold `Sendable` values; `open` forbids checked `Sendable`.

    /// The adapters, in order.
    public let adapters: [any RequestAdapter]
    /// The retriers, in order.
    public let retriers: [any RequestRetrier]

    /// Creates an interceptor of one adapter closure and one retrier closure.
    ///
    /// - Parameters:
    ///   - adaptHandler: The adapter closure.
    ///   - retryHandler: The retrier closure.
    public init(adaptHandler: @escaping AdaptHandler, retryHandler: @escaping RetryHandler) {
        adapters = [Adapter(adaptHandler)]
        retriers = [Retrier(retryHandler)]
    }

    /// Creates an interceptor of one adapter and one retrier.
    ///
    /// - Parameters:
    ///   - adapter: The adapter.
    ///   - retrier: The retrier.
    public init(adapter: any RequestAdapter, retrier: any RequestRetrier) {
        adapters = [adapter]
        retriers = [retrier]
    }

    /// Creates an interceptor of adapters, retriers and interceptors; each interceptor adapts after the adapters and
    /// is asked after the retriers.
    ///
    /// - Parameters:
    ///   - adapters:     The adapters.
    ///   - retriers:     The retriers.
    ///   - interceptors: Interceptors, used both ways.
    public init(
        adapters: [any RequestAdapter] = [], retriers: [any RequestRetrier] = [],
        interceptors: [any RequestInterceptor] = []
    ) {
        self.adapters = adapters + interceptors.map { $0 as any RequestAdapter }
        self.retriers = retriers + interceptors.map { $0 as any RequestRetrier }
    }

    /// Runs every adapter in order.
    ///
    /// - Parameters:
    ///   - urlRequest: The `URLRequest`.
    ///   - session:    The `Session`.
    ///   - completion: Called with the last adapter's result, or the first failure.
    open func adapt(
        _ urlRequest: URLRequest, for session: Session,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        Self.chain(urlRequest, adapters[...], completion: completion) { adapter, request, next in
            adapter.adapt(request, for: session, completion: next)
        }
    }

    /// Runs every adapter in order, with the request's state.
    ///
    /// - Parameters:
    ///   - urlRequest: The `URLRequest`.
    ///   - state:      The request's id and session.
    ///   - completion: Called with the last adapter's result, or the first failure.
    open func adapt(
        _ urlRequest: URLRequest, using state: RequestAdapterState,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        Self.chain(urlRequest, adapters[...], completion: completion) { adapter, request, next in
            adapter.adapt(request, using: state, completion: next)
        }
    }

    private static func chain(
        _ urlRequest: URLRequest,
        _ remaining: ArraySlice<any RequestAdapter>,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void,
        step:
            @escaping @Sendable (
                any RequestAdapter, URLRequest, @escaping @Sendable (Result<URLRequest, any Error>) -> Void
            ) -> Void
    ) {
        guard let adapter = remaining.first else {
            completion(.success(urlRequest))
            return
        }
        let rest = remaining.dropFirst()
        step(adapter, urlRequest) { result in
            switch result {
            case let .success(adapted): chain(adapted, rest, completion: completion, step: step)
            case .failure: completion(result)
            }
        }
    }

    /// Asks every retrier in order until one decides something other than `.doNotRetry`.
    ///
    /// - Parameters:
    ///   - request:    The `Request`.
    ///   - session:    The `Session`.
    ///   - error:      The error.
    ///   - completion: Called with the first decision that is not `.doNotRetry`, else `.doNotRetry`.
    open func retry(
        _ request: Request, for session: Session, dueTo error: any Error,
        completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        Self.ask(retriers[...], request: request, session: session, error: error, completion: completion)
    }

    private static func ask(
        _ remaining: ArraySlice<any RequestRetrier>,
        request: Request,
        session: Session,
        error: any Error,
        completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        guard let retrier = remaining.first else {
            completion(.doNotRetry)
            return
        }
        let rest = remaining.dropFirst()
        retrier.retry(request, for: session, dueTo: error) { result in
            if case .doNotRetry = result {
                ask(rest, request: request, session: session, error: error, completion: completion)
            } else {
                completion(result)
            }
        }
    }
}

extension RequestInterceptor where Self == Interceptor {
    /// An `Interceptor` of an adapter closure and a retrier closure.
    ///
    /// - Parameters:
    ///   - adapter: The adapter closure.
    ///   - retrier: The retrier closure.
    /// - Returns: The `Interceptor`.
    public static func interceptor(adapter: @escaping AdaptHandler, retrier: @escaping RetryHandler) -> Interceptor {
        Interceptor(adaptHandler: adapter, retryHandler: retrier)
    }

    /// An `Interceptor` of an adapter and a retrier.
    ///
    /// - Parameters:
    ///   - adapter: The adapter.
    ///   - retrier: The retrier.
    /// - Returns: The `Interceptor`.
    public static func interceptor(adapter: any RequestAdapter, retrier: any RequestRetrier) -> Interceptor {
        Interceptor(adapter: adapter, retrier: retrier)
    }

    /// An `Interceptor` of adapters, retriers and interceptors.
    ///
    /// - Parameters:
    ///   - adapters:     The adapters.
    ///   - retriers:     The retriers.
    ///   - interceptors: Interceptors, used both ways.
    /// - Returns: The `Interceptor`.
    public static func interceptor(
        adapters: [any RequestAdapter] = [], retriers: [any RequestRetrier] = [],
        interceptors: [any RequestInterceptor] = []
    ) -> Interceptor {
        Interceptor(adapters: adapters, retriers: retriers, interceptors: interceptors)
    }
}
