import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Request {
    /// The outcome of one validator.
    public typealias ValidationResult = Result<Void, any Error>
}

extension DataRequest {
    /// A closure used to validate a request that takes a URL request, a URL response and data, and returns whether
    /// the request was valid.
    public typealias Validation = @Sendable (URLRequest?, HTTPURLResponse, Data?) -> ValidationResult

    /// Validates the request, using the specified closure. Validators run in the order added, after the request
    /// completes and before any response handler; the first failure is kept.
    ///
    /// - Parameter validation: `Validation` closure used to validate the response.
    /// - Returns: The instance.
    @discardableResult
    public func validate(_ validation: @escaping Validation) -> Self {
        validate(lightweight: false, validation)
    }

    /// Adds a validator; Bluebonnet's own checks are `lightweight` and may run on the thread that finished the request.
    func validate(lightweight: Bool, _ validation: @escaping Validation) -> Self {
        validate(
            lightweight: lightweight, head: { request, head, data in validation(request, head.httpResponse, data) })
    }

    /// Adds a validator of the response head itself: Bluebonnet's own checks read the status and fields from it, so
    /// no `HTTPURLResponse` is made unless a validator or a monitor of validation is handed one.
    func validate(
        lightweight: Bool,
        head validation: @escaping @Sendable (URLRequest?, ResponseHead, Data?) -> ValidationResult
    ) -> Self {
        appendValidator(lightweight: lightweight) { [unowned self] in
            if !lightweight { Confinement.assertOffEventLoop("A validator") }
            let state = mutableState.read()
            guard state.error == nil, let head = state.head else { return }
            let data = self.data
            let result = validation(state.requests.last, head, data)
            if case let .failure(error) = result {
                recordValidationError(
                    error.asAFError(or: .responseValidationFailed(reason: .customValidationFailed(error: error))))
            }
            tellMonitor(.other) {
                $0.request(
                    self, didValidateRequest: state.requests.last, response: head.httpResponse, data: data,
                    withResult: result)
            }
        }
        return self
    }

    /// Validates that the response has a status code in the specified sequence.
    ///
    /// - Parameter acceptableStatusCodes: `Sequence` of acceptable response status codes.
    /// - Returns: The instance.
    @discardableResult
    public func validate<S: Sequence & Sendable>(statusCode acceptableStatusCodes: S) -> Self
    where S.Iterator.Element == Int {
        validate(
            lightweight: true,
            head: { _, head, _ in
                ResponseValidator.validate(statusCode: head.statusCode, acceptable: acceptableStatusCodes)
            })
    }

    /// Validates that the response has a content type in the specified sequence. Wildcards (`*/*`, `text/*`) match;
    /// parameters such as `charset` are ignored; an empty body passes.
    ///
    /// - Parameter acceptableContentTypes: The acceptable content types, which may specify wildcard types and/or subtypes.
    /// - Returns: The instance.
    @discardableResult
    public func validate<S: Sequence & Sendable>(
        contentType acceptableContentTypes: @escaping @Sendable @autoclosure () -> S
    ) -> Self where S.Iterator.Element == String {
        validate(
            lightweight: true,
            head: { _, head, data in
                ResponseValidator.validate(
                    contentType: Array(acceptableContentTypes()), header: head.value(for: "Content-Type"), data: data)
            })
    }

    /// Validates that the response has a status code in `200..<300` and a content type matching the request's
    /// `Accept` header (any type when there is none): two validators, as Alamofire's, so a monitor is told of the
    /// status check and, when it passed, of the content type check.
    ///
    /// - Returns: The instance.
    @discardableResult
    public func validate() -> Self {
        validate(statusCode: 200..<300).validate(
            lightweight: true,
            head: { request, head, data in
                ResponseValidator.validate(
                    contentType: ResponseValidator.acceptableContentTypes(for: request),
                    header: head.value(for: "Content-Type"), data: data)
            })
    }
}

/// The checks behind `validate(...)`.
enum ResponseValidator {
    static func validate<S: Sequence>(statusCode: Int, acceptable: S) -> Request.ValidationResult
    where S.Element == Int {
        acceptable.contains(statusCode)
            ? .success(())
            : .failure(AFError.responseValidationFailed(reason: .unacceptableStatusCode(code: statusCode)))
    }

    /// The content type check; the acceptable types are sorted in its error, as in Alamofire.
    static func validate(contentType acceptable: [String], response: HTTPURLResponse, data: Data?)
        -> Request.ValidationResult
    {
        validate(contentType: acceptable, header: response.value(forHTTPHeaderField: "Content-Type"), data: data)
    }

    /// The content type check against a response's `Content-Type`, read only when there is a body to check.
    static func validate(contentType acceptable: [String], header: @autoclosure () -> String?, data: Data?)
        -> Request.ValidationResult
    {
        guard let data, !data.isEmpty else { return .success(()) }
        guard let header = header(),
            let responseType = MIMEType(header)
        else {
            if acceptable.contains(where: { MIMEType($0)?.isWildcard == true }) { return .success(()) }
            return .failure(
                AFError.responseValidationFailed(
                    reason: .missingContentType(acceptableContentTypes: acceptable.sorted())))
        }
        for type in acceptable {
            if let acceptableType = MIMEType(type), acceptableType.matches(responseType) { return .success(()) }
        }
        return .failure(
            AFError.responseValidationFailed(
                reason: .unacceptableContentType(
                    acceptableContentTypes: acceptable.sorted(),
                    responseContentType: "\(responseType.type)/\(responseType.subtype)"
                )))
    }

    /// The media ranges of the request's `Accept` header, or `*/*` when it has none.
    static func acceptableContentTypes(for request: URLRequest?) -> [String] {
        guard let accept = request?.value(forHTTPHeaderField: "Accept"), !accept.isEmpty else { return ["*/*"] }
        return accept.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
    }
}
