import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DownloadRequest {
    /// A closure used to validate a download that takes a URL request, a URL response and the downloaded file's URL,
    /// and returns whether the download was valid.
    public typealias Validation =
        @Sendable (_ request: URLRequest?, _ response: HTTPURLResponse, _ fileURL: URL?) -> ValidationResult

    /// Validates the download, using the specified closure. Validators run in the order added, after the file was
    /// moved and before any response handler, off the event loop; the first failure is kept.
    ///
    /// - Parameter validation: `Validation` closure used to validate the response.
    /// - Returns: The instance.
    @discardableResult
    public func validate(_ validation: @escaping Validation) -> Self {
        appendValidator { [unowned self] in
            Confinement.assertOffEventLoop("A download validator")
            let state = mutableState.read()
            guard state.error == nil, let response = state.head?.httpResponse else { return }
            let fileURL = self.fileURL
            let result = validation(state.requests.last, response, fileURL)
            if case let .failure(error) = result {
                recordValidationError(
                    error.asAFError(or: .responseValidationFailed(reason: .customValidationFailed(error: error))))
            }
            eventMonitor?.request(
                self, didValidateRequest: state.requests.last, response: response, fileURL: fileURL, withResult: result)
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
        validate { _, response, _ in
            ResponseValidator.validate(statusCode: response.statusCode, acceptable: acceptableStatusCodes)
        }
    }

    /// Validates that the response has a content type in the specified sequence; an empty file passes. The file is
    /// measured, never read.
    ///
    /// - Parameter acceptableContentTypes: The acceptable content types, which may specify wildcard types and/or subtypes.
    /// - Returns: The instance.
    @discardableResult
    public func validate<S: Sequence & Sendable>(
        contentType acceptableContentTypes: @escaping @Sendable @autoclosure () -> S
    ) -> Self where S.Iterator.Element == String {
        validate { _, response, fileURL in
            Self.validate(contentType: Array(acceptableContentTypes()), response: response, fileURL: fileURL)
        }
    }

    /// Validates that the response has a status code in `200..<300` and a content type matching the request's
    /// `Accept` header (any type when there is none).
    ///
    /// - Returns: The instance.
    @discardableResult
    public func validate() -> Self {
        // Two validators, as Alamofire's: a monitor hears of the status check and, when it passed, the content type's.
        validate(statusCode: 200..<300).validate { request, response, fileURL in
            Self.validate(
                contentType: ResponseValidator.acceptableContentTypes(for: request), response: response,
                fileURL: fileURL)
        }
    }

    /// The content type check, given only whether the file is empty, as Alamofire's is given the data.
    private static func validate(contentType acceptable: [String], response: HTTPURLResponse, fileURL: URL?)
        -> ValidationResult
    {
        guard let fileURL else { return .failure(AFError.responseValidationFailed(reason: .dataFileNil)) }
        guard
            let size = (try? FileManager.default.attributesOfItem(atPath: fileURL.path)[.size] as? NSNumber)?.int64Value
        else {
            return .failure(AFError.responseValidationFailed(reason: .dataFileReadFailed(at: fileURL)))
        }
        // One byte stands for a non-empty file: the check only asks whether there is a body.
        return ResponseValidator.validate(
            contentType: acceptable, response: response, data: size > 0 ? Data([0]) : Data())
    }
}
