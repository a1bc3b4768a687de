import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Writes the parameters as a property list body (Alamofire 4's third encoding), with `Content-Type:
/// application/x-plist` unless the request has one.
public struct PropertyListEncoding: ParameterEncoding {
    /// XML format.
    public static var `default`: PropertyListEncoding { PropertyListEncoding() }
    /// XML format.
    public static var xml: PropertyListEncoding { PropertyListEncoding(format: .xml) }
    /// Binary format.
    public static var binary: PropertyListEncoding { PropertyListEncoding(format: .binary) }

    /// The property list format.
    public let format: PropertyListSerialization.PropertyListFormat
    /// The write options.
    public let options: PropertyListSerialization.WriteOptions

    /// Creates an encoding.
    ///
    /// - Parameters:
    ///   - format:  `.xml` by default.
    ///   - options: None by default.
    public init(
        format: PropertyListSerialization.PropertyListFormat = .xml, options: PropertyListSerialization.WriteOptions = 0
    ) {
        self.format = format
        self.options = options
    }

    /// Writes `parameters` as the property list body.
    public func encode(_ urlRequest: any URLRequestConvertible, with parameters: Parameters?) throws -> URLRequest {
        var urlRequest = try urlRequest.asURLRequest()
        guard let parameters else { return urlRequest }
        do {
            let data = try PropertyListSerialization.data(
                fromPropertyList: parameters as [String: Any], format: format, options: options)
            if urlRequest.value(forHTTPHeaderField: "Content-Type") == nil {
                urlRequest.setValue("application/x-plist", forHTTPHeaderField: "Content-Type")
            }
            urlRequest.httpBody = data
        } catch {
            throw AFError.parameterEncodingFailed(reason: .propertyListEncodingFailed(error: error))
        }
        return urlRequest
    }
}
