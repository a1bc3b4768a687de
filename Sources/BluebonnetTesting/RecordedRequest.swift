import Bluebonnet
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request a stub received, as it would have gone on the wire: adapted, with the session's headers, cookies and
/// credentials, and its whole body.
public struct RecordedRequest: Sendable, CustomStringConvertible {
    /// The method.
    public let method: HTTPMethod
    /// The URL.
    public let url: URL
    /// The header fields.
    public let headers: HTTPHeaders
    /// The body: `httpBody`, or everything `httpBodyStream` held; `nil` when there was none.
    public let body: Data?
    /// The `URLRequest` itself, without its body stream (which has been read).
    public let urlRequest: URLRequest

    init(_ request: URLRequest, body: Data?) {
        method = HTTPMethod(rawValue: request.httpMethod ?? "GET")
        url = request.url ?? URL(fileURLWithPath: "/")
        headers = request.headers
        self.body = body
        var kept = request
        kept.httpBodyStream = nil
        kept.httpBody = body
        urlRequest = kept
    }

    /// The body as UTF-8 text.
    public var bodyString: String? { body.flatMap { String(data: $0, encoding: .utf8) } }

    public var description: String { "\(method.rawValue) \(url.absoluteString)" }
}
