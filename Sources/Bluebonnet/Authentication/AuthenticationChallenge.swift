import Foundation

/// One challenge of a `WWW-Authenticate` (or `Proxy-Authenticate`) field: an auth-scheme with either a token68 or
/// a list of auth-params (RFC 9110 §11.2).
struct AuthenticationChallenge: Equatable, Sendable {
    /// The scheme as the server wrote it; compare with `isScheme(_:)`, since schemes are case-insensitive.
    var scheme: String
    /// The token68 form of the credentials, when the challenge has one instead of parameters.
    var token68: String?
    /// The parameters in order, names lowercased (they are case-insensitive), values unquoted.
    var parameters: [(name: String, value: String)]

    init(scheme: String, token68: String? = nil, parameters: [(name: String, value: String)] = []) {
        self.scheme = scheme
        self.token68 = token68
        self.parameters = parameters
    }

    /// Whether the challenge's scheme is `name`, in any case.
    func isScheme(_ name: String) -> Bool {
        scheme.equalsIgnoringCase(name)
    }

    /// The value of the parameter `name` (case-insensitive).
    subscript(_ name: String) -> String? {
        let lowered = name.lowercased()
        return parameters.first { $0.name == lowered }?.value
    }

    /// The `realm` parameter.
    var realm: String? { self["realm"] }

    static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.scheme == rhs.scheme && lhs.token68 == rhs.token68
            && lhs.parameters.map(\.name) == rhs.parameters.map(\.name)
            && lhs.parameters.map(\.value) == rhs.parameters.map(\.value)
    }
}
