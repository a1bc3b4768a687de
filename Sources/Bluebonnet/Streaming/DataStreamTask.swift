import Foundation

/// The `async` face of a `DataStreamRequest`: its body as `AsyncSequence`s of events, with back-pressure.
public struct DataStreamTask: Sendable {
    /// A stream of a `DataStreamRequest`'s events.
    public typealias Stream<Success, Failure: Error> = StreamOf<DataStreamRequest.Stream<Success, Failure>>

    private let request: DataStreamRequest

    init(request: DataStreamRequest) {
        self.request = request
    }

    /// The body's chunks as they arrive.
    ///
    /// - Parameters:
    ///   - shouldAutomaticallyCancel: Whether ending the iteration early (or cancelling its task) cancels the request.
    ///                                `true` by default.
    ///   - bufferingPolicy:           What is kept when the consumer falls behind. `.unbounded` by default: the
    ///                                connection stops being read instead.
    /// - Returns: The `Stream`.
    public func streamingData(
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
        bufferingPolicy: Stream<Data, Never>.BufferingPolicy = .unbounded
    ) -> Stream<Data, Never> {
        stream(
            framing: .passthrough, automaticallyCancelling: shouldAutomaticallyCancel, bufferingPolicy: bufferingPolicy)
    }

    /// The body as UTF-8 text as it arrives, a character split across chunks kept whole.
    ///
    /// - Parameters:
    ///   - shouldAutomaticallyCancel: Whether ending the iteration early cancels the request. `true` by default.
    ///   - bufferingPolicy:           What is kept when the consumer falls behind. `.unbounded` by default.
    /// - Returns: The `Stream`.
    public func streamingStrings(
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
        bufferingPolicy: Stream<String, Never>.BufferingPolicy = .unbounded
    ) -> Stream<String, Never> {
        stream(framing: .text(), automaticallyCancelling: shouldAutomaticallyCancel, bufferingPolicy: bufferingPolicy)
    }

    /// `Decodable` values as they arrive: one per line of a JSON Lines body, however chunks cut the lines, or one per
    /// chunk holding a whole value.
    ///
    /// - Parameters:
    ///   - type:                      The type to decode.
    ///   - shouldAutomaticallyCancel: Whether ending the iteration early cancels the request. `true` by default.
    ///   - bufferingPolicy:           What is kept when the consumer falls behind. `.unbounded` by default.
    /// - Returns: The `Stream`.
    public func streamingDecodables<T: Decodable>(
        _ type: T.Type = T.self, automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
        bufferingPolicy: Stream<T, AFError>.BufferingPolicy = .unbounded
    ) -> Stream<T, AFError> {
        stream(
            framing: .decodable(DecodableStreamSerializer<T>()), automaticallyCancelling: shouldAutomaticallyCancel,
            bufferingPolicy: bufferingPolicy)
    }

    /// The body's Server-Sent Events as they are dispatched (WHATWG `text/event-stream`). For a connection that
    /// reconnects, use `Session.eventSource(_:headers:lastEventID:interceptor:)`.
    ///
    /// - Parameters:
    ///   - shouldAutomaticallyCancel: Whether ending the iteration early cancels the request. `true` by default.
    ///   - bufferingPolicy:           What is kept when the consumer falls behind. `.unbounded` by default.
    /// - Returns: The `Stream`.
    public func streamingServerSentEvents(
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
        bufferingPolicy: Stream<DataStreamRequest.ServerSentEvent, AFError>.BufferingPolicy = .unbounded
    )
        -> Stream<DataStreamRequest.ServerSentEvent, AFError>
    {
        stream(
            framing: .serverSentEvents(), automaticallyCancelling: shouldAutomaticallyCancel,
            bufferingPolicy: bufferingPolicy)
    }

    /// Each chunk serialized by `serializer`.
    ///
    /// - Parameters:
    ///   - serializer:                The `DataStreamSerializer`.
    ///   - shouldAutomaticallyCancel: Whether ending the iteration early cancels the request. `true` by default.
    ///   - bufferingPolicy:           What is kept when the consumer falls behind. `.unbounded` by default.
    /// - Returns: The `Stream`.
    public func streamingResponses<Serializer: DataStreamSerializer>(
        serializedUsing serializer: Serializer,
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
        bufferingPolicy: Stream<Serializer.SerializedObject, AFError>.BufferingPolicy = .unbounded
    ) -> Stream<Serializer.SerializedObject, AFError> {
        stream(
            framing: .serialized(by: serializer), automaticallyCancelling: shouldAutomaticallyCancel,
            bufferingPolicy: bufferingPolicy)
    }

    private func stream<Success, Failure: Error>(
        framing: StreamFraming<Success, Failure>, automaticallyCancelling: Bool,
        bufferingPolicy: Stream<Success, Failure>.BufferingPolicy
    ) -> Stream<Success, Failure> {
        let request = self.request
        return StreamOf(
            bufferingPolicy: bufferingPolicy,
            onTermination: {
                if automaticallyCancelling { request.cancel() }
            },
            builder: { channel in
                request.addHandler(on: request.underlyingQueue, framing: framing) { stream, taken in
                    let isCompletion = if case .complete = stream.event { true } else { false }
                    channel.yield(stream, taken: taken)
                    if isCompletion { channel.finish() }
                    return nil
                }
            })
    }

    /// Cancels the underlying `DataStreamRequest`.
    public func cancel() { request.cancel() }
    /// Resumes the underlying `DataStreamRequest`.
    public func resume() { request.resume() }
    /// Suspends the underlying `DataStreamRequest`.
    public func suspend() { request.suspend() }
}

extension DataStreamRequest {
    /// Creates a `DataStreamTask`, to read the body with `for await`.
    ///
    /// - Returns: The `DataStreamTask`.
    public func streamTask() -> DataStreamTask {
        DataStreamTask(request: self)
    }
}
