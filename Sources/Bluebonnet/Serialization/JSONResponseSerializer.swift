import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `ResponseSerializer` that parses the body with `JSONSerialization`. An allowed empty body, or one that is a
/// single space (AFNetworking's workaround for Rails' `head :ok`), is `NSNull()`.
public final class JSONResponseSerializer: ResponseSerializer {
    /// The value made: named, so one type answers for both data and download serialization.
    public typealias SerializedObject = Any

    /// The content types AFNetworking's JSON serializer accepts.
    public static let defaultAcceptableContentTypes: Set<String> = ["application/json", "text/json", "text/javascript"]

    /// The preprocessor.
    public let dataPreprocessor: any DataPreprocessor
    /// HTTP response codes for which empty responses are allowed.
    public let emptyResponseCodes: Set<Int>
    /// `HTTPMethod`s for which empty responses are always valid.
    public let emptyRequestMethods: Set<HTTPMethod>
    /// `JSONSerialization.ReadingOptions` used when serializing a response.
    public let options: JSONSerialization.ReadingOptions
    /// Whether keys whose value is `null` are removed, recursively through dictionaries and arrays.
    public let removesKeysWithNullValues: Bool
    /// MIME types the body must have to be parsed; `nil` checks nothing.
    public let acceptableContentTypes: Set<String>?
    /// Status codes the response must have to be parsed; `nil` checks nothing.
    public let acceptableStatusCodes: IndexSet?

    /// Creates an instance with the provided values.
    ///
    /// - Parameters:
    ///   - dataPreprocessor:          `DataPreprocessor` used to prepare the received `Data` for serialization.
    ///   - emptyResponseCodes:        The HTTP response codes for which empty responses are allowed. `[204, 205]` by default.
    ///   - emptyRequestMethods:       The HTTP request methods for which empty responses are allowed. `[.head]` by default.
    ///   - options:                   The options to use. `.allowFragments` by default.
    ///   - removesKeysWithNullValues: Whether null-valued keys are removed. `false` by default.
    ///   - acceptableContentTypes:    MIME types the body must have; `nil` (the default) checks nothing.
    ///   - acceptableStatusCodes:     Status codes the response must have; `nil` (the default) checks nothing.
    public init(
        dataPreprocessor: any DataPreprocessor = JSONResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = JSONResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = JSONResponseSerializer.defaultEmptyRequestMethods,
        options: JSONSerialization.ReadingOptions = .allowFragments,
        removesKeysWithNullValues: Bool = false,
        acceptableContentTypes: Set<String>? = nil,
        acceptableStatusCodes: IndexSet? = nil
    ) {
        self.dataPreprocessor = dataPreprocessor
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
        self.options = options
        self.removesKeysWithNullValues = removesKeysWithNullValues
        self.acceptableContentTypes = acceptableContentTypes
        self.acceptableStatusCodes = acceptableStatusCodes
    }

    /// Parses the body as JSON.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws
        -> Any
    {
        guard
            let data = try preparedData(
                request: request, response: response, data: data, error: error, blankIsEmpty: true)
        else {
            return NSNull()
        }
        let json: Any
        do {
            json = try JSONSerialization.jsonObject(with: data, options: options)
        } catch {
            throw AFError.responseSerializationFailed(reason: .jsonSerializationFailed(error: error))
        }
        return removesKeysWithNullValues ? Self.removingKeysWithNullValues(json) : json
    }

    /// `value` with every dictionary key whose value is `null` removed, at any depth; nulls inside arrays stay.
    static func removingKeysWithNullValues(_ value: Any) -> Any {
        switch value {
        case let dictionary as [String: Any]:
            var result: [String: Any] = [:]
            result.reserveCapacity(dictionary.count)
            for (key, element) in dictionary where !(element is NSNull) {
                result[key] = removingKeysWithNullValues(element)
            }
            return result
        case let array as [Any]:
            return array.map(removingKeysWithNullValues)
        default:
            return value
        }
    }
}

extension ResponseSerializer where Self == JSONResponseSerializer {
    /// Provides a default `JSONResponseSerializer` instance.
    public static var json: JSONResponseSerializer { JSONResponseSerializer() }

    /// Creates a `JSONResponseSerializer` using the values provided.
    ///
    /// - Parameters:
    ///   - dataPreprocessor:          `DataPreprocessor` used to prepare the received `Data` for serialization.
    ///   - emptyResponseCodes:        The HTTP response codes for which empty responses are allowed.
    ///   - emptyRequestMethods:       The HTTP request methods for which empty responses are allowed.
    ///   - options:                   The options to use. `.allowFragments` by default.
    ///   - removesKeysWithNullValues: Whether null-valued keys are removed. `false` by default.
    /// - Returns: The `JSONResponseSerializer`.
    public static func json(
        dataPreprocessor: any DataPreprocessor = JSONResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = JSONResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = JSONResponseSerializer.defaultEmptyRequestMethods,
        options: JSONSerialization.ReadingOptions = .allowFragments,
        removesKeysWithNullValues: Bool = false
    ) -> JSONResponseSerializer {
        JSONResponseSerializer(
            dataPreprocessor: dataPreprocessor, emptyResponseCodes: emptyResponseCodes,
            emptyRequestMethods: emptyRequestMethods, options: options,
            removesKeysWithNullValues: removesKeysWithNullValues)
    }
}
