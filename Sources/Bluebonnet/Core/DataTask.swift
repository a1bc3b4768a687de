import Foundation

/// A value that awaits the serialized response of a `DataRequest`.
public struct DataTask<Value>: @unchecked Sendable {
    /// The `DataResponse`, once the request finished and was serialized.
    public var response: DataResponse<Value, AFError> {
        get async {
            guard shouldAutomaticallyCancel else { return await box.value }
            let request = self.request
            return await withTaskCancellationHandler {
                await box.value
            } onCancel: {
                request.cancel()
            }
        }
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

/// Holds a value that arrives once and hands it to every awaiting task, without a task of its own. The value is
/// produced once on the serialization queue and never mutated afterwards, which is what makes sharing it sound even
/// when its type is not `Sendable` (JSON's `Any`, an `XMLDocument`).
final class ResponseBox<Value>: @unchecked Sendable {
    private struct State {
        var value: UncheckedBox<Value>?
        var waiters: [CheckedContinuation<UncheckedBox<Value>, Never>] = []
    }

    private let state = Protected(State())

    func fulfill(_ value: Value) {
        let boxed = UncheckedBox(value)
        let waiters = state.write { state -> [CheckedContinuation<UncheckedBox<Value>, Never>] in
            state.value = boxed
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: boxed) }
    }

    var value: Value {
        get async {
            await withCheckedContinuation { continuation in
                let ready = state.write { state -> UncheckedBox<Value>? in
                    if let value = state.value { return value }
                    state.waiters.append(continuation)
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }.value
        }
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
        serializingResponse(using: DataResponseSerializer(dataPreprocessor: dataPreprocessor,
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
        serializingResponse(using: StringResponseSerializer(dataPreprocessor: dataPreprocessor,
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
        let box = ResponseBox<DataResponse<Serializer.SerializedObject, AFError>>()
        // The value is handed over on the serialization queue itself: no hop to another queue on the async path.
        appendResponseSerializer { [self] in
            box.fulfill(serializedResponse(using: serializer))
        }
        return DataTask(request: self, box: box, shouldAutomaticallyCancel: shouldAutomaticallyCancel)
    }

    /// Creates a `DataTask` to `await` the unserialized response.
    ///
    /// - Parameter shouldAutomaticallyCancel: Whether cancelling the awaiting Swift task cancels the request.
    /// - Returns: The `DataTask`.
    public func serializingResponse(automaticallyCancelling shouldAutomaticallyCancel: Bool = true) -> DataTask<Data?> {
        let box = ResponseBox<DataResponse<Data?, AFError>>()
        appendResponseSerializer { [self] in
            box.fulfill(unserializedResponse())
        }
        return DataTask(request: self, box: box, shouldAutomaticallyCancel: shouldAutomaticallyCancel)
    }
}
