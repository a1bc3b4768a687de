@_spi(OpenAPITransport) import Bluebonnet
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Tracing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `ClientTransport` that sends a generated OpenAPI client's operations through a Bluebonnet `Session`.
///
/// Every operation is one `DataStreamRequest` of the session, so the session's interceptors, authentication, cookies,
/// cache, redirects, trust evaluation, proxies, tracing and metrics apply to it. Bodies stream both ways with
/// back-pressure: a request body of unknown length is sent chunked as it is produced, and the response body is handed
/// to the generated code as it arrives, the connection being read only as fast as the body is consumed.
///
/// Generated code expects every status as a response, so nothing is validated unless `validatesResponses` is set.
/// A response whose status the session's (or the operation's) `RetryPolicy` retries is resent under that policy's
/// rules when the request body can be sent again (`HTTPBody.iterationBehavior == .multiple`, or no body); once retries
/// run out, or when the body cannot be replayed, the last response is returned as a response.
///
/// A failure reaches the generated client as the request's `AFError`, which OpenAPIRuntime wraps in its
/// `ClientError`: `(error as? ClientError)?.underlyingError as? AFError`.
public struct BluebonnetTransport: ClientTransport {
    /// The session every operation is sent through.
    public let session: Session
    /// The longest an operation may take, from sending until its response body ended; `nil` for no limit (the
    /// session's idle timeout, `timeoutIntervalForRequest`, still applies between reads).
    public let timeout: Duration?
    /// Whether a response is validated as `DataStreamRequest.validate()` does (status in `200..<300`, content type
    /// matching `Accept`); a failure is thrown as the request's `AFError`.
    public let validatesResponses: Bool
    /// The interceptor of one operation, used after the session's, by `operationID`.
    public let interceptor: @Sendable (_ operationID: String) -> (any RequestInterceptor)?
    /// The session's `timeoutIntervalForRequest`, each operation's idle timeout.
    private let requestTimeout: TimeInterval

    /// Request bodies known to be at most this long and replayable are collected before sending, which costs less
    /// than streaming them; longer ones, and those of unknown length, stream.
    static let collectedBodyLimit = 256 * 1024

    /// Creates a transport over `session`.
    ///
    /// - Parameters:
    ///   - session:            The `Session` to send operations through. `AF` by default.
    ///   - timeout:            The total time an operation may take, body included; `nil` (the default) for no limit
    ///                         beyond the session's idle timeout.
    ///   - validatesResponses: Whether responses are validated (status `200..<300` and content type). `false` by
    ///                         default: generated code handles every status itself.
    ///   - interceptor:        A `RequestInterceptor` for an operation, by its `operationID`, used after the
    ///                         session's. None by default.
    public init(
        session: Session = AF, timeout: Duration? = nil, validatesResponses: Bool = false,
        interceptor: @escaping @Sendable (_ operationID: String) -> (any RequestInterceptor)? = { _ in nil }
    ) {
        self.session = session
        // Read once: `sessionConfiguration` is a copy of the whole configuration each time it is read.
        requestTimeout = session.sessionConfiguration.timeoutIntervalForRequest
        self.timeout = timeout
        self.validatesResponses = validatesResponses
        self.interceptor = interceptor
    }

    /// Sends one operation's request and returns its response once the head arrived; the body follows as it is read.
    ///
    /// - Parameters:
    ///   - request:     The HTTP request the generated code made.
    ///   - body:        The request body, if any.
    ///   - baseURL:     The server URL the request's path is relative to.
    ///   - operationID: The operation's identifier from the OpenAPI document.
    /// - Returns: The response head and its body (`nil` for a `HEAD` request, a `204` or a `304`).
    /// - Throws: The request's `AFError`.
    public func send(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var urlRequest = try Self.urlRequest(for: request, baseURL: baseURL)
        // The session's idle timeout decides: a request's own interval applies only when it is tighter.
        urlRequest.timeoutInterval = requestTimeout
        let operationInterceptor = interceptor(operationID)
        var upload: StreamUpload?
        let replayable = body.map { $0.iterationBehavior == .multiple } ?? true
        if let body {
            if case let .known(length) = body.length, length <= Int64(Self.collectedBodyLimit), replayable {
                urlRequest.httpBody = try await Data(collecting: body, upTo: Self.collectedBodyLimit)
            } else {
                let length: Int64? = if case let .known(length) = body.length { length } else { nil }
                upload = StreamUpload(length: length, isReplayable: replayable) { HTTPBodyInputStream(body: body) }
            }
        }
        if Task.isCancelled { throw AFError.explicitlyCancelled }
        // The operation names the request's span and is a dimension of its metrics, read from the context as the
        // request is made.
        var context = ServiceContext.current ?? .topLevel
        context[RequestOperationKey.self] = operationID
        let made = urlRequest
        let streamRequest = ServiceContext.withValue(context) {
            if let upload {
                session.streamRequest(made, uploading: upload, interceptor: operationInterceptor)
            } else {
                session.streamRequest(made, interceptor: operationInterceptor)
            }
        }
        return try await OperationExchange(
            request: streamRequest, timeout: timeout, validatesResponses: validatesResponses,
            retriesStatuses: replayable, prediction: RetryPrediction([session.interceptor, operationInterceptor])
        ).response(method: request.method)
    }

    /// The `URLRequest` of `request`: its path appended to `baseURL`, its method and its fields.
    static func urlRequest(for request: HTTPRequest, baseURL: URL) throws -> URLRequest {
        var base = baseURL.absoluteString
        if base.hasSuffix("/") { base.removeLast() }
        let target = base + (request.path ?? "/")
        guard let url = URL(string: target) else { throw AFError.invalidURL(url: target) }
        var urlRequest = URLRequest(url: url)
        // FoundationNetworking normalises a method as it is set (two allocations); `GET` is already the default.
        if request.method != .get { urlRequest.httpMethod = request.method.rawValue }
        for field in request.headerFields {
            // The engine frames the body itself.
            if field.name == .contentLength || field.name == .transferEncoding { continue }
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name.rawName)
        }
        return urlRequest
    }
}
