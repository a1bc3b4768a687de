import Foundation

extension AFError: LocalizedError {
    /// A sentence that says which stage failed and why.
    public var errorDescription: String? {
        switch self {
        case .explicitlyCancelled:
            return "Request explicitly cancelled."
        case let .invalidURL(url):
            // A password written in the URL stays out of a message that ends up in logs.
            return "URL is not valid: \((try? url.asURL())?.absoluteStringWithoutUserInfo ?? "\(url)")"
        case let .parameterEncodingFailed(reason):
            return reason.localizedDescription
        case let .parameterEncoderFailed(reason):
            return reason.localizedDescription
        case let .multipartEncodingFailed(reason):
            return reason.localizedDescription
        case let .requestAdaptationFailed(error):
            return "Request adaption failed with error: \(error.localizedDescription)"
        case let .responseValidationFailed(reason):
            return reason.localizedDescription
        case let .responseSerializationFailed(reason):
            return reason.localizedDescription
        case let .requestRetryFailed(retryError, originalError):
            return """
                Request retry failed with retry error: \(retryError.localizedDescription), \
                original error: \(originalError.localizedDescription)
                """
        case .sessionDeinitialized:
            return """
                Session was invalidated without error, so it was likely deinitialized unexpectedly. \
                Be sure to retain a reference to your Session for the duration of your requests.
                """
        case let .sessionInvalidated(error):
            return "Session was invalidated with error: \(error?.localizedDescription ?? "No description.")"
        case let .serverTrustEvaluationFailed(reason):
            return "Server trust evaluation failed due to reason: \(reason.localizedDescription)"
        case let .urlRequestValidationFailed(reason):
            return "URLRequest validation failed due to reason: \(reason.localizedDescription)"
        case let .redirectFailed(reason):
            return reason.localizedDescription
        case let .createUploadableFailed(error):
            return "The upload's body could not be created or read: \(error.localizedDescription)"
        case let .createURLRequestFailed(error):
            return "URLRequest creation failed with error: \(error.localizedDescription)"
        case let .downloadedFileMoveFailed(error, source, destination):
            return
                "Moving downloaded file from: \(source) to: \(destination) failed with error: \(error.localizedDescription)"
        case let .sessionTaskFailed(error):
            return "URLSessionTask failed with error: \(Self.transportDescription(error))"
        case let .responseLimitExceeded(reason):
            return reason.localizedDescription
        case let .sessionShutDown(reason):
            return reason.localizedDescription
        }
    }
}

extension AFError {
    /// Foundation on Linux has no text for `URLError` codes; say in words what the transport saw, then the engine's
    /// own error.
    static func transportDescription(_ error: any Error) -> String {
        guard let urlError = error as? URLError else { return error.localizedDescription }
        // Bluebonnet's own words for what it knows better than the code (the proxy that refused, say) come first.
        if let own = urlError.userInfo[NSLocalizedDescriptionKey] as? String, !own.isEmpty {
            guard let underlying = urlError.userInfo[NSUnderlyingErrorKey] else { return own }
            return "\(own) (\(underlying))"
        }
        let text: String
        switch urlError.code {
        case .timedOut: text = "The request timed out."
        case .cannotConnectToHost: text = "Could not connect to the server."
        case .cannotFindHost: text = "A server with the specified hostname could not be found."
        case .networkConnectionLost: text = "The network connection was lost."
        case .cannotParseResponse: text = "The response could not be parsed."
        case .badURL: text = "The URL is not valid."
        case .secureConnectionFailed: text = "A TLS error caused the secure connection to fail."
        case .cancelled: text = "The request was cancelled."
        default: text = "The request failed (URLError \(urlError.code.rawValue))."
        }
        guard let underlying = urlError.userInfo[NSUnderlyingErrorKey] else { return text }
        return "\(text) (\(underlying))"
    }
}

extension AFError.ParameterEncodingFailureReason {
    var localizedDescription: String {
        switch self {
        case .missingURL:
            return "URL request to encode was missing a URL"
        case let .jsonEncodingFailed(error):
            return "JSON could not be encoded because of error:\n\(error.localizedDescription)"
        case let .propertyListEncodingFailed(error):
            return "Property list could not be encoded because of error:\n\(error.localizedDescription)"
        case let .customEncodingFailed(error):
            return "Custom parameter encoder failed with error: \(error.localizedDescription)"
        }
    }
}

extension AFError.ParameterEncoderFailureReason {
    var localizedDescription: String {
        switch self {
        case let .missingRequiredComponent(component):
            return "Encoding failed due to a missing request component: \(component)"
        case let .encoderFailed(error):
            return "The underlying encoder failed with the error: \(error)"
        }
    }
}

extension AFError.MultipartEncodingFailureReason {
    var localizedDescription: String {
        switch self {
        case let .bodyPartURLInvalid(url):
            return "The URL provided is not a file URL: \(url)"
        case let .bodyPartFilenameInvalid(url):
            return "The URL provided does not have a valid filename: \(url)"
        case let .bodyPartFileNotReachable(url):
            return "The URL provided is not reachable: \(url)"
        case let .bodyPartFileNotReachableWithError(url, error):
            return
                "The system returned an error while checking the provided URL for reachability.\nURL: \(url)\nError: \(error)"
        case let .bodyPartFileIsDirectory(url):
            return "The URL provided is a directory: \(url)"
        case let .bodyPartFileSizeNotAvailable(url):
            return "Could not fetch the file size from the provided URL: \(url)"
        case let .bodyPartFileSizeQueryFailedWithError(url, error):
            return
                "The system returned an error while attempting to fetch the file size from the provided URL.\nURL: \(url)\nError: \(error)"
        case let .bodyPartInputStreamCreationFailed(url):
            return "Failed to create an InputStream for the provided URL: \(url)"
        case let .outputStreamCreationFailed(url):
            return "Failed to create an OutputStream for URL: \(url)"
        case let .outputStreamFileAlreadyExists(url):
            return "A file already exists at the provided URL: \(url)"
        case let .outputStreamURLInvalid(url):
            return "The provided OutputStream URL is invalid: \(url)"
        case let .outputStreamWriteFailed(error):
            return "OutputStream write failed with error: \(error)"
        case let .inputStreamReadFailed(error):
            return "InputStream read failed with error: \(error)"
        }
    }
}

extension AFError.ResponseSerializationFailureReason {
    var localizedDescription: String {
        switch self {
        case .inputDataNilOrZeroLength:
            return "Response could not be serialized, input data was nil or zero length."
        case .inputFileNil:
            return "Response could not be serialized, input file was nil."
        case let .inputFileReadFailed(url):
            return "Response could not be serialized, input file could not be read: \(url)."
        case let .stringSerializationFailed(encoding):
            return "String could not be serialized with encoding: \(encoding)."
        case let .jsonSerializationFailed(error):
            return "JSON could not be serialized because of error:\n\(error.localizedDescription)"
        case let .invalidEmptyResponse(type):
            return """
                Empty response could not be serialized to type: \(type). \
                Use Empty as the expected type for such responses.
                """
        case let .decodingFailed(error):
            return "Response could not be decoded because of error:\n\(error.localizedDescription)"
        case let .customSerializationFailed(error):
            return "Custom response serializer failed with error:\n\(error.localizedDescription)"
        case let .propertyListSerializationFailed(error):
            return "Property list could not be serialized because of error:\n\(error.localizedDescription)"
        case let .xmlSerializationFailed(error):
            return "XML could not be serialized because of error:\n\(error.localizedDescription)"
        case let .imageSerializationFailed(reason):
            switch reason {
            case .unrecognizedFormat:
                return
                    "Image could not be serialized: the data is not a PNG, JPEG, GIF, WebP, BMP, TIFF, ICO or HEIC image."
            case let .truncated(format):
                return
                    "Image could not be serialized: the \(format.rawValue.uppercased()) data ends before the image does."
            case let .pixelCountExceedsLimit(width, height, limit):
                return "Image could not be serialized: \(width)×\(height) pixels is more than the limit of \(limit)."
            }
        case let .compoundSerializationFailed(errors):
            let reasons = errors.map { $0.localizedDescription }.joined(separator: "\n- ")
            return "Every serializer of the compound serializer failed:\n- \(reasons)"
        }
    }
}

extension AFError.ResponseValidationFailureReason {
    var localizedDescription: String {
        switch self {
        case .dataFileNil:
            return "Response could not be validated, data file was nil."
        case let .dataFileReadFailed(url):
            return "Response could not be validated, data file could not be read: \(url)."
        case let .missingContentType(types):
            return """
                Response Content-Type was missing and acceptable content types \
                (\(types.joined(separator: ","))) do not match "*/*".
                """
        case let .unacceptableContentType(acceptableTypes, responseType):
            return """
                Response Content-Type "\(responseType)" does not match any acceptable types: \
                \(acceptableTypes.joined(separator: ",")).
                """
        case let .unacceptableStatusCode(code):
            return "Response status code was unacceptable: \(code)."
        case let .customValidationFailed(error):
            return "Custom response validation failed with error: \(error.localizedDescription)"
        }
    }
}

extension AFError.ServerTrustFailureReason {
    var localizedDescription: String {
        switch self {
        case let .noRequiredEvaluator(host):
            return "A ServerTrustEvaluating value is required for host \(host) but none was found."
        case .noCertificatesFound:
            return "No certificates were found or provided for evaluation."
        case .noPublicKeysFound:
            return "No public keys were found or provided for evaluation."
        case let .trustEvaluationFailed(error):
            return "Trust evaluation failed with error: \(error?.localizedDescription ?? "none")"
        case let .defaultEvaluationFailed(output):
            return
                "The certificate chain of \(output.host) did not verify to a trusted root\(output.error.map { ": \($0)" } ?? ".")"
        case let .hostValidationFailed(output):
            return "The certificate presented does not name the host \(output.host)."
        case let .revocationCheckFailed(output, _):
            return "The revocation check of \(output.host)'s certificate failed\(output.error.map { ": \($0)" } ?? ".")"
        case let .certificatePinningFailed(host, _, _, _):
            return "Certificate pinning failed for host \(host): the server's certificate is not one of those pinned."
        case let .publicKeyPinningFailed(host, _, _, _):
            return "Public key pinning failed for host \(host): the server's key is not one of those pinned."
        case let .customEvaluationFailed(error):
            return "Custom trust evaluation failed with error: \(error.localizedDescription)"
        }
    }
}

extension AFError.URLRequestValidationFailureReason {
    var localizedDescription: String {
        switch self {
        case let .bodyDataInGETRequest(data):
            return
                "Invalid URLRequest: Requests with GET method cannot have body data:\n\(String(decoding: data, as: UTF8.self))"
        case let .invalidHeaderName(name):
            return
                "Invalid URLRequest: the header name \(name.debugDescription) is empty or holds a byte HTTP does not allow."
        case let .invalidHeaderValue(name):
            return "Invalid URLRequest: the value of header \(name.debugDescription) holds CR, LF or NUL."
        case let .unsupportedURLScheme(scheme):
            return "Invalid URLRequest: the URL scheme \((scheme ?? "(none)").debugDescription) is not http or https."
        case let .invalidHTTPMethod(method):
            return "Invalid URLRequest: the method \(method.debugDescription) is not an HTTP token."
        }
    }
}

extension AFError.RedirectFailureReason {
    var localizedDescription: String {
        switch self {
        case let .tooManyRedirects(limit):
            return "Redirect failed: the request was redirected more than \(limit) \(limit == 1 ? "time" : "times")."
        case let .unsupportedScheme(url):
            return "Redirect failed: refusing to follow a redirect to a URL that is not http or https: \(url)"
        case let .invalidPort(url):
            return
                "Redirect failed: the Location's port \(url.port.map(String.init) ?? "(none)") is outside 0...65535: \(url)"
        case let .invalidHost(url):
            return "Redirect failed: the Location names no valid host: \(url)"
        }
    }
}

extension AFError.SessionShutdownReason {
    var localizedDescription: String {
        switch self {
        case .refusedAfterShutdownBegan:
            return "The request was not sent: its Session had begun shutting down and accepts no new requests."
        case let .cancelledAfterGracePeriod(gracePeriod) where gracePeriod <= 0:
            return "The request was cancelled: its Session was shut down at once, with no grace period."
        case let .cancelledAfterGracePeriod(gracePeriod):
            return """
                The request was cancelled: it was still running when its Session's shutdown grace period of \
                \(gracePeriod) seconds ended. Raise it with Session(shutdownGracePeriod:).
                """
        }
    }
}

extension AFError.ResponseLimitFailureReason {
    var localizedDescription: String {
        switch self {
        case let .maximumResponseSizeExceeded(limit):
            return """
                The response body exceeded the limit of \(limit) bytes for bodies held in memory. Raise it with \
                Session(maximumResponseSize:) or the request's maximumResponseSize(_:), or download to a file.
                """
        case let .decompressionRatioExceeded(ratio, _):
            return """
                The response body was refused: it inflated by more than \(ratio) bytes per compressed byte, \
                the decompression limit that protects against compression bombs.
                """
        case let .webSocketMessageTooLarge(limit):
            return """
                A WebSocket message exceeded the limit of \(limit) bytes; the connection was closed (1009). Raise it \
                with WebSocketRequest.Configuration.maximumMessageSize(_:).
                """
        }
    }
}
