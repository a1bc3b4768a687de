import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response head as the engine received it: status, version and fields in order. The `HTTPURLResponse` that
/// Alamofire's API hands out is made from it the first time something asks for one, and then kept, so every reader
/// gets the same object. FoundationNetworking's initialiser re-reads every field (title-casing each name, comparing
/// it with `WWW-Authenticate`, then looking up three fields by lowercasing every key), which costs a small request
/// more than anything else it does; a request whose caller only wants the body never pays it.
@_spi(Transport) @_spi(OpenAPITransport) public final class ResponseHead: Sendable {
    /// The URL the response answers.
    @_spi(Transport) @_spi(OpenAPITransport) public let url: URL
    /// The status code.
    @_spi(Transport) @_spi(OpenAPITransport) public let statusCode: Int
    /// `HTTP/1.1`, `HTTP/2.0`.
    @_spi(Transport) @_spi(OpenAPITransport) public let httpVersion: String
    /// Each field as received, repeated fields apart.
    @_spi(Transport) @_spi(OpenAPITransport) public let fields: [(name: String, value: String)]
    /// The `HTTPURLResponse`, once made (or the one the head was made from).
    private let built: Protected<HTTPURLResponse?>

    /// A head the engine received.
    @_spi(Transport) public init(
        url: URL, statusCode: Int, httpVersion: String, fields: [(name: String, value: String)]
    ) {
        self.url = url
        self.statusCode = statusCode
        self.httpVersion = httpVersion
        self.fields = fields
        built = Protected(nil)
    }

    /// A head for a response that already exists (a `URLProtocol`'s): that response is the one handed out, so the
    /// version (which `HTTPURLResponse` does not expose) and, for a response without one, the URL stand in only for
    /// the lifecycle's bookkeeping.
    init(_ response: HTTPURLResponse) {
        url = response.url ?? URL(fileURLWithPath: "/")
        statusCode = response.statusCode
        httpVersion = "HTTP/1.1"
        fields = response.af.fields.map { (name: $0.name, value: $0.value) }
        built = Protected(response)
    }

    /// How many `HTTPURLResponse`s heads have made in this process: the tests' count of what reading a response costs.
    static let madeResponses = Atomic<Int>(0)

    /// The response as Alamofire's API shows it, made on first use.
    var httpResponse: HTTPURLResponse {
        built.write { built in
            if let built { return built }
            Self.madeResponses.add(1, ordering: .relaxed)
            let response = OrderedHTTPURLResponse(
                url: url, statusCode: statusCode, httpVersion: httpVersion, orderedFields: fields)
            built = response
            return response
        }
    }

    /// Whether the `HTTPURLResponse` has been made.
    var isMade: Bool { built.read { $0 != nil } }

    /// The value of the field `name` (compared without regard to ASCII case), a repeated field's values joined by
    /// commas, as `HTTPURLResponse.value(forHTTPHeaderField:)` gives it.
    @_spi(Transport) @_spi(OpenAPITransport) public func value(for name: String) -> String? {
        var value: String?
        for field in fields where field.name.equalsIgnoringCase(name) {
            value = value.map { $0 + ", " + field.value } ?? field.value
        }
        return value
    }

    /// The body length the server announced: `Content-Length` when it is one non-negative decimal number, else `nil`
    /// (a hostile or broken field, `-5`, `5, 5` or `+5`, announces nothing).
    var declaredContentLength: Int64? { Self.declaredLength(value(for: "Content-Length")) }

    /// A `Content-Length` value as a length: one non-negative decimal number that fits, else `nil`.
    ///
    /// - Parameter value: The field's value (repeated fields joined by commas).
    /// - Returns: The length, or `nil`.
    static func declaredLength(_ value: String?) -> Int64? {
        guard let value, !value.isEmpty, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int64(value)
    }
}

/// Where a response's `HTTPURLResponse` comes from.
enum ResponseSource: Sendable {
    /// A head the engine received: the `HTTPURLResponse` is made from it when first read.
    case head(ResponseHead)
    /// A response made elsewhere (by the caller, a `URLProtocol`).
    case response(HTTPURLResponse)

    init?(_ head: ResponseHead?) {
        guard let head else { return nil }
        self = .head(head)
    }

    /// The response, made from the head when it is one.
    var response: HTTPURLResponse {
        switch self {
        case let .head(head): head.httpResponse
        case let .response(response): response
        }
    }

    /// The status code.
    var statusCode: Int {
        switch self {
        case let .head(head): head.statusCode
        case let .response(response): response.statusCode
        }
    }

    /// The value of a field, repeated fields joined by commas.
    func value(for name: String) -> String? {
        switch self {
        case let .head(head): head.value(for: name)
        case let .response(response): response.value(forHTTPHeaderField: name)
        }
    }
}
