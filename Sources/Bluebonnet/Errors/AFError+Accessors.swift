import Foundation

// MARK: - Kind checks

extension AFError {
    /// Returns whether the instance is `.sessionDeinitialized`.
    public var isSessionDeinitializedError: Bool {
        if case .sessionDeinitialized = self { return true }
        return false
    }

    /// Returns whether the instance is `.sessionInvalidated`.
    public var isSessionInvalidatedError: Bool {
        if case .sessionInvalidated = self { return true }
        return false
    }

    /// Returns whether the instance is `.explicitlyCancelled`.
    public var isExplicitlyCancelledError: Bool {
        if case .explicitlyCancelled = self { return true }
        return false
    }

    /// Returns whether the instance is `.invalidURL`.
    public var isInvalidURLError: Bool {
        if case .invalidURL = self { return true }
        return false
    }

    /// Returns whether the instance is `.parameterEncodingFailed`.
    public var isParameterEncodingError: Bool {
        if case .parameterEncodingFailed = self { return true }
        return false
    }

    /// Returns whether the instance is `.parameterEncoderFailed`.
    public var isParameterEncoderError: Bool {
        if case .parameterEncoderFailed = self { return true }
        return false
    }

    /// Returns whether the instance is `.multipartEncodingFailed`.
    public var isMultipartEncodingError: Bool {
        if case .multipartEncodingFailed = self { return true }
        return false
    }

    /// Returns whether the instance is `.requestAdaptationFailed`.
    public var isRequestAdaptationError: Bool {
        if case .requestAdaptationFailed = self { return true }
        return false
    }

    /// Returns whether the instance is `.responseValidationFailed`.
    public var isResponseValidationError: Bool {
        if case .responseValidationFailed = self { return true }
        return false
    }

    /// Returns whether the instance is `.responseSerializationFailed`.
    public var isResponseSerializationError: Bool {
        if case .responseSerializationFailed = self { return true }
        return false
    }

    /// Returns whether the instance is `.serverTrustEvaluationFailed`.
    public var isServerTrustEvaluationError: Bool {
        if case .serverTrustEvaluationFailed = self { return true }
        return false
    }

    /// Returns whether the instance is `.requestRetryFailed`.
    public var isRequestRetryError: Bool {
        if case .requestRetryFailed = self { return true }
        return false
    }

    /// Returns whether the instance is `.createUploadableFailed`.
    public var isCreateUploadableError: Bool {
        if case .createUploadableFailed = self { return true }
        return false
    }

    /// Returns whether the instance is `.createURLRequestFailed`.
    public var isCreateURLRequestError: Bool {
        if case .createURLRequestFailed = self { return true }
        return false
    }

    /// Returns whether the instance is `.downloadedFileMoveFailed`.
    public var isDownloadedFileMoveError: Bool {
        if case .downloadedFileMoveFailed = self { return true }
        return false
    }

    /// Returns whether the instance is `.sessionTaskFailed`.
    public var isSessionTaskError: Bool {
        if case .sessionTaskFailed = self { return true }
        return false
    }

    /// Returns whether the instance is `.redirectFailed`.
    public var isRedirectError: Bool {
        if case .redirectFailed = self { return true }
        return false
    }

    /// Returns whether the instance is `.urlRequestValidationFailed`.
    public var isURLRequestValidationError: Bool {
        if case .urlRequestValidationFailed = self { return true }
        return false
    }

    /// Returns whether the instance is `.sessionShutDown`: the request was refused, or cancelled, because its
    /// `Session` was shutting down.
    public var isSessionShutDownError: Bool {
        if case .sessionShutDown = self { return true }
        return false
    }

    /// Returns whether the instance is `.responseLimitExceeded`.
    public var isResponseLimitError: Bool {
        if case .responseLimitExceeded = self { return true }
        return false
    }
}

// MARK: - Convenience values

extension AFError {
    /// The `URLConvertible` associated with the error.
    public var urlConvertible: (any URLConvertible)? {
        guard case let .invalidURL(url) = self else { return nil }
        return url
    }

    /// The `URL` associated with the error.
    public var url: URL? {
        switch self {
        case let .multipartEncodingFailed(reason): return reason.url
        case let .redirectFailed(.unsupportedScheme(url)), let .redirectFailed(.invalidPort(url)),
            let .redirectFailed(.invalidHost(url)):
            return url
        default: return nil
        }
    }

    /// The underlying `Error` responsible for generating the failure associated with `.sessionInvalidated`,
    /// `.parameterEncodingFailed`, `.parameterEncoderFailed`, `.multipartEncodingFailed`, `.requestAdaptationFailed`,
    /// `.responseSerializationFailed`, `.requestRetryFailed` and the other cases that wrap an error.
    public var underlyingError: (any Error)? {
        switch self {
        case let .multipartEncodingFailed(reason): return reason.underlyingError
        case let .parameterEncodingFailed(reason): return reason.underlyingError
        case let .parameterEncoderFailed(reason): return reason.underlyingError
        case let .requestAdaptationFailed(error): return error
        case let .requestRetryFailed(retryError, _): return retryError
        case let .responseValidationFailed(reason): return reason.underlyingError
        case let .responseSerializationFailed(reason): return reason.underlyingError
        case let .serverTrustEvaluationFailed(reason): return reason.underlyingError
        case let .sessionInvalidated(error): return error
        case let .createUploadableFailed(error): return error
        case let .createURLRequestFailed(error): return error
        case let .downloadedFileMoveFailed(error, _, _): return error
        case let .sessionTaskFailed(error): return error
        case let .responseLimitExceeded(.decompressionRatioExceeded(_, error)): return error
        case .explicitlyCancelled, .responseLimitExceeded, .invalidURL, .redirectFailed, .sessionDeinitialized,
            .urlRequestValidationFailed, .sessionShutDown:
            return nil
        }
    }

    /// The acceptable `Content-Type`s of a `.responseValidationFailed` error.
    public var acceptableContentTypes: [String]? {
        guard case let .responseValidationFailed(reason) = self else { return nil }
        switch reason {
        case let .missingContentType(types), let .unacceptableContentType(types, _): return types
        default: return nil
        }
    }

    /// The response `Content-Type` of a `.responseValidationFailed` error.
    public var responseContentType: String? {
        guard case let .responseValidationFailed(.unacceptableContentType(_, type)) = self else { return nil }
        return type
    }

    /// The response code of a `.responseValidationFailed` error.
    public var responseCode: Int? {
        guard case let .responseValidationFailed(.unacceptableStatusCode(code)) = self else { return nil }
        return code
    }

    /// The `String.Encoding` associated with a failed `.stringResponse()` call.
    public var failedStringEncoding: String.Encoding? {
        guard case let .responseSerializationFailed(.stringSerializationFailed(encoding)) = self else { return nil }
        return encoding
    }

    /// The source `URL` of a `.downloadedFileMoveFailed` error.
    public var sourceURL: URL? {
        guard case let .downloadedFileMoveFailed(_, source, _) = self else { return nil }
        return source
    }

    /// The destination `URL` of a `.downloadedFileMoveFailed` error.
    public var destinationURL: URL? {
        guard case let .downloadedFileMoveFailed(_, _, destination) = self else { return nil }
        return destination
    }
}

extension AFError.MultipartEncodingFailureReason {
    var url: URL? {
        switch self {
        case let .bodyPartURLInvalid(url), let .bodyPartFilenameInvalid(url), let .bodyPartFileNotReachable(url),
            let .bodyPartFileIsDirectory(url), let .bodyPartFileSizeNotAvailable(url),
            let .bodyPartInputStreamCreationFailed(url), let .outputStreamCreationFailed(url),
            let .outputStreamFileAlreadyExists(url), let .outputStreamURLInvalid(url),
            let .bodyPartFileNotReachableWithError(url, _), let .bodyPartFileSizeQueryFailedWithError(url, _):
            return url
        case .outputStreamWriteFailed, .inputStreamReadFailed:
            return nil
        }
    }

    var underlyingError: (any Error)? {
        switch self {
        case let .bodyPartFileNotReachableWithError(_, error), let .bodyPartFileSizeQueryFailedWithError(_, error),
            let .outputStreamWriteFailed(error), let .inputStreamReadFailed(error):
            return error
        default:
            return nil
        }
    }
}

extension AFError.ParameterEncodingFailureReason {
    var underlyingError: (any Error)? {
        switch self {
        case let .jsonEncodingFailed(error), let .propertyListEncodingFailed(error), let .customEncodingFailed(error):
            return error
        case .missingURL:
            return nil
        }
    }
}

extension AFError.ParameterEncoderFailureReason {
    var underlyingError: (any Error)? {
        guard case let .encoderFailed(error) = self else { return nil }
        return error
    }
}

extension AFError.ResponseValidationFailureReason {
    var underlyingError: (any Error)? {
        guard case let .customValidationFailed(error) = self else { return nil }
        return error
    }
}

extension AFError.ResponseSerializationFailureReason {
    var underlyingError: (any Error)? {
        switch self {
        case let .jsonSerializationFailed(error), let .decodingFailed(error), let .customSerializationFailed(error),
            let .propertyListSerializationFailed(error), let .xmlSerializationFailed(error):
            return error
        case let .compoundSerializationFailed(errors):
            return errors.last
        default:
            return nil
        }
    }
}

extension AFError.ServerTrustFailureReason {
    var underlyingError: (any Error)? {
        switch self {
        case let .trustEvaluationFailed(error): return error
        case let .defaultEvaluationFailed(output): return output.error
        case let .customEvaluationFailed(error): return error
        default: return nil
        }
    }
}
