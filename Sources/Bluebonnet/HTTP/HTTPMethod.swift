/// An HTTP method, as an extensible raw-value type so any token a server understands can be sent.
public struct HTTPMethod: RawRepresentable, Equatable, Hashable, Sendable {
    /// `CONNECT` method.
    public static let connect = HTTPMethod(rawValue: "CONNECT")
    /// `DELETE` method.
    public static let delete = HTTPMethod(rawValue: "DELETE")
    /// `GET` method.
    public static let get = HTTPMethod(rawValue: "GET")
    /// `HEAD` method.
    public static let head = HTTPMethod(rawValue: "HEAD")
    /// `OPTIONS` method.
    public static let options = HTTPMethod(rawValue: "OPTIONS")
    /// `PATCH` method.
    public static let patch = HTTPMethod(rawValue: "PATCH")
    /// `POST` method.
    public static let post = HTTPMethod(rawValue: "POST")
    /// `PUT` method.
    public static let put = HTTPMethod(rawValue: "PUT")
    /// `QUERY` method.
    public static let query = HTTPMethod(rawValue: "QUERY")
    /// `TRACE` method.
    public static let trace = HTTPMethod(rawValue: "TRACE")

    /// The method token sent on the request line.
    public let rawValue: String

    /// Creates a method from its token.
    ///
    /// - Parameter rawValue: The method token, e.g. `"PURGE"`.
    public init(rawValue: String) {
        self.rawValue = rawValue
    }
}

extension HTTPMethod {
    /// Whether form parameters go in the query for this method when the destination is method-dependent:
    /// `GET`, `HEAD` and `DELETE` carry no meaningful body.
    var encodesParametersInURLByDefault: Bool {
        self == .get || self == .head || self == .delete
    }
}
