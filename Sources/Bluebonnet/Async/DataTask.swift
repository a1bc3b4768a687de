import Foundation

/// A value that awaits the serialized response of a `DataRequest`.
public struct DataTask<Value>: @unchecked Sendable {
    // @unchecked: `Value` need not be `Sendable` (JSON's `Any`); the task holds only the request and a `ResponseBox`,
    // whose value is made once and never mutated.
    /// The `DataResponse`, once the request finished and was serialized.
    public var response: DataResponse<Value, AFError> {
        get async { await box.value(cancelling: shouldAutomaticallyCancel ? request : nil) }
    }

    /// The `Result` of the response.
    public var result: Result<Value, AFError> {
        get async { await response.result }
    }

    /// The serialized value.
    ///
    /// - Throws: The `AFError` the request failed with.
    public var value: Value {
        get async throws { try await result.get() }
    }

    private let request: DataRequest
    private let box: ResponseBox<DataResponse<Value, AFError>>
    private let shouldAutomaticallyCancel: Bool

    init(request: DataRequest, box: ResponseBox<DataResponse<Value, AFError>>, shouldAutomaticallyCancel: Bool) {
        self.request = request
        self.box = box
        self.shouldAutomaticallyCancel = shouldAutomaticallyCancel
    }

    /// Cancels the underlying `DataRequest`.
    public func cancel() { request.cancel() }
    /// Resumes the underlying `DataRequest`.
    public func resume() { request.resume() }
    /// Suspends the underlying `DataRequest`.
    public func suspend() { request.suspend() }
}

/// Holds a response that is made at most once, by the first task that awaits it, from a thunk the request hands
/// over when the handler's turn comes. Serializing in the awaiting task spares a hop to the serialization queue and
/// runs the parsing where the caller runs anyway, as with raw AsyncHTTPClient. The value is never mutated once made,
/// which is what makes sharing it sound when its type is not `Sendable` (JSON's `Any`, an `XMLDocument`).
///
/// Who waits, who makes and when it is made is kept by a `ResponseLatch`, which is not generic: the code that awaits
/// a response runs unspecialized for the caller's `Value`, and state of a generic type (`State<Value>`) looked its
/// metadata up in the runtime's cache on every access, eight times a request.
final class ResponseBox<Value>: @unchecked Sendable {
    // @unchecked: `make` is written once before `latch` opens and read only by the one task the latch lets make the
    // value; `made` is written once by that task before the latch publishes it and read only after. The latch's lock
    // orders those writes before the reads.
    private let latch = ResponseLatch()
    @exclusivity(unchecked) private var make: (@Sendable () -> Value)?
    @exclusivity(unchecked) private var made: ValueCell<Value>?

    /// Hands over the way to make the value; every waiting task resumes.
    func fulfill(_ make: @escaping @Sendable () -> Value) {
        guard latch.mayOpen() else { return }
        self.make = make
        latch.open()
    }

    var value: Value {
        get async {
            if await latch.claim(), let make {
                let value = ValueCell(make())
                made = value
                self.make = nil
                latch.publish()
                return value.value
            }
            // `claim()` returns `false` only once the value is published.
            return made!.value
        }
    }

    /// The value; cancelling the awaiting task cancels `request`, when one is given (a task made with
    /// `automaticallyCancelling: true`).
    func value(cancelling request: Request?) async -> Value {
        guard let request else { return await value }
        return await withTaskCancellationHandler {
            await value
        } onCancel: {
            request.cancel()
        }
    }
}

/// A value in a box of its own, so that a field holding one is a reference whatever the value's type.
private final class ValueCell<Value> {
    let value: Value

    init(_ value: Value) {
        self.value = value
    }
}

/// The states of a `ResponseBox`, and the tasks waiting on them.
final class ResponseLatch: Sendable {
    private enum State {
        /// No way to make the value yet.
        case waiting([CheckedContinuation<Void, Never>])
        /// `fulfill` is storing the way to make it.
        case opening([CheckedContinuation<Void, Never>])
        /// The way to make it is there; nobody claimed it.
        case ready
        /// One task is making the value; the others wait for it rather than making it again.
        case making([CheckedContinuation<Void, Never>])
        /// The value is there.
        case made
    }

    private let state = Protected(State.waiting([]))

    /// Whether the caller is the first to fulfill: it then stores the thunk and calls `open()`.
    func mayOpen() -> Bool {
        state.write { state in
            guard case let .waiting(waiters) = state else { return false }
            state = .opening(waiters)
            return true
        }
    }

    /// The thunk is stored: waiting tasks resume, and the first to claim makes the value.
    func open() {
        let waiters = state.write { state -> [CheckedContinuation<Void, Never>] in
            guard case let .opening(waiters) = state else { return [] }
            state = .ready
            return waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Waits until the value can be made or is made: `true` when the caller is to make it, `false` once it is made.
    func claim() async -> Bool {
        while true {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.write { state -> Bool in
                    switch state {
                    case var .waiting(waiters):
                        waiters.append(continuation)
                        state = .waiting(waiters)
                        return false
                    case var .opening(waiters):
                        waiters.append(continuation)
                        state = .opening(waiters)
                        return false
                    case var .making(waiters):
                        waiters.append(continuation)
                        state = .making(waiters)
                        return false
                    case .ready, .made:
                        return true
                    }
                }
                if resumeNow { continuation.resume() }
            }
            let claimed = state.write { state -> Bool? in
                switch state {
                case .ready:
                    state = .making([])
                    return true
                case .made:
                    return false
                case .waiting, .opening, .making:
                    // Another task claimed the making between the wake-up and now: wait for its value.
                    return nil
                }
            }
            if let claimed { return claimed }
        }
    }

    /// The value is made: the tasks waiting for it resume.
    func publish() {
        let waiters = state.write { state -> [CheckedContinuation<Void, Never>] in
            defer { state = .made }
            if case let .making(waiters) = state { return waiters }
            return []
        }
        for waiter in waiters { waiter.resume() }
    }
}

extension DataRequest {
    /// Creates a `DataTask` to `await` a `Data` value.
    ///
    /// - Parameters:
    ///   - shouldAutomaticallyCancel: Whether cancelling the awaiting Swift task cancels the request. `true` by
    ///                                default: a server that stops waiting should stop the work too.
    ///   - dataPreprocessor:          `DataPreprocessor` which processes the received `Data` before completion.
    ///   - emptyResponseCodes:        HTTP response codes for which empty responses are allowed. `[204, 205]` by default.
    ///   - emptyRequestMethods:       `HTTPMethod`s for which empty responses are always valid. `[.head]` by default.
    /// - Returns: The `DataTask`.
    public func serializingData(
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
        dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods
    ) -> DataTask<Data> {
        serializingResponse(
            using: DataResponseSerializer(
                dataPreprocessor: dataPreprocessor,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// Creates a `DataTask` to `await` serialization of a `String` value.
    ///
    /// - Parameters:
    ///   - shouldAutomaticallyCancel: Whether cancelling the awaiting Swift task cancels the request. `true` by default.
    ///   - dataPreprocessor:          `DataPreprocessor` which processes the received `Data` before completion.
    ///   - encoding:                  `String.Encoding` to use during serialization. `nil` by default, in which case
    ///                                the encoding will be determined from the server response, falling back to the
    ///                                default HTTP character set, `ISO-8859-1`.
    ///   - emptyResponseCodes:        HTTP response codes for which empty responses are allowed. `[204, 205]` by default.
    ///   - emptyRequestMethods:       `HTTPMethod`s for which empty responses are always valid. `[.head]` by default.
    /// - Returns: The `DataTask`.
    public func serializingString(
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
        dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
        encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods
    ) -> DataTask<String> {
        serializingResponse(
            using: StringResponseSerializer(
                dataPreprocessor: dataPreprocessor,
                encoding: encoding,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// Creates a `DataTask` to `await` serialization using the provided `DataResponseSerializerProtocol` instance.
    ///
    /// - Parameters:
    ///   - serializer:                Response serializer used to serialize the response.
    ///   - shouldAutomaticallyCancel: Whether cancelling the awaiting Swift task cancels the request. `true` by default.
    /// - Returns: The `DataTask`.
    public func serializingResponse<Serializer: DataResponseSerializerProtocol>(
        using serializer: Serializer,
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true
    ) -> DataTask<Serializer.SerializedObject> {
        dataTask(serializer: serializer, automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// Creates a `DataTask` to `await` serialization using the provided `ResponseSerializer`: the form that lets its
    /// static members (`.data`, `.string`, `.decodable(of:)`) be named, as in Alamofire.
    ///
    /// - Parameters:
    ///   - serializer:                Response serializer used to serialize the response.
    ///   - shouldAutomaticallyCancel: Whether cancelling the awaiting Swift task cancels the request. `true` by default.
    /// - Returns: The `DataTask`.
    public func serializingResponse<Serializer: ResponseSerializer>(
        using serializer: Serializer,
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true
    ) -> DataTask<Serializer.SerializedObject> {
        dataTask(serializer: serializer, automaticallyCancelling: shouldAutomaticallyCancel)
    }

    private func dataTask<Serializer: DataResponseSerializerProtocol>(
        serializer: Serializer, automaticallyCancelling shouldAutomaticallyCancel: Bool
    ) -> DataTask<Serializer.SerializedObject> {
        let box = ResponseBox<DataResponse<Serializer.SerializedObject, AFError>>()
        guard !monitoredEvents.contains(.parsing), !mutableState.read({ $0.machine.policy.retries }) else {
            // A monitor sees `didParseResponse` in the handler's turn, before the request finishes, and a retrier is
            // shown a failure to serialize, as in Alamofire; so the serializer runs then, on `serializationQueue`,
            // whether or not anyone awaits the value.
            appendSerializingHandler(
                inlineSafe: false, serialize: { [self] in serializedResponse(using: serializer, snapshot: snapshot()) },
                failure: { $0.error }, replacing: { response, error in response.mapError { _ in error } },
                deliver: { response in
                    let response = UncheckedBox(response)
                    box.fulfill { response.value }
                })
            return DataTask(request: self, box: box, shouldAutomaticallyCancel: shouldAutomaticallyCancel)
        }
        appendResponseSerializer(inlineSafe: true) { [self] in
            let snapshot = snapshot()
            box.fulfill { self.serializedResponse(using: serializer, snapshot: snapshot) }
        }
        return DataTask(request: self, box: box, shouldAutomaticallyCancel: shouldAutomaticallyCancel)
    }

    /// Creates a `DataTask` to `await` the unserialized response.
    ///
    /// - Parameter shouldAutomaticallyCancel: Whether cancelling the awaiting Swift task cancels the request.
    /// - Returns: The `DataTask`.
    public func serializingResponse(automaticallyCancelling shouldAutomaticallyCancel: Bool = true) -> DataTask<Data?> {
        let box = ResponseBox<DataResponse<Data?, AFError>>()
        let monitored = monitoredEvents.contains(.parsing)
        appendResponseSerializer(inlineSafe: true) { [self] in
            let snapshot = snapshot()
            // Cheap, so made at once for a monitor, whose `didParseResponse` then comes in the handler's turn.
            guard !monitored else {
                let response = unserializedResponse(snapshot)
                box.fulfill { response }
                return
            }
            box.fulfill { self.unserializedResponse(snapshot) }
        }
        return DataTask(request: self, box: box, shouldAutomaticallyCancel: shouldAutomaticallyCancel)
    }
}
