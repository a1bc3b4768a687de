import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `ResponseSerializer` that parses XML and binary property lists with `PropertyListSerialization` (Alamofire 4's
/// `responsePropertyList`). An allowed empty body is `NSNull()`.
public final class PropertyListResponseSerializer: ResponseSerializer {
    /// The value made: named, so one type answers for both data and download serialization.
    public typealias SerializedObject = Any

    /// The content types AFNetworking's property list serializer accepts.
    public static let defaultAcceptableContentTypes: Set<String> = ["application/x-plist"]

    /// The preprocessor.
    public let dataPreprocessor: any DataPreprocessor
    /// HTTP response codes for which empty responses are allowed.
    public let emptyResponseCodes: Set<Int>
    /// `HTTPMethod`s for which empty responses are always valid.
    public let emptyRequestMethods: Set<HTTPMethod>
    /// The property list reading options.
    public let options: PropertyListSerialization.ReadOptions
    /// MIME types the body must have to be parsed; `nil` checks nothing.
    public let acceptableContentTypes: Set<String>?
    /// Status codes the response must have to be parsed; `nil` checks nothing.
    public let acceptableStatusCodes: IndexSet?

    /// Creates an instance with the provided values.
    ///
    /// - Parameters:
    ///   - dataPreprocessor:       `DataPreprocessor` used to prepare the received `Data` for serialization.
    ///   - emptyResponseCodes:     The HTTP response codes for which empty responses are allowed. `[204, 205]` by default.
    ///   - emptyRequestMethods:    The HTTP request methods for which empty responses are allowed. `[.head]` by default.
    ///   - options:                The property list reading options. None by default.
    ///   - acceptableContentTypes: MIME types the body must have; `nil` (the default) checks nothing.
    ///   - acceptableStatusCodes:  Status codes the response must have; `nil` (the default) checks nothing.
    public init(
        dataPreprocessor: any DataPreprocessor = PropertyListResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = PropertyListResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = PropertyListResponseSerializer.defaultEmptyRequestMethods,
        options: PropertyListSerialization.ReadOptions = [],
        acceptableContentTypes: Set<String>? = nil,
        acceptableStatusCodes: IndexSet? = nil
    ) {
        self.dataPreprocessor = dataPreprocessor
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
        self.options = options
        self.acceptableContentTypes = acceptableContentTypes
        self.acceptableStatusCodes = acceptableStatusCodes
    }

    /// Parses the body as a property list.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws
        -> Any
    {
        guard let data = try preparedData(request: request, response: response, data: data, error: error) else {
            return NSNull()
        }
        do {
            return try PropertyListSerialization.propertyList(from: data, options: options, format: nil)
        } catch {
            throw AFError.responseSerializationFailed(reason: .propertyListSerializationFailed(error: error))
        }
    }
}

extension ResponseSerializer where Self == PropertyListResponseSerializer {
    /// Provides a default `PropertyListResponseSerializer` instance.
    public static var propertyList: PropertyListResponseSerializer { PropertyListResponseSerializer() }
}
