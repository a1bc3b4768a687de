import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Decides, before a response is stored in the session's `HTTPCache`, whether it is stored as it is, changed, or
/// not stored.
public protocol CachedResponseHandler: Sendable {
    /// Decides what is stored for one response.
    ///
    /// - Parameters:
    ///   - request:    The `Request` whose response it is. (Alamofire passes the `URLSessionDataTask`.)
    ///   - response:   The response that RFC 9111 allows to be stored.
    ///   - completion: Call once with the response to store, or `nil` to store nothing.
    func request(
        _ request: Request, willCacheResponse response: CachedURLResponse,
        completion: @escaping @Sendable (CachedURLResponse?) -> Void)
}

/// A `CachedResponseHandler` with a fixed behavior.
public struct ResponseCacher: CachedResponseHandler {
    /// What to do with each response.
    public enum Behavior: Sendable {
        /// Store it as it is.
        case cache
        /// Store nothing.
        case doNotCache
        /// Store what the closure returns, or nothing when it returns `nil`.
        case modify(@Sendable (Request, CachedURLResponse) -> CachedURLResponse?)
    }

    /// Stores every response RFC 9111 allows.
    public static let cache = ResponseCacher(behavior: .cache)
    /// Stores nothing.
    public static let doNotCache = ResponseCacher(behavior: .doNotCache)

    /// The behavior.
    public let behavior: Behavior

    /// Makes a cacher.
    ///
    /// - Parameter behavior: What to do with each response.
    public init(behavior: Behavior) {
        self.behavior = behavior
    }

    /// Applies `behavior`.
    public func request(
        _ request: Request, willCacheResponse response: CachedURLResponse,
        completion: @escaping @Sendable (CachedURLResponse?) -> Void
    ) {
        switch behavior {
        case .cache: completion(response)
        case .doNotCache: completion(nil)
        case let .modify(closure): completion(closure(request, response))
        }
    }
}

extension CachedResponseHandler where Self == ResponseCacher {
    /// Stores every response RFC 9111 allows.
    public static var cache: ResponseCacher { ResponseCacher.cache }

    /// Stores nothing.
    public static var doNotCache: ResponseCacher { ResponseCacher.doNotCache }

    /// Stores what the closure returns, or nothing when it returns `nil`.
    ///
    /// - Parameter closure: Receives the `Request` and the response about to be stored.
    /// - Returns: The cacher.
    public static func modify(using closure: @escaping @Sendable (Request, CachedURLResponse) -> CachedURLResponse?)
        -> ResponseCacher
    {
        ResponseCacher(behavior: .modify(closure))
    }
}
