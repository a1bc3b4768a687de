import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The type to which all data response serializers must conform in order to serialize a response.
public protocol DataResponseSerializerProtocol<SerializedObject>: Sendable {
    /// The type of serialized object to be created. It need not be `Sendable` (JSON's `Any`, an `XMLDocument`): the
    /// value is made once and handed to the handler, never shared by the library.
    associatedtype SerializedObject

    /// Serialize the response `Data` into the provided type.
    ///
    /// - Parameters:
    ///   - request:  `URLRequest` which was used to perform the request, if any.
    ///   - response: `HTTPURLResponse` received from the server, if any.
    ///   - data:     `Data` returned from the server, if any.
    ///   - error:    `Error` produced by Bluebonnet or the transport, if any; a serializer rethrows it.
    /// - Returns:    The `SerializedObject`.
    /// - Throws:     Any `Error` produced during serialization.
    func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws
        -> SerializedObject

    /// Whether `serialize` is cheap and never blocks, so Bluebonnet may run it on the thread that completed the
    /// request rather than hop to `serializationQueue`. `false` unless a serializer says otherwise.
    var mayRunInline: Bool { get }
}

/// A serializer of the library's own that reads no more of a response than its status code and fields: it serializes
/// from where the response comes from, so a received head is not made into an `HTTPURLResponse` for it.
///
/// Deliberately not `SourceSerializing<SerializedObject>`: a cast to a constrained existential (`as? any P<T>`)
/// checks its constraint by demangling type names on every call (about 9,000 instructions, a twentieth of a small
/// request's cost in the library), while a cast to `any SourceSerializing` is a cached conformance lookup.
protocol SourceSerializing {
    associatedtype SerializedObject

    /// `serialize(request:response:data:error:)`, from the response's source.
    func serialize(request: URLRequest?, source: ResponseSource?, data: Data?, error: (any Error)?) throws
        -> SerializedObject
}

extension DataResponseSerializerProtocol {
    /// Serializes a finished request's response: from its head when the serializer is one of the library's that can.
    func serialize(request: URLRequest?, source: ResponseSource?, data: Data?, error: (any Error)?) throws
        -> SerializedObject
    {
        if case .head = source, let serializer = self as? any SourceSerializing,
            let object = try serializer.serialize(
                as: SerializedObject.self, request: request, source: source, data: data, error: error)
        {
            return object
        }
        return try serialize(request: request, response: source?.response, data: data, error: error)
    }
}

extension SourceSerializing {
    /// `serialize(request:source:data:error:)` as `Object`, which is this serializer's own `SerializedObject` when
    /// called above: the cast then compares two identical types and copies the value (no box, nothing demangled).
    fileprivate func serialize<Object>(
        as type: Object.Type, request: URLRequest?, source: ResponseSource?, data: Data?, error: (any Error)?
    ) throws -> Object? {
        try serialize(request: request, source: source, data: data, error: error) as? Object
    }
}

extension DataResponseSerializerProtocol {
    /// `false`: a serializer runs on `serializationQueue` unless it declares itself cheap.
    public var mayRunInline: Bool { false }
}

/// The type to which all download response serializers must conform in order to serialize a response.
public protocol DownloadResponseSerializerProtocol<SerializedObject>: Sendable {
    /// The type of serialized object to be created.
    associatedtype SerializedObject

    /// Serialize the downloaded response `Data` from disk into the provided type.
    ///
    /// - Parameters:
    ///   - request:  `URLRequest` which was used to perform the request, if any.
    ///   - response: `HTTPURLResponse` received from the server, if any.
    ///   - fileURL:  File `URL` to which the response data was downloaded.
    ///   - error:    `Error` produced by Bluebonnet or the transport, if any.
    /// - Returns:    The `SerializedObject`.
    /// - Throws:     Any `Error` produced during serialization.
    func serializeDownload(request: URLRequest?, response: HTTPURLResponse?, fileURL: URL?, error: (any Error)?) throws
        -> SerializedObject
}

/// A serializer that can handle empty responses, preprocess the data before it is parsed, and refuse responses whose
/// status code or content type it does not accept (AFNetworking's checks, made before anything is parsed).
public protocol ResponseSerializer<SerializedObject>: DataResponseSerializerProtocol
        & DownloadResponseSerializerProtocol
{
    /// `DataPreprocessor` used to prepare incoming `Data` for serialization.
    var dataPreprocessor: any DataPreprocessor { get }
    /// `HTTPMethod`s for which empty response bodies are considered appropriate.
    var emptyRequestMethods: Set<HTTPMethod> { get }
    /// HTTP response codes for which empty response bodies are considered appropriate.
    var emptyResponseCodes: Set<Int> { get }
    /// MIME types (wildcards such as `text/*` allowed) the body must have to be parsed; `nil` checks nothing.
    var acceptableContentTypes: Set<String>? { get }
    /// Status codes the response must have to be parsed; `nil` checks nothing.
    var acceptableStatusCodes: IndexSet? { get }
}

/// Type used to preprocess `Data` before it handled by a serializer.
public protocol DataPreprocessor: Sendable {
    /// Process `Data` before it's handled by a serializer.
    ///
    /// - Parameter data: The raw `Data` to process.
    /// - Returns: The processed `Data`.
    func preprocess(_ data: Data) throws -> Data

    /// Whether `preprocess` is cheap and never blocks. `false` unless a preprocessor says otherwise.
    var mayRunInline: Bool { get }
}

extension DataPreprocessor {
    /// `false`: a preprocessor is assumed to do real work.
    public var mayRunInline: Bool { false }
}

/// `DataPreprocessor` that returns passed `Data` without any transform.
public struct PassthroughPreprocessor: DataPreprocessor {
    /// Creates the preprocessor.
    public init() {}

    /// Returns `data` unchanged.
    public func preprocess(_ data: Data) throws -> Data { data }

    /// `true`: nothing is done.
    public var mayRunInline: Bool { true }
}

/// `DataPreprocessor` that trims Google's typical `)]}',\n` XSSI JSON header.
public struct GoogleXSSIPreprocessor: DataPreprocessor {
    /// Creates the preprocessor.
    public init() {}

    /// Drops the leading `)]}',\n` when present.
    public func preprocess(_ data: Data) throws -> Data {
        let prefix = Data(")]}',\n".utf8)
        return data.starts(with: prefix) ? data.dropFirst(prefix.count) : data
    }
}

extension DataPreprocessor where Self == PassthroughPreprocessor {
    /// Provides a `PassthroughPreprocessor` instance.
    public static var passthrough: PassthroughPreprocessor { PassthroughPreprocessor() }
}

extension DataPreprocessor where Self == GoogleXSSIPreprocessor {
    /// Provides a `GoogleXSSIPreprocessor` instance.
    public static var googleXSSI: GoogleXSSIPreprocessor { GoogleXSSIPreprocessor() }
}

/// The defaults' values, made once: a default argument is evaluated at every call, and a `Set` literal allocates.
private let sharedEmptyRequestMethods: Set<HTTPMethod> = [.head]
private let sharedEmptyResponseCodes: Set<Int> = [204, 205]

extension ResponseSerializer {
    /// Default `DataPreprocessor`. `PassthroughPreprocessor` by default.
    public static var defaultDataPreprocessor: any DataPreprocessor { PassthroughPreprocessor() }
    /// Default `HTTPMethod`s for which empty response bodies are always considered appropriate. `[.head]` by default.
    public static var defaultEmptyRequestMethods: Set<HTTPMethod> { sharedEmptyRequestMethods }
    /// HTTP response codes for which empty response bodies are always considered appropriate. `[204, 205]` by default.
    public static var defaultEmptyResponseCodes: Set<Int> { sharedEmptyResponseCodes }

    /// The default preprocessor.
    public var dataPreprocessor: any DataPreprocessor { Self.defaultDataPreprocessor }
    /// The default empty request methods.
    public var emptyRequestMethods: Set<HTTPMethod> { Self.defaultEmptyRequestMethods }
    /// The default empty response codes.
    public var emptyResponseCodes: Set<Int> { Self.defaultEmptyResponseCodes }
    /// No content type check by default.
    public var acceptableContentTypes: Set<String>? { nil }
    /// No status code check by default.
    public var acceptableStatusCodes: IndexSet? { nil }

    /// Determines whether the `request` allows empty response bodies, if `request` exists.
    ///
    /// - Parameter request: `URLRequest` to evaluate.
    /// - Returns: `Bool` representing the outcome of the evaluation, or `nil` if `request` was `nil`.
    public func requestAllowsEmptyResponseData(_ request: URLRequest?) -> Bool? {
        request.flatMap(\.httpMethod).flatMap(HTTPMethod.init).map { emptyRequestMethods.contains($0) }
    }

    /// Determines whether the `response` allows empty response bodies, if `response` exists.
    ///
    /// - Parameter response: `HTTPURLResponse` to evaluate.
    /// - Returns: `Bool` representing the outcome of the evaluation, or `nil` if `response` was `nil`.
    public func responseAllowsEmptyResponseData(_ response: HTTPURLResponse?) -> Bool? {
        response.map(\.statusCode).map { emptyResponseCodes.contains($0) }
    }

    /// Determines whether `request` and `response` allow empty response bodies.
    ///
    /// - Parameters:
    ///   - request:  `URLRequest` to evaluate.
    ///   - response: `HTTPURLResponse` to evaluate.
    /// - Returns:    `true` if `request` or `response` allow empty bodies, `false` otherwise.
    public func emptyResponseAllowed(forRequest request: URLRequest?, response: HTTPURLResponse?) -> Bool {
        (requestAllowsEmptyResponseData(request) == true) || (responseAllowsEmptyResponseData(response) == true)
    }
}

extension ResponseSerializer {
    /// Reads the downloaded file and serializes its bytes with `serialize(request:response:data:error:)`.
    public func serializeDownload(request: URLRequest?, response: HTTPURLResponse?, fileURL: URL?, error: (any Error)?)
        throws -> SerializedObject
    {
        if let error { throw error }
        return try serialize(request: request, response: response, data: DownloadedFile.read(fileURL), error: nil)
    }

    /// The steps every serializer shares, in AFNetworking's order: rethrow the request's error, check the status code
    /// and content type, then either allow an empty body (`nil`) or refuse it, and preprocess what remains.
    ///
    /// - Parameters:
    ///   - request:             The request, for the empty-method rule.
    ///   - response:            The response, for the status, content type and empty-code rules.
    ///   - data:                The body.
    ///   - error:               The request's error, rethrown first.
    ///   - blankIsEmpty:        Whether a body that is a single space counts as empty (Rails' `head :ok`).
    /// - Returns: The preprocessed body, or `nil` for an allowed empty one.
    func preparedData(
        request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?, blankIsEmpty: Bool = false
    ) throws -> Data? {
        try preparedData(
            request: request, source: response.map(ResponseSource.response), data: data, error: error,
            blankIsEmpty: blankIsEmpty)
    }

    /// `preparedData(request:response:data:error:blankIsEmpty:)` from where the response comes from, which a head
    /// answers without being made into an `HTTPURLResponse`.
    func preparedData(
        request: URLRequest?, source: ResponseSource?, data: Data?, error: (any Error)?, blankIsEmpty: Bool = false
    ) throws -> Data? {
        if let error { throw error }
        if let source {
            try ResponseAcceptance.check(
                source, data: data, contentTypes: acceptableContentTypes, statusCodes: acceptableStatusCodes)
        }
        let isBlank = blankIsEmpty && data?.count == 1 && data?.first == UInt8(ascii: " ")
        guard let data, !data.isEmpty, !isBlank else {
            let allowed =
                requestAllowsEmptyResponseData(request) == true
                || source.map { emptyResponseCodes.contains($0.statusCode) } == true
            guard allowed else {
                throw AFError.responseSerializationFailed(reason: .inputDataNilOrZeroLength)
            }
            return nil
        }
        return try dataPreprocessor.preprocess(data)
    }
}

/// AFNetworking's per-serializer checks, with the same MIME matching as `validate(contentType:)`.
enum ResponseAcceptance {
    static func check(_ source: ResponseSource, data: Data?, contentTypes: Set<String>?, statusCodes: IndexSet?) throws
    {
        if let statusCodes, !statusCodes.contains(source.statusCode) {
            throw AFError.responseValidationFailed(reason: .unacceptableStatusCode(code: source.statusCode))
        }
        if let contentTypes,
            case let .failure(error) = ResponseValidator.validate(
                contentType: contentTypes.sorted(), header: source.value(for: "Content-Type"), data: data)
        {
            throw error
        }
    }
}

/// Reads a downloaded body back for serialization.
enum DownloadedFile {
    /// The file's bytes, mapped when the system allows, or Alamofire's file errors (`inputFileNil`,
    /// `inputFileReadFailed`).
    static func read(_ fileURL: URL?) throws -> Data {
        guard let fileURL else {
            throw AFError.responseSerializationFailed(reason: .inputFileNil)
        }
        do {
            return try Data(contentsOf: fileURL, options: .mappedIfSafe)
        } catch {
            throw AFError.responseSerializationFailed(reason: .inputFileReadFailed(at: fileURL))
        }
    }
}
