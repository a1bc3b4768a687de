import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Decides, hop by hop, whether a redirect is followed, changed or refused.
public protocol RedirectHandler: Sendable {
    /// How many redirects a request may follow before it fails with `.redirectFailed(.tooManyRedirects)`.
    var maximumRedirects: Int { get }

    /// Decides what to do with one redirect.
    ///
    /// - Parameters:
    ///   - request:    The `Request` being redirected.
    ///   - newRequest: The `URLRequest` the redirect leads to, already adjusted for the status code (method,
    ///                 body) and with credentials removed when it leaves the origin.
    ///   - response:   The redirect response.
    ///   - completion: Call once with the `URLRequest` to send, or `nil` to stop and deliver the redirect
    ///                 response itself.
    func request(
        _ request: Request,
        willBeRedirectedTo newRequest: URLRequest,
        for response: HTTPURLResponse,
        completion: @escaping @Sendable (URLRequest?) -> Void
    )
}

extension RedirectHandler {
    /// URLSession's limit: 16 hops.
    public var maximumRedirects: Int { 16 }
}

/// A `RedirectHandler` with a fixed behavior.
public struct Redirector: RedirectHandler {
    /// What to do with each redirect.
    public enum Behavior: Sendable {
        /// Follow the redirect as it is.
        case follow
        /// Deliver the redirect response; do not follow.
        case doNotFollow
        /// Follow the `URLRequest` the closure returns, or stop when it returns `nil`.
        case modify(@Sendable (Request, URLRequest, HTTPURLResponse) -> URLRequest?)
    }

    /// Follows every redirect.
    public static let follow = Redirector(behavior: .follow)
    /// Follows no redirect.
    public static let doNotFollow = Redirector(behavior: .doNotFollow)

    /// The behavior.
    public let behavior: Behavior
    /// The hop limit.
    public let maximumRedirects: Int

    /// Creates a redirector.
    ///
    /// - Parameters:
    ///   - behavior:         What to do with each redirect.
    ///   - maximumRedirects: The hop limit; 16 by default, as URLSession.
    public init(behavior: Behavior, maximumRedirects: Int = 16) {
        self.behavior = behavior
        self.maximumRedirects = maximumRedirects
    }

    /// Applies `behavior`.
    public func request(
        _ request: Request,
        willBeRedirectedTo newRequest: URLRequest,
        for response: HTTPURLResponse,
        completion: @escaping @Sendable (URLRequest?) -> Void
    ) {
        switch behavior {
        case .follow:
            completion(newRequest)
        case .doNotFollow:
            completion(nil)
        case let .modify(closure):
            completion(closure(request, newRequest, response))
        }
    }
}

extension RedirectHandler where Self == Redirector {
    /// Follows every redirect.
    public static var follow: Redirector { .follow }
    /// Follows no redirect.
    public static var doNotFollow: Redirector { .doNotFollow }

    /// Follows the request `closure` returns.
    ///
    /// - Parameter closure: Returns the request to send, or `nil` to stop.
    public static func modify(using closure: @escaping @Sendable (Request, URLRequest, HTTPURLResponse) -> URLRequest?)
        -> Redirector
    {
        Redirector(behavior: .modify(closure))
    }
}
