extension Request {
    /// The `Session` that made the request, while it lives: for the features and request kinds that use the
    /// session's own pieces (its WebSocket engine, its downloads' file manager). The lifecycle itself knows the session
    /// only as its `RequestLifecycleDelegate`.
    var session: Session? { delegate as? Session }
}
