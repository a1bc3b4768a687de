import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Uses `JSONSerialization` to create a JSON representation of the parameters object, which is set as the body of
/// the request. The `Content-Type` becomes `application/json` unless the request has one.
public struct JSONEncoding: ParameterEncoding {
    /// Errors this encoding reports inside `AFError.parameterEncodingFailed(.jsonEncodingFailed)`.
    public enum Error: Swift.Error {
        /// The value is not something `JSONSerialization` can write.
        case invalidJSONObject
    }

    /// Compact JSON.
    public static var `default`: JSONEncoding { JSONEncoding() }
    /// Indented JSON.
    public static var prettyPrinted: JSONEncoding { JSONEncoding(options: .prettyPrinted) }

    /// The options for writing the parameters as JSON data.
    public let options: JSONSerialization.WritingOptions

    /// Creates an encoding.
    ///
    /// - Parameter options: `JSONSerialization.WritingOptions` to use. None by default.
    public init(options: JSONSerialization.WritingOptions = []) {
        self.options = options
    }

    /// Writes `parameters` as the JSON body.
    public func encode(_ urlRequest: any URLRequestConvertible, with parameters: Parameters?) throws -> URLRequest {
        try encode(urlRequest, withJSONObject: parameters)
    }

    /// Writes any JSON value (a top-level array too) as the body.
    ///
    /// - Parameters:
    ///   - urlRequest: `URLRequestConvertible` value into which the object will be encoded.
    ///   - jsonObject: `Any` value (must be JSON compatible) to be encoded into the `URLRequest`. `nil` by default.
    /// - Returns:      The encoded `URLRequest`.
    /// - Throws:       `AFError.parameterEncodingFailed(.jsonEncodingFailed)` for a value that is not JSON.
    public func encode(_ urlRequest: any URLRequestConvertible, withJSONObject jsonObject: Any? = nil) throws
        -> URLRequest
    {
        var urlRequest = try urlRequest.asURLRequest()
        guard let jsonObject else { return urlRequest }
        guard JSONSerialization.isValidJSONObject(jsonObject) else {
            throw AFError.parameterEncodingFailed(reason: .jsonEncodingFailed(error: Error.invalidJSONObject))
        }
        do {
            let data = try JSONSerialization.data(withJSONObject: jsonObject, options: options)
            if urlRequest.value(forHTTPHeaderField: "Content-Type") == nil {
                urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
            }
            urlRequest.httpBody = data
        } catch {
            throw AFError.parameterEncodingFailed(reason: .jsonEncodingFailed(error: error))
        }
        return urlRequest
    }
}
