import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The request's own redirect handler, set by `redirect(using:)`; it prevails over the session's.
enum RedirectHandlerOverride: FeatureKey {
    typealias Value = any RedirectHandler
}

/// Follows redirects (RFC 9110 §15.4) once the request's or the session's `RedirectHandler` agrees, up to the
/// handler's `maximumRedirects`.
struct RedirectFollower: HopFollowing {
    /// The session's handler.
    let sessionHandler: any RedirectHandler

    func considers(status: Int) -> Bool {
        switch status {
        case 301, 302, 303, 307, 308: true
        default: false
        }
    }

    func mayFollow(_ facts: HopFacts) -> Bool {
        RedirectRules.redirectedRequest(from: facts.lastRequest, head: facts.head) != nil
    }

    func examine(_ facts: HopFacts) -> HopExamination? {
        guard let redirected = RedirectRules.redirectedRequest(from: facts.lastRequest, head: facts.head) else {
            return nil
        }
        let handler = facts.features[RedirectHandlerOverride.self] ?? sessionHandler
        switch redirected {
        case let .failure(error):
            return .failure(error)
        case .success where facts.followedHops >= handler.maximumRedirects:
            return .failure(.redirectFailed(reason: .tooManyRedirects(limit: handler.maximumRedirects)))
        case let .success(next):
            // Following or refusing as `Redirector` does needs no `HTTPURLResponse`: one is made only for a handler
            // that reads it, or a monitor told of the redirect.
            let head = facts.head
            if let redirector = handler as? Redirector {
                switch redirector.behavior {
                case .follow:
                    return .decide { request, completion in
                        request.tellWillRedirect(head, to: next)
                        completion(.newHop(next))
                    }
                case .doNotFollow:
                    return .decide { request, completion in
                        request.tellWillRedirect(head, to: next)
                        completion(.deliver)
                    }
                case .modify: break
                }
            }
            let response = facts.response
            return .decide { request, completion in
                request.tellWillRedirect(head, to: next)
                handler.request(request, willBeRedirectedTo: next, for: response) { decision in
                    completion(decision.map(HopDecision.newHop) ?? .deliver)
                }
            }
        }
    }
}

extension Request {
    /// Sets the redirect handler for this request, overriding the session's.
    ///
    /// - Parameter handler: The `RedirectHandler`.
    /// - Returns: The instance.
    @discardableResult
    public func redirect(using handler: any RedirectHandler) -> Self {
        setFeature(RedirectHandlerOverride.self, to: handler)
        return self
    }

    /// The redirect handler set with `redirect(using:)`, which overrides the session's; `nil` when none was set.
    public var redirectHandler: (any RedirectHandler)? { feature(RedirectHandlerOverride.self) }
}
