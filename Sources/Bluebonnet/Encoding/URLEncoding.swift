import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Creates a url-encoded query string to be set as or appended to any existing URL query string or set as the HTTP
/// body of the URL request. Keys are sorted; nested dictionaries become `a[b]=c`.
public struct URLEncoding: ParameterEncoding {
    /// Where the encoded string goes.
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

    /// How array keys are written: `.brackets`, `.noBrackets`, `.indexInBrackets` or `.custom`. The same type as
    /// `URLEncodedFormEncoder`'s, so both encodings name array keys by one rule.
    public typealias ArrayEncoding = URLEncodedFormEncoder.ArrayEncoding

    /// How booleans are written: `.numeric` or `.literal`, as `URLEncodedFormEncoder` writes them.
    public typealias BoolEncoding = URLEncodedFormEncoder.BoolEncoding

    /// Method-dependent destination, brackets, numeric booleans.
    public static var `default`: URLEncoding { URLEncoding() }
    /// Always the query string.
    public static var queryString: URLEncoding { URLEncoding(destination: .queryString) }
    /// Always the body.
    public static var httpBody: URLEncoding { URLEncoding(destination: .httpBody) }

    /// Where the encoded string goes.
    public let destination: Destination
    /// How array keys are written.
    public let arrayEncoding: ArrayEncoding
    /// How booleans are written.
    public let boolEncoding: BoolEncoding

    /// Creates an encoding.
    ///
    /// - Parameters:
    ///   - destination:   Where the string goes. `.methodDependent` by default.
    ///   - arrayEncoding: How array keys are written. `.brackets` by default.
    ///   - boolEncoding:  How booleans are written. `.numeric` by default.
    public init(
        destination: Destination = .methodDependent, arrayEncoding: ArrayEncoding = .brackets,
        boolEncoding: BoolEncoding = .numeric
    ) {
        self.destination = destination
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
    }

    /// Encodes `parameters` into the query or the body of `urlRequest`.
    public func encode(_ urlRequest: any URLRequestConvertible, with parameters: Parameters?) throws -> URLRequest {
        var urlRequest = try urlRequest.asURLRequest()
        guard let parameters else { return urlRequest }
        if let method = urlRequest.method, destination.encodesParametersInURL(for: method) {
            guard let url = urlRequest.url else {
                throw AFError.parameterEncodingFailed(reason: .missingURL)
            }
            if var components = URLComponents(url: url, resolvingAgainstBaseURL: false), !parameters.isEmpty {
                let encoded = components.percentEncodedQuery.map { $0 + "&" } ?? ""
                components.percentEncodedQuery = encoded + query(parameters)
                urlRequest.url = components.url
            }
        } else {
            if urlRequest.value(forHTTPHeaderField: "Content-Type") == nil {
                urlRequest.setValue(
                    "application/x-www-form-urlencoded; charset=utf-8", forHTTPHeaderField: "Content-Type")
            }
            urlRequest.httpBody = Data(query(parameters).utf8)
        }
        return urlRequest
    }

    /// Creates percent-escaped, URL encoded query string components from the given key-value pair recursively.
    ///
    /// - Parameters:
    ///   - key:   Key of the query component.
    ///   - value: Value of the query component.
    /// - Returns: The percent-escaped, URL encoded query string components.
    public func queryComponents(fromKey key: String, value: Any) -> [(String, String)] {
        var components: [(String, String)] = []
        switch value {
        case let dictionary as [String: Any]:
            for nestedKey in dictionary.keys.sorted() {
                components += queryComponents(fromKey: "\(key)[\(nestedKey)]", value: dictionary[nestedKey]!)
            }
        case let array as [Any]:
            for (index, element) in array.enumerated() {
                components += queryComponents(fromKey: arrayEncoding.encode(key, atIndex: index), value: element)
            }
        case let bool as Bool where type(of: value) == Bool.self:
            components.append((escape(key), escape(boolEncoding.encode(bool))))
        case let number as NSNumber:
            if number.isBoolean {
                components.append((escape(key), escape(boolEncoding.encode(number.boolValue))))
            } else {
                components.append((escape(key), escape(number.queryDescription)))
            }
        case is NSNull:
            components.append((escape(key), ""))
        default:
            components.append((escape(key), escape("\(value)")))
        }
        return components
    }

    /// Creates a percent-escaped string following RFC 3986 for a query string key or value.
    ///
    /// - Parameter string: `String` to be percent-escaped.
    /// - Returns:          The percent-escaped `String`.
    public func escape(_ string: String) -> String {
        string.addingPercentEncoding(withAllowedCharacters: .afURLQueryAllowed) ?? string
    }

    func query(_ parameters: [String: Any]) -> String {
        var components: [(String, String)] = []
        for key in parameters.keys.sorted(by: <) {
            components += queryComponents(fromKey: key, value: parameters[key]!)
        }
        return components.map { "\($0)=\($1)" }.joined(separator: "&")
    }
}

extension NSNumber {
    /// The number as Alamofire writes it: NSNumber's description on Darwin (`%0.16g`), where a whole double has no
    /// fractional part; corelibs' description writes `1.0`.
    var queryDescription: String {
        let code = UInt8(bitPattern: objCType.pointee)
        guard code == UInt8(ascii: "d") || code == UInt8(ascii: "f") else { return "\(self)" }
        let value = doubleValue
        // Below 1e16, %0.16g writes every whole double as an integer; above, in exponent form, as Swift does.
        if value == value.rounded(), abs(value) < 1e16 {
            return value == 0 && value.sign == .minus ? "-0" : String(Int64(value))
        }
        return code == UInt8(ascii: "f") ? "\(floatValue)" : "\(value)"
    }

    /// Whether the number was made from a Bool: Foundation makes those as its private CFBoolean subclass (on Linux
    /// too), while a plain `NSNumber(value: 1)` is an integer.
    var isBoolean: Bool {
        String(describing: type(of: self)).hasSuffix("CFBoolean")
    }
}

extension CharacterSet {
    /// RFC 3986's query characters minus the general delimiters (but `?` and `/`, allowed in a query) and the
    /// sub-delimiters, so every `&`, `=` and `+` inside a key or value is escaped.
    public static let afURLQueryAllowed: CharacterSet = {
        let generalDelimitersToEncode = ":#[]@"
        let subDelimitersToEncode = "!$&'()*+,;="
        let encodableDelimiters = CharacterSet(charactersIn: "\(generalDelimitersToEncode)\(subDelimitersToEncode)")
        return CharacterSet.urlQueryAllowed.subtracting(encodableDelimiters)
    }()
}
