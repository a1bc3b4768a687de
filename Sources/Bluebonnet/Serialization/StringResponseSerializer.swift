import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `ResponseSerializer` that decodes the body as a `String`: with the explicit encoding if given, else the
/// `charset` of the response's `Content-Type`, else ISO-8859-1 (HTTP/1.1's historical default, RFC 2616 §3.7.1).
public final class StringResponseSerializer: ResponseSerializer {
    /// The value made: named, so one type answers for both data and download serialization.
    public typealias SerializedObject = String

    /// The preprocessor.
    public let dataPreprocessor: any DataPreprocessor
    /// Optional string encoding used to validate the response.
    public let encoding: String.Encoding?
    /// HTTP response codes for which empty responses are allowed.
    public let emptyResponseCodes: Set<Int>
    /// `HTTPMethod`s for which empty responses are always valid.
    public let emptyRequestMethods: Set<HTTPMethod>
    /// MIME types the body must have to be serialized; `nil` checks nothing.
    public let acceptableContentTypes: Set<String>?
    /// Status codes the response must have to be serialized; `nil` checks nothing.
    public let acceptableStatusCodes: IndexSet?

    /// Creates an instance with the provided values.
    ///
    /// - Parameters:
    ///   - dataPreprocessor:    `DataPreprocessor` used to prepare the received `Data` for serialization.
    ///   - encoding:            A string encoding. Defaults to `nil`, in which case the encoding will be determined
    ///                          from the server response, falling back to the default HTTP character set, `ISO-8859-1`.
    ///   - emptyResponseCodes:  The HTTP response codes for which empty responses are allowed. `[204, 205]` by default.
    ///   - emptyRequestMethods: The HTTP request methods for which empty responses are allowed. `[.head]` by default.
    ///   - acceptableContentTypes: MIME types the body must have; `nil` (the default) checks nothing.
    ///   - acceptableStatusCodes:  Status codes the response must have; `nil` (the default) checks nothing.
    public init(
        dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
        encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods,
        acceptableContentTypes: Set<String>? = nil,
        acceptableStatusCodes: IndexSet? = nil
    ) {
        self.dataPreprocessor = dataPreprocessor
        self.encoding = encoding
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
        self.acceptableContentTypes = acceptableContentTypes
        self.acceptableStatusCodes = acceptableStatusCodes
    }

    /// Decodes the body as a `String`, or `""` for an allowed empty response.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws
        -> String
    {
        try serialize(request: request, source: response.map(ResponseSource.response), data: data, error: error)
    }
}

extension StringResponseSerializer: SourceSerializing {
    func serialize(request: URLRequest?, source: ResponseSource?, data: Data?, error: (any Error)?) throws -> String {
        guard let data = try preparedData(request: request, source: source, data: data, error: error) else {
            return ""
        }
        // A byte order mark is the body's own word on its encoding, so it beats the ISO-8859-1 fallback.
        let actualEncoding =
            encoding
            ?? source.flatMap { CharsetResolver.encoding(forContentType: $0.value(for: "Content-Type")) }
            ?? CharsetResolver.encoding(forByteOrderMarkOf: data)
            ?? .isoLatin1
        guard let string = String(data: data, encoding: actualEncoding) else {
            throw AFError.responseSerializationFailed(reason: .stringSerializationFailed(encoding: actualEncoding))
        }
        return string
    }
}

extension ResponseSerializer where Self == StringResponseSerializer {
    /// Provides a default `StringResponseSerializer` instance.
    public static var string: StringResponseSerializer { StringResponseSerializer() }

    /// Creates a `StringResponseSerializer` with the provided values.
    ///
    /// - Parameters:
    ///   - dataPreprocessor:    `DataPreprocessor` used to prepare the received `Data` for serialization.
    ///   - encoding:            A string encoding, or `nil` to use the response's charset.
    ///   - emptyResponseCodes:  The HTTP response codes for which empty responses are allowed.
    ///   - emptyRequestMethods: The HTTP request methods for which empty responses are allowed.
    /// - Returns: The `StringResponseSerializer`.
    public static func string(
        dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
        encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods
    ) -> StringResponseSerializer {
        StringResponseSerializer(
            dataPreprocessor: dataPreprocessor, encoding: encoding,
            emptyResponseCodes: emptyResponseCodes, emptyRequestMethods: emptyRequestMethods)
    }
}
