import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `ResponseSerializer` that performs minimal response checking and returns any response `Data` as-is. By default,
/// a request returning `nil` or no data is considered an error. However, if the request has an `HTTPMethod` or the
/// response has an HTTP status code valid for empty responses, then an empty `Data` value is returned.
public final class DataResponseSerializer: ResponseSerializer {
    /// The value made: named, so one type answers for both data and download serialization.
    public typealias SerializedObject = Data

    /// The preprocessor.
    public let dataPreprocessor: any DataPreprocessor

    /// Handing out the body is cheap, so this serializer may run where the request finished unless its preprocessor
    /// does real work.
    public var mayRunInline: Bool { dataPreprocessor.mayRunInline }
    /// HTTP response codes for which empty responses are allowed.
    public let emptyResponseCodes: Set<Int>
    /// `HTTPMethod`s for which empty responses are always valid.
    public let emptyRequestMethods: Set<HTTPMethod>
    /// MIME types the body must have to be serialized; `nil` checks nothing.
    public let acceptableContentTypes: Set<String>?
    /// Status codes the response must have to be serialized; `nil` checks nothing.
    public let acceptableStatusCodes: IndexSet?

    /// Creates a `DataResponseSerializer` using the provided parameters.
    ///
    /// - Parameters:
    ///   - dataPreprocessor:    `DataPreprocessor` used to prepare the received `Data` for serialization.
    ///   - emptyResponseCodes:  The HTTP response codes for which empty responses are allowed. `[204, 205]` by default.
    ///   - emptyRequestMethods: The HTTP request methods for which empty responses are allowed. `[.head]` by default.
    ///   - acceptableContentTypes: MIME types the body must have; `nil` (the default) checks nothing.
    ///   - acceptableStatusCodes:  Status codes the response must have; `nil` (the default) checks nothing.
    public init(
        dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods,
        acceptableContentTypes: Set<String>? = nil,
        acceptableStatusCodes: IndexSet? = nil
    ) {
        self.dataPreprocessor = dataPreprocessor
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
        self.acceptableContentTypes = acceptableContentTypes
        self.acceptableStatusCodes = acceptableStatusCodes
    }

    /// Returns the body, or `Data()` for an allowed empty response.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws
        -> Data
    {
        try serialize(request: request, source: response.map(ResponseSource.response), data: data, error: error)
    }
}

extension DataResponseSerializer: SourceSerializing {
    func serialize(request: URLRequest?, source: ResponseSource?, data: Data?, error: (any Error)?) throws -> Data {
        try preparedData(request: request, source: source, data: data, error: error) ?? Data()
    }
}

extension ResponseSerializer where Self == DataResponseSerializer {
    /// Provides a default `DataResponseSerializer` instance.
    public static var data: DataResponseSerializer { DataResponseSerializer() }

    /// Creates a `DataResponseSerializer` using the provided parameters.
    ///
    /// - Parameters:
    ///   - dataPreprocessor:    `DataPreprocessor` used to prepare the received `Data` for serialization.
    ///   - emptyResponseCodes:  The HTTP response codes for which empty responses are allowed.
    ///   - emptyRequestMethods: The HTTP request methods for which empty responses are allowed.
    /// - Returns: The `DataResponseSerializer`.
    public static func data(
        dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods
    ) -> DataResponseSerializer {
        DataResponseSerializer(
            dataPreprocessor: dataPreprocessor, emptyResponseCodes: emptyResponseCodes,
            emptyRequestMethods: emptyRequestMethods)
    }
}
