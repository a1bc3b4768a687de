import Foundation

extension DataStreamRequest {
    /// Hands the body to `receive` where each chunk arrives — no queue between the engine and the receiver — and the
    /// request's end to `end` once it finished, after every chunk.
    ///
    /// For a transport's own buffer, not user code: `receive` may run on an event loop, so it only stores the chunk
    /// and wakes a reader. A chunk counts against the stream's back-pressure window until its `taken` is called, so a
    /// receiver that calls it as its reader takes the chunk makes the connection be read at the reader's pace.
    ///
    /// - Parameters:
    ///   - receive: Stores a chunk; `taken` is called once its reader took it.
    ///   - end:     How the request ended, once, after the last chunk.
    /// - Returns: The instance.
    @_spi(OpenAPITransport) @discardableResult
    public func receiveBody(
        _ receive: @escaping @Sendable (_ chunk: Data, _ taken: @escaping @Sendable () -> Void) -> Void,
        end: @escaping @Sendable (Completion) -> Void
    ) -> Self {
        addConsumer(Consumer(queue: nil, deliver: receive, finish: { [self] in end(completion()) }))
        return self
    }
}
