import Foundation

/// A request body a `DataStreamRequest` streams up while its response streams down: each send reads a fresh
/// `InputStream`, off the event loops, with `Content-Length` when the length is known and chunked otherwise.
@_spi(OpenAPITransport)
public struct StreamUpload: Sendable {
    /// Makes the stream one send reads, from its first byte.
    let makeStream: @Sendable () -> InputStream
    /// The body's size; `nil` sends it chunked.
    let length: Int64?
    /// Whether `makeStream` may be called again for a redirect, a challenge or a retry; a body that can be read only
    /// once is never resent (the send that needs it again fails with `URLError(.requestBodyStreamExhausted)`).
    let isReplayable: Bool

    /// Creates the body.
    ///
    /// - Parameters:
    ///   - length:       The body's size in bytes, or `nil` when unknown (sent chunked).
    ///   - isReplayable: Whether `makeStream` yields the same bytes again, so the body may be resent.
    ///   - makeStream:   Makes a stream positioned at the body's first byte; it is read on a blocking thread.
    public init(length: Int64?, isReplayable: Bool, makeStream: @escaping @Sendable () -> InputStream) {
        self.makeStream = makeStream
        self.length = length
        self.isReplayable = isReplayable
    }
}

extension Session {
    /// Creates a `DataStreamRequest` that streams `upload` as its body while handing its response body to stream
    /// handlers as it arrives: both directions with back-pressure (`BluebonnetOpenAPI`'s transport sends every
    /// operation through it).
    ///
    /// - Parameters:
    ///   - convertible: The `URLRequestConvertible`; its `httpBody` is ignored.
    ///   - upload:      The body to stream.
    ///   - interceptor: `RequestInterceptor` for this request, used after the session's. `nil` by default.
    /// - Returns: The created `DataStreamRequest`.
    @_spi(OpenAPITransport)
    public func streamRequest(
        _ convertible: any URLRequestConvertible, uploading upload: StreamUpload,
        interceptor: (any RequestInterceptor)? = nil
    ) -> DataStreamRequest {
        let request = DataStreamRequest(
            convertible: convertible, upload: upload, automaticallyCancelOnStreamError: false,
            underlyingQueue: rootQueue, serializationQueue: serializationQueue, eventMonitor: eventMonitor,
            interceptor: interceptor, shouldAutomaticallyResume: nil, context: context, delegate: self)
        perform(request)
        return request
    }
}
