import Tracing

/// The operation a request performs, as an API client names it (an OpenAPI document's `operationId`): a request made
/// while `ServiceContext.current` carries one has its span named by it, as swift-openapi's tracing middleware names
/// its spans, and carries it as the `openapi.operation_id` attribute and metric dimension.
@_spi(OpenAPITransport)
public enum RequestOperationKey: ServiceContextKey {
    /// The operation's identifier.
    public typealias Value = String

    /// The key's name in a context's description.
    public static var nameOverride: String? { "openapi.operation_id" }
}

extension ServiceContext {
    /// The operation of the requests made under this context, or `nil`.
    var requestOperation: String? { self[RequestOperationKey.self] }
}
