import Foundation

extension DataStreamRequest {
    /// Adds a handler that receives each chunk of the body as it arrives, then the completion.
    ///
    /// - Parameters:
    ///   - queue:  `DispatchQueue` on which to perform `StreamHandler` closure. `.main` by default.
    ///   - stream: `StreamHandler` closure called as `Data` is received. May be called multiple times.
    /// - Returns: The `DataStreamRequest`.
    @discardableResult
    public func responseStream(on queue: DispatchQueue = .main, stream: @escaping Handler<Data, Never>) -> Self {
        addHandler(on: queue, framing: .passthrough, sink: Self.sink(calling: stream))
    }

    /// Adds a handler that receives each chunk serialized by `serializer`, then the completion.
    ///
    /// - Parameters:
    ///   - serializer: `DataStreamSerializer` used to process incoming `Data` before it's passed to the handler.
    ///   - queue:      `DispatchQueue` on which to perform `StreamHandler` closure. `.main` by default.
    ///   - stream:     `StreamHandler` closure called as `Data` is received. May be called multiple times.
    /// - Returns: The `DataStreamRequest`.
    @discardableResult
    public func responseStream<Serializer: DataStreamSerializer>(
        using serializer: Serializer,
        on queue: DispatchQueue = .main,
        stream: @escaping Handler<Serializer.SerializedObject, AFError>
    ) -> Self {
        addHandler(on: queue, framing: .serialized(by: serializer), sink: Self.sink(calling: stream))
    }

    /// Adds a handler that receives the body as UTF-8 text as it arrives, a character split across chunks kept
    /// whole, then the completion.
    ///
    /// - Parameters:
    ///   - queue:  `DispatchQueue` on which to perform `StreamHandler` closure. `.main` by default.
    ///   - stream: `StreamHandler` closure called as `String`s are received. May be called multiple times.
    /// - Returns: The `DataStreamRequest`.
    @discardableResult
    public func responseStreamString(on queue: DispatchQueue = .main, stream: @escaping Handler<String, Never>) -> Self
    {
        addHandler(on: queue, framing: .text(), sink: Self.sink(calling: stream))
    }

    /// Adds a handler that receives `Decodable` values as they arrive: one per line of a JSON Lines body (a value
    /// split across chunks is joined), or one per chunk that holds a whole value, then the completion.
    ///
    /// - Parameters:
    ///   - type:         `Decodable` type to parse incoming `Data` into.
    ///   - queue:        `DispatchQueue` on which to perform `StreamHandler` closure. `.main` by default.
    ///   - decoder:      `DataDecoder` used to decode the incoming `Data`. `JSONDecoder()` by default.
    ///   - preprocessor: `DataPreprocessor` used to process the incoming `Data` before it's passed to the `decoder`.
    ///   - stream:       `StreamHandler` closure called as values are received. May be called multiple times.
    /// - Returns: The `DataStreamRequest`.
    @discardableResult
    public func responseStreamDecodable<T: Decodable>(
        of type: T.Type = T.self,
        on queue: DispatchQueue = .main,
        using decoder: any DataDecoder = JSONDecoder(),
        preprocessor: any DataPreprocessor = PassthroughPreprocessor(),
        stream: @escaping Handler<T, AFError>
    ) -> Self {
        addHandler(
            on: queue,
            framing: .decodable(DecodableStreamSerializer<T>(decoder: decoder, dataPreprocessor: preprocessor)),
            sink: Self.sink(calling: stream))
    }

    /// Adds a handler that receives the body's Server-Sent Events as they are dispatched, then the completion. A
    /// line or event past its bound (1 MiB, 16 MiB) is a failure, and with `automaticallyCancelOnStreamError` ends
    /// the request.
    ///
    /// - Parameters:
    ///   - queue:  `DispatchQueue` on which to perform `StreamHandler` closure. `.main` by default.
    ///   - stream: `StreamHandler` closure called as events are dispatched. May be called multiple times.
    /// - Returns: The `DataStreamRequest`.
    @discardableResult
    public func responseStreamServerSentEvents(
        on queue: DispatchQueue = .main,
        stream: @escaping Handler<ServerSentEvent, AFError>
    ) -> Self {
        addHandler(on: queue, framing: .serverSentEvents(), sink: Self.sink(calling: stream))
    }

    /// Where a handler's events go: the event, and `taken`, to call once it has been dealt with (which is what lets
    /// the connection be read again); a handler that throws has its error returned.
    typealias EventSink<Success, Failure: Error> =
        @Sendable (_ stream: Stream<Success, Failure>, _ taken: @escaping @Sendable () -> Void) -> (any Error)?

    /// A sink that calls `handler` and counts the event taken once it returns.
    static func sink<Success, Failure: Error>(calling handler: @escaping Handler<Success, Failure>) -> EventSink<
        Success, Failure
    > {
        { stream, taken in
            defer { taken() }
            do { try handler(stream) } catch { return error }
            return nil
        }
    }

    /// Registers a handler: each chunk becomes zero or more results as `framing` cuts them, handed over in order on
    /// `queue`; what `framing` holds at the end comes before the completion.
    @discardableResult
    func addHandler<Success, Failure: Error>(
        on queue: DispatchQueue, framing: StreamFraming<Success, Failure>,
        sink: @escaping EventSink<Success, Failure>
    ) -> Self {
        let token = CancellationToken(self)
        let report: @Sendable ([Result<Success, Failure>], @escaping @Sendable () -> Void) -> Void = {
            [weak self] results, done in
            guard !results.isEmpty else { return done() }
            // The chunk counts as handled once every value made of it was taken.
            let remaining = Protected(results.count)
            for result in results {
                if framing.parses, let self, let monitor = self.eventMonitor {
                    monitor.request(
                        self,
                        didParseStream: result.mapError {
                            $0.asAFError(
                                or: .responseSerializationFailed(reason: .customSerializationFailed(error: $0)))
                        })
                }
                let thrown = sink(Stream(event: .stream(result), token: token)) {
                    if remaining.write({
                        $0 -= 1; return $0 == 0
                    }) {
                        done()
                    }
                }
                if let thrown {
                    self?.handlerDidThrow(
                        thrown.asAFError(
                            or: .responseSerializationFailed(reason: .customSerializationFailed(error: thrown))))
                } else if result.failure != nil {
                    self?.serializationDidFail()
                }
            }
        }
        addConsumer(
            Consumer(
                queue: queue,
                deliver: { chunk, done in
                    report(framing.transform(chunk), done)
                },
                finish: { [self] in
                    queue.async { [self] in
                        report(framing.flush()) {}
                        _ = sink(Stream(event: .complete(completion()), token: token)) {}
                    }
                }))
        return self
    }
}

/// How one handler cuts a stream's chunks into values: stateful where a value may straddle chunks.
struct StreamFraming<Success, Failure: Error>: Sendable {
    /// The values a chunk completes.
    let transform: @Sendable (Data) -> [Result<Success, Failure>]
    /// The values left at the end.
    let flush: @Sendable () -> [Result<Success, Failure>]
    /// Whether the values are parsed (a serializer's), which monitors hear of as `didParseStream`.
    var parses = true
}

extension StreamFraming where Success == Data, Failure == Never {
    /// Each chunk as it is.
    static var passthrough: Self { Self(transform: { [.success($0)] }, flush: { [] }, parses: false) }
}

extension StreamFraming where Success == String, Failure == Never {
    /// UTF-8 text, a character split across chunks kept whole.
    static func text() -> Self {
        let decoder = Protected(UTF8ChunkDecoder())
        return Self(
            transform: { chunk in
                let text = decoder.write { $0.decode(chunk) }
                return text.isEmpty ? [] : [.success(text)]
            },
            flush: {
                decoder.write { $0.flush() }.map { [.success($0)] } ?? []
            }, parses: false)
    }
}

extension StreamFraming where Failure == AFError {
    /// Each chunk through `serializer`, as Alamofire does.
    static func serialized<Serializer: DataStreamSerializer>(by serializer: Serializer) -> Self
    where Serializer.SerializedObject == Success {
        Self(
            transform: { chunk in
                [
                    Result { try serializer.serialize(chunk) }.mapError {
                        $0.asAFError(or: .responseSerializationFailed(reason: .customSerializationFailed(error: $0)))
                    }
                ]
            }, flush: { [] })
    }
}

extension StreamFraming where Failure == AFError, Success: Decodable {
    /// JSON values, one per line or per whole chunk, decoded by `serializer`.
    static func decodable(_ serializer: DecodableStreamSerializer<Success>) -> Self {
        let stream = JSONValueStream(serializer: serializer)
        return Self(transform: stream.values(in:), flush: stream.flush)
    }
}

extension StreamFraming where Success == DataStreamRequest.ServerSentEvent, Failure == AFError {
    /// `text/event-stream` events, parsed as the WHATWG specification says; a line or event past its bound fails.
    static func serverSentEvents() -> Self {
        let parser = Protected(ServerSentEventParser())
        return Self(
            transform: { chunk in
                do {
                    return try parser.write { try $0.parse(chunk) }.map { .success($0) }
                } catch {
                    return [
                        .failure(
                            error.asAFError(
                                or: .responseSerializationFailed(reason: .customSerializationFailed(error: error))))
                    ]
                }
            }, flush: { [] })
    }
}

extension Result {
    /// The error, if a failure.
    var failure: Failure? {
        guard case let .failure(error) = self else { return nil }
        return error
    }
}

/// One handler's decoding of a JSON value stream: frames as `JSONValueFramer` cuts them, each decoded.
final class JSONValueStream<T: Decodable>: Sendable {
    private let serializer: DecodableStreamSerializer<T>
    private let framer = Protected(JSONValueFramer())

    init(serializer: DecodableStreamSerializer<T>) {
        self.serializer = serializer
    }

    /// The values `chunk` completes.
    @Sendable func values(in chunk: Data) -> [Result<T, AFError>] {
        do {
            let frames = try framer.write { framer in
                try framer.frames(chunk) { candidate in
                    (try? JSONSerialization.jsonObject(with: candidate, options: .fragmentsAllowed)) != nil
                }
            }
            return frames.map(decode)
        } catch {
            return [
                .failure(
                    error.asAFError(or: .responseSerializationFailed(reason: .customSerializationFailed(error: error))))
            ]
        }
    }

    /// The value left at the end, if any.
    @Sendable func flush() -> [Result<T, AFError>] {
        framer.write { $0.flush() }.map { [decode($0)] } ?? []
    }

    private func decode(_ frame: Data) -> Result<T, AFError> {
        Result { try serializer.serialize(frame) }.mapError {
            $0.asAFError(or: .responseSerializationFailed(reason: .customSerializationFailed(error: $0)))
        }
    }
}
