import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The HTTP rules for turning a redirect response into the next request.
enum RedirectRules {
    static let redirectStatusCodes: Set<Int> = [301, 302, 303, 307, 308]
    /// Headers that describe a body: dropped when the redirect turns the request into a GET.
    static let bodyHeaders = ["Content-Type", "Content-Length", "Content-Encoding", "Transfer-Encoding"]

    /// The next request, `nil` when the response is not a redirect to follow, or the error that forbids it.
    static func redirectedRequest(from request: URLRequest, response: HTTPURLResponse) -> Result<URLRequest, AFError>? {
        redirectedRequest(
            from: request, status: response.statusCode, location: response.value(forHTTPHeaderField: "Location"),
            responseURL: response.url)
    }

    /// The next request for the response `head` (its own status and fields: no `HTTPURLResponse` is made).
    static func redirectedRequest(from request: URLRequest, head: ResponseHead) -> Result<URLRequest, AFError>? {
        redirectedRequest(
            from: request, status: head.statusCode, location: head.value(for: "Location"), responseURL: head.url)
    }

    /// The next request for a response of `status` whose `Location` is `location`.
    private static func redirectedRequest(
        from request: URLRequest, status: Int, location: String?, responseURL: URL?
    ) -> Result<URLRequest, AFError>? {
        guard redirectStatusCodes.contains(status),
            let location, !location.isEmpty,
            let base = request.url ?? responseURL,
            let target = URL(string: location, relativeTo: base)?.absoluteURL
        else { return nil }
        // A WebSocket's upgrade (`ws:`, `wss:`) may be sent on to another socket's URL; nothing else may.
        let webSocket = ["ws", "wss"].contains(base.scheme?.lowercased() ?? "")
        switch RequestTarget.problem(with: target, webSocket: webSocket) {
        case nil: break
        case .unsupportedScheme: return .failure(.redirectFailed(reason: .unsupportedScheme(url: target)))
        case .invalidHost: return .failure(.redirectFailed(reason: .invalidHost(url: target)))
        case .invalidPort: return .failure(.redirectFailed(reason: .invalidPort(url: target)))
        }
        // A Unix-domain socket is this machine's (a container engine's API, say): only a response that came from the
        // same socket may send a request on to it.
        if RequestTarget.isUnixSocket(target), !Origin.same(base, target) {
            return .failure(.redirectFailed(reason: .unsupportedScheme(url: target)))
        }
        var next = request
        next.url = target
        let method = request.httpMethod?.uppercased() ?? "GET"
        let becomesGET =
            (status == 303 && method != "HEAD") || ((status == 301 || status == 302) && method == "POST")
        if becomesGET {
            next.httpMethod = "GET"
            next.httpBody = nil
            for name in bodyHeaders { next.setValue(nil, forHTTPHeaderField: name) }
        }
        if !Origin.same(base, target) {
            for name in Origin.credentialHeaders { next.setValue(nil, forHTTPHeaderField: name) }
        }
        return .success(next)
    }
}
