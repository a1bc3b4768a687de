import Foundation
import Tracing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Traces requests with swift-distributed-tracing, as OpenTelemetry's HTTP client conventions describe.
///
/// Each `Request` is one client span named by its method, parented on the caller's context as it was when the request
/// was made (the task-local `ServiceContext.current`, captured then, so the completion-handler API keeps it too).
/// Under it, each physical request (the first hop, every redirect, every answered challenge, every retry) is a client
/// span of its own, as the conventions recommend for resent requests: each has its own timing, status and
/// `http.request.resend_count`, and it is that hop's context, injected through the tracer's propagation into the
/// hop's headers (`traceparent`/`tracestate` with swift-otel), that the server continues. Nothing secret is an
/// attribute: `url.full` has no user info, and its query values read `REDACTED`; the error a span records is the
/// request's `AFError` described with every URL in it redacted the same way (`RedactedError`). A method outside
/// OpenTelemetry's known set is `_OTHER` in `http.request.method` (the method itself in
/// `http.request.method_original`) and names its spans `HTTP`, so custom methods make no unbounded set of names.
struct RequestTracing: RequestObserverMaking {
    let tracer: any Tracer

    func makeObserver() -> any RequestObserving {
        RequestTrace(tracer: tracer, parent: ServiceContext.current ?? .topLevel)
    }
}

/// One request's spans.
final class RequestTrace: RequestObserving {
    private struct State {
        /// The request's span while it is open.
        var request: (any Span)?
        /// The request's span that ended, when a retry a response serializer asked for reopens the request after it
        /// finished (Alamofire's serializer retry): the next one is linked to it.
        var ended: ServiceContext?
        var hop: (any Span)?
        var hops = 0
        var method = "GET"
        var url: URL?
    }

    private let tracer: any Tracer
    private let parent: ServiceContext
    private let state = Protected(State())

    init(tracer: any Tracer, parent: ServiceContext) {
        self.tracer = tracer
        self.parent = parent
    }

    func hopWillSend(_ hop: inout TransportRequest) {
        let method = hop.urlRequest.httpMethod ?? "GET"
        let url = hop.urlRequest.url
        let (request, resends) = state.write { state -> ((any Span)?, Int) in
            if state.hops == 0 { state.method = method }
            if state.url == nil { state.url = url }
            state.hops += 1
            return (state.request, state.hops - 1)
        }
        let parentSpan = request ?? startRequestSpan(method: method, url: url)
        let span = tracer.startSpan(Self.spanName(method: method), context: parentSpan.context, ofKind: .client)
        Self.describe(span, method: method, url: url)
        if resends > 0 { span.attributes["http.request.resend_count"] = resends }
        state.write { $0.hop = span }
        var headers = HeaderCarrier(fields: hop.headers)
        tracer.inject(span.context, into: &headers, using: HeaderInjector())
        hop.headers = headers.fields
    }

    func hopDidReceive(_ response: ResponseHead) {
        guard let span = state.read({ $0.hop }) else { return }
        span.attributes["http.response.status_code"] = response.statusCode
        // `HTTP/1.1` → `1.1`, `HTTP/2` → `2`, as OpenTelemetry's `network.protocol.version` spells it.
        if response.httpVersion.hasPrefix("HTTP/") {
            span.attributes["network.protocol.version"] = String(response.httpVersion.dropFirst(5))
        }
        if response.statusCode >= 400 {
            span.attributes["error.type"] = String(response.statusCode)
            span.setStatus(SpanStatus(code: .error))
        }
    }

    func hopDidEnd(error: AFError?) {
        let span = state.write { state -> (any Span)? in
            defer { state.hop = nil }
            return state.hop
        }
        guard let span else { return }
        if let error { Self.fail(span, with: error) }
        span.end()
    }

    func requestDidFinish(_ request: Request, response: ResponseHead?, error: AFError?) {
        // A hop still open ended with the request (cancelled while it was on the wire).
        if state.read({ $0.hop }) != nil { hopDidEnd(error: error ?? .explicitlyCancelled) }
        let (existing, hops, method, url) = state.read { ($0.request, $0.hops, $0.method, $0.url) }
        // A request that failed before any hop left (its adapter failed, its URL was refused) still has its span.
        let span = existing ?? startRequestSpan(method: method, url: url)
        state.write { state in
            state.request = nil
            state.ended = span.context
        }
        if hops > 1 { span.attributes["http.request.resend_count"] = hops - 1 }
        if let status = response?.statusCode {
            span.attributes["http.response.status_code"] = status
            if status >= 400, error == nil {
                span.attributes["error.type"] = String(status)
                span.setStatus(SpanStatus(code: .error))
            }
        }
        if let error { Self.fail(span, with: error) }
        span.end()
    }

    private func startRequestSpan(method: String, url: URL?) -> any Span {
        // An operation an API client named (an OpenAPI `operationId`) names the request's span, as swift-openapi's
        // tracing middleware names its own; its hops keep the method's name.
        let operation = parent.requestOperation
        let span = tracer.startSpan(operation ?? Self.spanName(method: method), context: parent, ofKind: .client)
        Self.describe(span, method: method, url: url)
        if let operation { span.attributes["openapi.operation_id"] = operation }
        let previous = state.write { state -> ServiceContext? in
            state.request = span
            return state.ended
        }
        if let previous { span.addLink(SpanLink(context: previous, attributes: [:])) }
        return span
    }

    private static func describe(_ span: any Span, method: String, url: URL?) {
        let known = knownMethod(method)
        span.attributes["http.request.method"] = known
        if known != method { span.attributes["http.request.method_original"] = method }
        guard let url else { return }
        span.attributes["url.full"] = redacted(url)
        if let host = url.host { span.attributes["server.address"] = host }
        if let port = url.port ?? defaultPort(of: url.scheme) { span.attributes["server.port"] = port }
    }

    private static func fail(_ span: any Span, with error: AFError) {
        span.attributes["error.type"] = errorType(of: error)
        span.setStatus(SpanStatus(code: .error))
        // Exporters write an error's text (swift-otel's `exception.message`): never the caller's URL as it was given.
        span.recordError(RedactedError(error))
    }

    /// The methods OpenTelemetry's HTTP conventions know; any other is `_OTHER`.
    private static let knownMethods: Set<String> = [
        "CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE",
    ]

    /// `method` as `http.request.method` has it: one of the known methods (matched without regard to case, as the
    /// request line sends `method` as it was given), or `_OTHER`, which keeps spans and metric series bounded.
    static func knownMethod(_ method: String) -> String {
        let uppercased = method.uppercased()
        return knownMethods.contains(uppercased) ? uppercased : "_OTHER"
    }

    /// The name of a span of a request sent with `method`: the method, or `HTTP` for one outside the known set.
    private static func spanName(method: String) -> String {
        let known = knownMethod(method)
        return known == "_OTHER" ? "HTTP" : known
    }

    /// `url` without user info or fragment, its query values replaced by `REDACTED`.
    static func redacted(_ url: URL) -> String {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "" }
        return redacted(components)
    }

    /// `string` redacted as `redacted(_:)` redacts a URL. A string that does not parse (a space in its host) is read
    /// again with what no URL may hold percent-encoded; one that still does not parse keeps only its scheme.
    static func redacted(urlString string: String) -> String {
        let allowed = CharacterSet.urlQueryAllowed.union(CharacterSet(charactersIn: "#%[]"))
        let components =
            URLComponents(string: string)
            ?? string.addingPercentEncoding(withAllowedCharacters: allowed).flatMap { URLComponents(string: $0) }
        if let components { return redacted(components) }
        guard let colon = string.firstIndex(of: ":"), string[..<colon].allSatisfy(isSchemeCharacter) else {
            return "REDACTED"
        }
        return String(string[..<colon]) + ":REDACTED"
    }

    /// `text` with every URL in it (a scheme, `://`, and what follows up to a space, a quote or another character no
    /// URL holds) redacted as `redacted(urlString:)` redacts it.
    static func redactingURLs(in text: String) -> String {
        var result = ""
        var rest = text[...]
        while let separator = rest.range(of: "://") {
            let schemeLength = rest[..<separator.lowerBound].reversed().prefix(while: isSchemeCharacter).count
            let start = rest.index(separator.lowerBound, offsetBy: -schemeLength)
            let end = rest[separator.upperBound...].firstIndex(where: endsURLInText) ?? rest.endIndex
            result.append(contentsOf: rest[..<start])
            result.append(redacted(urlString: String(rest[start..<end])))
            rest = rest[end...]
        }
        result.append(contentsOf: rest)
        return result
    }

    private static func redacted(_ original: URLComponents) -> String {
        var components = original
        components.user = nil
        components.password = nil
        components.fragment = nil
        components.queryItems = components.queryItems?.map {
            URLQueryItem(name: $0.name, value: $0.value == nil ? nil : "REDACTED")
        }
        return components.string ?? ""
    }

    private static func isSchemeCharacter(_ character: Character) -> Bool {
        character.isASCII && (character.isLetter || character.isNumber || "+-.".contains(character))
    }

    private static func endsURLInText(_ character: Character) -> Bool {
        character.isWhitespace || "\"'<>`{}|\\^".contains(character)
    }

    private static func defaultPort(of scheme: String?) -> Int? {
        switch scheme?.lowercased() {
        case "https", "wss": 443
        case "http", "ws": 80
        default: nil
        }
    }

    /// A low-cardinality name for `error`: the `AFError` case, with the `URLError` code of a task failure.
    static func errorType(of error: AFError) -> String {
        switch error {
        case let .sessionTaskFailed(underlying):
            if let urlError = underlying as? URLError { return "URLError(\(urlError.code.rawValue))" }
            return "sessionTaskFailed"
        case .explicitlyCancelled: return "cancelled"
        default:
            let mirror = Mirror(reflecting: error)
            return mirror.children.first?.label ?? "\(error)".prefix { $0 != "(" && $0 != " " }.description
        }
    }
}

/// What a span records for a request's error: the `AFError`'s description with every URL in it redacted as `url.full`
/// is (no user info, query values `REDACTED`), and nothing else of it. An `AFError` holds the URL it was given (an
/// `invalidURL` holds the caller's string, password and query included) and prints it whole.
struct RedactedError: Error, CustomStringConvertible, LocalizedError {
    /// The `AFError`'s case, as `error.type` names it.
    let type: String
    /// The `AFError`'s description, redacted.
    let description: String

    var errorDescription: String? { description }

    init(_ error: AFError) {
        type = RequestTrace.errorType(of: error)
        var text = error.localizedDescription
        // A string that is no URL may hold what ends one in text (a space): it is redacted whole first.
        if case let .invalidURL(url) = error {
            let given = "\(url)"
            if !given.isEmpty {
                text = text.replacingOccurrences(of: given, with: RequestTrace.redacted(urlString: given))
            }
        }
        description = RequestTrace.redactingURLs(in: text)
    }
}

/// A hop's header fields, as a carrier a tracer injects into.
struct HeaderCarrier: Sendable {
    var fields: [(name: String, value: String)]
}

/// Appends a field to the hop, replacing one of the same name (a caller's stale `traceparent`).
struct HeaderInjector: Injector {
    func inject(_ value: String, forKey key: String, into carrier: inout HeaderCarrier) {
        // The hop's headers were validated already: a field that could split the request is not added.
        let forbidden: (Character) -> Bool = { $0 == "\r" || $0 == "\n" || $0 == "\0" }
        guard !key.isEmpty, !key.contains(where: forbidden), !value.contains(where: forbidden) else { return }
        carrier.fields.removeAll { $0.name.caseInsensitiveCompare(key) == .orderedSame }
        carrier.fields.append((key, value))
    }
}
