import Foundation
import X509

/// The one error type Bluebonnet returns: each case names the stage that failed and carries what went wrong.
public enum AFError: Error, Sendable {
    /// The underlying reason a multipart form could not be encoded.
    public enum MultipartEncodingFailureReason: Sendable {
        /// The `fileURL` provided for reading an encodable body part isn't a file `URL`.
        case bodyPartURLInvalid(url: URL)
        /// The filename of the `fileURL` provided has either an empty `lastPathComponent` or `pathExtension`.
        case bodyPartFilenameInvalid(in: URL)
        /// The file at the `fileURL` provided was not reachable.
        case bodyPartFileNotReachable(at: URL)
        /// Attempting to check the reachability of the `fileURL` provided threw an error.
        case bodyPartFileNotReachableWithError(atURL: URL, error: any Error)
        /// The file at the `fileURL` provided is actually a directory.
        case bodyPartFileIsDirectory(at: URL)
        /// The size of the file at the `fileURL` provided was not returned by the system.
        case bodyPartFileSizeNotAvailable(at: URL)
        /// The attempt to find the size of the file at the `fileURL` provided threw an error.
        case bodyPartFileSizeQueryFailedWithError(forURL: URL, error: any Error)
        /// An `InputStream` could not be created for the provided `fileURL`.
        case bodyPartInputStreamCreationFailed(for: URL)
        /// An `OutputStream` could not be created when attempting to write the encoded data to disk.
        case outputStreamCreationFailed(for: URL)
        /// The encoded body data could not be written to disk because a file already exists at the provided `fileURL`.
        case outputStreamFileAlreadyExists(at: URL)
        /// The `fileURL` provided for writing the encoded body data to disk is not a file `URL`.
        case outputStreamURLInvalid(url: URL)
        /// The attempt to write the encoded body data to disk failed with an underlying error.
        case outputStreamWriteFailed(error: any Error)
        /// The attempt to read an encoded body part `InputStream` failed with underlying system error.
        case inputStreamReadFailed(error: any Error)
    }

    /// A body part whose stream or file held a different number of bytes than its length said: the error inside
    /// `MultipartEncodingFailureReason.inputStreamReadFailed(error:)`, as in Alamofire.
    public struct UnexpectedInputStreamLength: Error, Sendable {
        /// The expected byte count to read.
        public var bytesExpected: UInt64
        /// The actual byte count read (`bytesExpected + 1` for a file that grew past its length).
        public var bytesRead: UInt64
    }

    /// The underlying reason a `ParameterEncoding` failed.
    public enum ParameterEncodingFailureReason: Sendable {
        /// The `URLRequest` did not have a `URL` to encode.
        case missingURL
        /// JSON serialization failed with an underlying system error during the encoding process.
        case jsonEncodingFailed(error: any Error)
        /// Property list serialization failed with an underlying system error during the encoding process.
        case propertyListEncodingFailed(error: any Error)
        /// Custom parameter encoding failed due to the associated `Error`.
        case customEncodingFailed(error: any Error)
    }

    /// The underlying reason a `ParameterEncoder` failed.
    public enum ParameterEncoderFailureReason: Sendable {
        /// Possible missing components.
        public enum RequiredComponent: Sendable {
            /// The `URL` was missing or unable to be extracted from the passed `URLRequest` or during encoding.
            case url
            /// The `HTTPMethod` could not be extracted from the passed `URLRequest`.
            case httpMethod(rawValue: String)
        }

        /// A `RequiredComponent` was missing during encoding.
        case missingRequiredComponent(RequiredComponent)
        /// The underlying encoder failed with the associated error.
        case encoderFailed(error: any Error)
    }

    /// The underlying reason a response validation failed.
    public enum ResponseValidationFailureReason: Sendable {
        /// The data file containing the server response did not exist.
        case dataFileNil
        /// The data file containing the server response at the associated `URL` could not be read.
        case dataFileReadFailed(at: URL)
        /// The response did not contain a `Content-Type` and the `acceptableContentTypes` provided did not contain a wildcard type.
        case missingContentType(acceptableContentTypes: [String])
        /// The response `Content-Type` did not match any type in the provided `acceptableContentTypes`.
        case unacceptableContentType(acceptableContentTypes: [String], responseContentType: String)
        /// The response status code was not acceptable.
        case unacceptableStatusCode(code: Int)
        /// Custom response validation failed due to the associated `Error`.
        case customValidationFailed(error: any Error)
    }

    /// The underlying reason a response serialization failed.
    public enum ResponseSerializationFailureReason: Sendable {
        /// The server response contained no data or the data was zero length.
        case inputDataNilOrZeroLength
        /// The file containing the server response did not exist.
        case inputFileNil
        /// The file containing the server response could not be read from the associated `URL`.
        case inputFileReadFailed(at: URL)
        /// String serialization failed using the provided `String.Encoding`.
        case stringSerializationFailed(encoding: String.Encoding)
        /// JSON serialization failed with an underlying system error.
        case jsonSerializationFailed(error: any Error)
        /// A `DataDecoder` failed to decode the response due to the associated `Error`.
        case decodingFailed(error: any Error)
        /// A custom response serializer failed due to the associated `Error`.
        case customSerializationFailed(error: any Error)
        /// Generic serialization failed for an empty response that wasn't type `Empty` but instead the associated type.
        case invalidEmptyResponse(type: String)
        /// Property list serialization failed with an underlying system error.
        case propertyListSerializationFailed(error: any Error)
        /// The body is not well-formed XML; the parser's error is attached.
        case xmlSerializationFailed(error: any Error)
        /// The body is not an image Bluebonnet can read, or one too large to accept.
        case imageSerializationFailed(reason: ImageFailureReason)
        /// Every serializer of a `CompoundResponseSerializer` failed; their errors, in order (the last is the
        /// final serializer's).
        case compoundSerializationFailed(errors: [AFError])
    }

    /// Why an image response was refused.
    public enum ImageFailureReason: Sendable {
        /// The bytes start like no format Bluebonnet reads (PNG, JPEG, GIF, WebP, BMP, TIFF, ICO, HEIC).
        case unrecognizedFormat
        /// The bytes start as the format but end before its structure does.
        case truncated(format: ImageResponseSerializer.Image.Format)
        /// The image's width × height is above the serializer's limit, so it is never inflated.
        case pixelCountExceedsLimit(width: Int, height: Int, limit: Int)
    }

    /// The underlying reason a server's TLS identity was not trusted.
    public enum ServerTrustFailureReason: Sendable {
        /// What an evaluation saw when it failed.
        public struct Output: Sendable {
            /// The host evaluated.
            public let host: String
            /// What the connection showed of the server; `nil` when the handshake itself refused the chain.
            public let trust: ServerTrust?
            /// The TLS layer's error, when the handshake refused the chain.
            public let error: (any Error)?

            init(host: String, trust: ServerTrust?, error: (any Error)?) {
                self.host = host
                self.trust = trust
                self.error = error
            }
        }

        /// No `ServerTrustEvaluating` was found for the associated host, and the `ServerTrustManager` requires one.
        case noRequiredEvaluator(host: String)
        /// No certificates were found with which to perform the trust evaluation.
        case noCertificatesFound
        /// No public keys were found with which to perform the trust evaluation.
        case noPublicKeysFound
        /// The trust could not be evaluated at all; the error is attached.
        case trustEvaluationFailed(error: (any Error)?)
        /// The server's chain did not verify to a trusted root (expired, self-signed, unknown issuer...).
        case defaultEvaluationFailed(output: Output)
        /// The server's certificate does not name the host.
        case hostValidationFailed(output: Output)
        /// The server's certificate was revoked, or its revocation status could not be had when the options require
        /// it; `output.error` says which.
        case revocationCheckFailed(output: Output, options: RevocationTrustEvaluator.Options)
        /// None of the server's certificates is one of the pinned ones.
        case certificatePinningFailed(
            host: String, trust: ServerTrust, pinnedCertificates: [Certificate], serverCertificates: [Certificate])
        /// None of the server's public keys is one of the pinned ones.
        case publicKeyPinningFailed(
            host: String, trust: ServerTrust, pinnedKeys: [Certificate.PublicKey], serverKeys: [Certificate.PublicKey])
        /// A custom evaluator threw the associated error.
        case customEvaluationFailed(error: any Error)
    }

    /// The underlying reason a `URLRequest` was refused before anything was sent.
    public enum URLRequestValidationFailureReason: Sendable {
        /// URLRequest with GET method had body data.
        case bodyDataInGETRequest(Data)
        /// A header name is empty or holds a byte that HTTP does not allow in a field name (CR, LF, NUL, space, ...).
        case invalidHeaderName(String)
        /// The value of the named header holds CR, LF or NUL, which would let it forge further headers.
        case invalidHeaderValue(name: String)
        /// The URL's scheme is not one the transport can speak (only `http` and `https` are).
        case unsupportedURLScheme(String?)
        /// The method is not an RFC 9110 token (empty, or holding a space, CR, LF or another delimiter), so it
        /// could split the request line.
        case invalidHTTPMethod(String)
    }

    /// The underlying reason a redirect was not followed.
    public enum RedirectFailureReason: Sendable {
        /// The request was redirected more times than the redirect handler allows.
        case tooManyRedirects(limit: Int)
        /// A `Location` pointed at a scheme other than `http` or `https`.
        case unsupportedScheme(url: URL)
        /// A `Location` named a port outside `0...65535`.
        case invalidPort(url: URL)
        /// A `Location` named no host, or a host holding a byte no host name can (a control character or a space).
        case invalidHost(url: URL)
    }

    /// The underlying reason a response was refused for its size.
    public enum ResponseLimitFailureReason: Sendable {
        /// A body held in memory grew past `limit` bytes: raise `Session(maximumResponseSize:)` or the request's
        /// `maximumResponseSize(_:)`.
        case maximumResponseSizeExceeded(limit: Int64)
        /// A compressed body inflated by more than `ratio` bytes per compressed byte (a compression bomb); the
        /// decompressor's error is attached.
        case decompressionRatioExceeded(ratio: Int, error: any Error)
        /// A WebSocket message (its fragments together) grew past `limit` bytes, the request's
        /// `WebSocketRequest.Configuration.maximumMessageSize`; the connection was closed with `messageTooBig`.
        case webSocketMessageTooLarge(limit: Int)
    }

    /// Why a request ended because its `Session` was shutting down (`Session.shutdown(gracePeriod:)`, the end of
    /// `Session.withSession`, or a `ServiceGroup` stopping the session).
    public enum SessionShutdownReason: Sendable {
        /// The request was made or resumed after the session had begun shutting down: it was never sent.
        case refusedAfterShutdownBegan
        /// The request was still in flight when the shutdown's grace period of `gracePeriod` seconds ended (`0` when
        /// the session was shut down without one, because the task running it was cancelled): it was cancelled.
        case cancelledAfterGracePeriod(gracePeriod: TimeInterval)
    }

    /// `UploadableConvertible` threw an error in `createUploadable()`.
    case createUploadableFailed(error: any Error)
    /// `URLRequestConvertible` threw an error in `asURLRequest()`.
    case createURLRequestFailed(error: any Error)
    /// `SessionDelegate` threw an error while attempting to move downloaded file to destination URL.
    case downloadedFileMoveFailed(error: any Error, source: URL, destination: URL)
    /// `Request` was explicitly cancelled.
    case explicitlyCancelled
    /// `URLConvertible` type failed to create a valid `URL`.
    case invalidURL(url: any URLConvertible)
    /// Multipart form encoding failed.
    case multipartEncodingFailed(reason: MultipartEncodingFailureReason)
    /// `ParameterEncoding` threw an error during the encoding process.
    case parameterEncodingFailed(reason: ParameterEncodingFailureReason)
    /// `ParameterEncoder` threw an error while running the encoder.
    case parameterEncoderFailed(reason: ParameterEncoderFailureReason)
    /// A redirect could not be followed.
    case redirectFailed(reason: RedirectFailureReason)
    /// `RequestAdapter` threw an error during adaptation.
    case requestAdaptationFailed(error: any Error)
    /// `RequestRetrier` threw an error during the request retry process.
    case requestRetryFailed(retryError: any Error, originalError: any Error)
    /// Response validation failed.
    case responseValidationFailed(reason: ResponseValidationFailureReason)
    /// Response serialization failed.
    case responseSerializationFailed(reason: ResponseSerializationFailureReason)
    /// Server trust evaluation failed.
    case serverTrustEvaluationFailed(reason: ServerTrustFailureReason)
    /// `Session` which issued the `Request` was deinitialized, most likely because its reference went out of scope.
    case sessionDeinitialized
    /// `Session` was explicitly invalidated, possibly with the `Error` produced by the transport.
    case sessionInvalidated(error: (any Error)?)
    /// The transport failed: connecting, sending, receiving or timing out (a `URLError` as URLSession reports it).
    case sessionTaskFailed(error: any Error)
    /// `URLRequest` failed validation.
    case urlRequestValidationFailed(reason: URLRequestValidationFailureReason)
    /// The response went past a limit set to protect memory (its size, or its compression ratio).
    case responseLimitExceeded(reason: ResponseLimitFailureReason)
    /// The request's `Session` was shutting down: the request was refused, or cancelled when the grace period ended.
    case sessionShutDown(reason: SessionShutdownReason)
}

extension Error {
    /// Returns the instance cast as an `AFError`.
    public var asAFError: AFError? {
        self as? AFError
    }

    /// Returns the instance cast as an `AFError`. If casting fails, a `fatalError` with the specified `message` is thrown.
    ///
    /// - Parameters:
    ///   - message: The message to stop with.
    ///   - file: The file that made the call.
    ///   - line: The line that made the call.
    public func asAFError(orFailWith message: @autoclosure () -> String, file: StaticString = #file, line: UInt = #line)
        -> AFError
    {
        guard let afError = self as? AFError else {
            fatalError(message(), file: file, line: line)
        }
        return afError
    }

    /// Casts the instance as `AFError` or returns `defaultAFError`.
    ///
    /// - Parameter defaultAFError: The error returned when the instance is not an `AFError`.
    func asAFError(or defaultAFError: @autoclosure () -> AFError) -> AFError {
        self as? AFError ?? defaultAFError()
    }
}
