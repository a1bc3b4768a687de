/// A type that can stand for an empty response body, so decoding a 204 yields a value instead of an error.
public protocol EmptyResponse {
    /// The value an empty body decodes to.
    static func emptyValue() -> Self
}

/// The type to decode when a response has no body.
public struct Empty: Codable, Sendable, Equatable {
    /// The shared instance.
    public static let value = Empty()
}

extension Empty: EmptyResponse {
    /// `Empty.value`.
    public static func emptyValue() -> Empty { value }
}
