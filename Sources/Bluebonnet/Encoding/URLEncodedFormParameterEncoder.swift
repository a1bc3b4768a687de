import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `ParameterEncoder` that writes an `Encodable` value as `application/x-www-form-urlencoded`, in the query or the
/// body. Keys are sorted, arrays use brackets, booleans are numeric, nested values become `a[b]=c`, `nil` drops the
/// key, dates use `Date`'s own encoding and data is Base64, as Alamofire's defaults.
public struct URLEncodedFormParameterEncoder: ParameterEncoder {
    /// Where the form goes.
    public enum Destination: Sendable {
        /// The query for `GET`, `HEAD` and `DELETE`, the body otherwise.
        case methodDependent
        /// Always the query string.
        case queryString
        /// Always the body.
        case httpBody

        func encodesParametersInURL(for method: HTTPMethod) -> Bool {
            switch self {
            case .methodDependent: return method.encodesParametersInURLByDefault
            case .queryString: return true
            case .httpBody: return false
            }
        }
    }

    /// Errors inside `AFError.parameterEncoderFailed(.encoderFailed)`.
    public enum Error: Swift.Error {
        /// The top-level value is not a keyed container (a struct or dictionary), so it has no names to write.
        case invalidRootObject(String)
    }

    /// The default encoder: method-dependent destination.
    public static var `default`: URLEncodedFormParameterEncoder { URLEncodedFormParameterEncoder() }

    /// Where the form goes.
    public let destination: Destination

    /// Creates an encoder.
    ///
    /// - Parameter destination: Where the form goes. `.methodDependent` by default.
    public init(destination: Destination = .methodDependent) {
        self.destination = destination
    }

    /// Encodes `parameters` as a form into `request`.
    public func encode<Parameters: Encodable & Sendable>(_ parameters: Parameters?, into request: URLRequest) throws -> URLRequest {
        guard let parameters else { return request }
        var request = request
        guard let url = request.url else {
            throw AFError.parameterEncoderFailed(reason: .missingRequiredComponent(.url))
        }
        guard let rawMethod = request.httpMethod else {
            throw AFError.parameterEncoderFailed(reason: .missingRequiredComponent(.httpMethod(rawValue: "nil")))
        }
        let query = try Self.formString(from: parameters)
        if destination.encodesParametersInURL(for: HTTPMethod(rawValue: rawMethod)) {
            guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
                throw AFError.parameterEncoderFailed(reason: .missingRequiredComponent(.url))
            }
            if !query.isEmpty {
                components.percentEncodedQuery = [components.percentEncodedQuery, query].compactMap { $0 }.joined(separator: "&")
            }
            guard let newURL = components.url else {
                throw AFError.parameterEncoderFailed(reason: .missingRequiredComponent(.url))
            }
            request.url = newURL
        } else {
            if request.value(forHTTPHeaderField: "Content-Type") == nil {
                request.setValue("application/x-www-form-urlencoded; charset=utf-8", forHTTPHeaderField: "Content-Type")
            }
            request.httpBody = Data(query.utf8)
        }
        return request
    }

    /// The value as a form string, through its keyed `Encodable` representation.
    static func formString<Value: Encodable>(from value: Value) throws -> String {
        let object: Any
        do {
            let encoder = JSONEncoder()
            encoder.dataEncodingStrategy = .base64
            let data = try encoder.encode(value)
            object = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        } catch {
            throw AFError.parameterEncoderFailed(reason: .encoderFailed(error: error))
        }
        guard let dictionary = object as? [String: Any] else {
            let error = Error.invalidRootObject(String(describing: object))
            throw AFError.parameterEncoderFailed(reason: .encoderFailed(error: error))
        }
        let encoding = URLEncoding.default
        var components: [(String, String)] = []
        for key in dictionary.keys.sorted() {
            guard let value = dictionary[key], !(value is NSNull) else { continue }
            components += encoding.queryComponents(fromKey: key, value: value)
        }
        return components.map { "\($0)=\($1)" }.joined(separator: "&")
    }
}
