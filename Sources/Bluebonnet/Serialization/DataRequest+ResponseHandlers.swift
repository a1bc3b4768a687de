import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DataRequest {
    /// Adds a handler that receives the unserialized response (Alamofire 4's `DefaultDataResponse`).
    ///
    /// - Parameters:
    ///   - queue:             The queue on which the completion handler is dispatched. `.main` by default.
    ///   - completionHandler: The code to be executed once the request has finished.
    /// - Returns: The request.
    @discardableResult
    public func response(
        queue: DispatchQueue = .main, completionHandler: @escaping @Sendable (AFDataResponse<Data?>) -> Void
    ) -> Self {
        appendResponseSerializer(inlineSafe: true) { [self] in
            let response = unserializedResponse(snapshot())
            queue.async { completionHandler(response) }
        }
        return self
    }

    /// Adds a handler using the specified response serializer.
    ///
    /// - Parameters:
    ///   - queue:              The queue on which the completion handler is dispatched. `.main` by default.
    ///   - responseSerializer: The response serializer responsible for serializing the request, response, and data.
    ///   - completionHandler:  The code to be executed once the request has finished.
    /// - Returns: The request.
    @discardableResult
    public func response<Serializer: DataResponseSerializerProtocol>(
        queue: DispatchQueue = .main,
        responseSerializer: Serializer,
        completionHandler: @escaping @Sendable (AFDataResponse<Serializer.SerializedObject>) -> Void
    ) -> Self {
        appendResponseHandler(queue: queue, serializer: responseSerializer, completionHandler: completionHandler)
    }

    /// Adds a handler that serializes the response with `responseSerializer`: the form for a `ResponseSerializer`,
    /// so that its static members (`.data`, `.string`, `.decodable(of:)`) can be named, as in Alamofire.
    ///
    /// - Parameters:
    ///   - queue:              The queue on which the completion handler is dispatched. `.main` by default.
    ///   - responseSerializer: The response serializer responsible for serializing the request, response, and data.
    ///   - completionHandler:  The code to be executed once the request has finished.
    /// - Returns: The request.
    @discardableResult
    public func response<Serializer: ResponseSerializer>(
        queue: DispatchQueue = .main,
        responseSerializer: Serializer,
        completionHandler: @escaping @Sendable (AFDataResponse<Serializer.SerializedObject>) -> Void
    ) -> Self {
        appendResponseHandler(queue: queue, serializer: responseSerializer, completionHandler: completionHandler)
    }

    private func appendResponseHandler<Serializer: DataResponseSerializerProtocol>(
        queue: DispatchQueue, serializer responseSerializer: Serializer,
        completionHandler: @escaping @Sendable (AFDataResponse<Serializer.SerializedObject>) -> Void
    ) -> Self {
        appendSerializingHandler(
            inlineSafe: responseSerializer.mayRunInline,
            serialize: { [self] in serializedResponse(using: responseSerializer, snapshot: snapshot()) },
            failure: { $0.error }, replacing: { response, error in response.mapError { _ in error } },
            deliver: { response in
                // The value may not be `Sendable` (JSON's `Any`); it is handed over once and never touched again.
                let response = UncheckedBox(response)
                queue.async { completionHandler(response.value) }
            })
        return self
    }

    /// What a handler sees of the finished request, taken when the handler's turn comes.
    typealias Snapshot = Finished

    /// The request's response and body now; called in the handler's turn, so later handlers cannot change it.
    func snapshot() -> Snapshot { finished() }

    /// The finished request as it is, nothing parsed.
    func unserializedResponse(_ snapshot: Snapshot) -> AFDataResponse<Data?> {
        let end = Timeline.now()
        let result: AFResult<Data?> = snapshot.error.map { .failure($0) } ?? .success(snapshot.data)
        let response = DataResponse(
            request: snapshot.request, source: ResponseSource(snapshot.head), data: snapshot.data,
            taskMetrics: snapshot.metrics, serializationDuration: 0, result: result,
            timeline: snapshot.timeline(serializationCompletedAt: end))
        if monitoredEvents.contains(.parsing) { eventMonitor?.request(self, didParseResponse: response) }
        return response
    }

    /// Runs `serializer` over a snapshot of the finished request.
    func serializedResponse<Serializer: DataResponseSerializerProtocol>(
        using serializer: Serializer,
        snapshot: Snapshot
    ) -> AFDataResponse<Serializer.SerializedObject> {
        let start = Timeline.now()
        let result: AFResult<Serializer.SerializedObject>
        do {
            result = .success(
                try serializer.serialize(
                    request: snapshot.request, source: ResponseSource(snapshot.head), data: snapshot.data,
                    error: snapshot.error))
        } catch {
            result = .failure(
                error.asAFError(or: .responseSerializationFailed(reason: .customSerializationFailed(error: error))))
        }
        let end = Timeline.now()
        let response = DataResponse(
            request: snapshot.request, source: ResponseSource(snapshot.head), data: snapshot.data,
            taskMetrics: snapshot.metrics, serializationDuration: end - start, result: result,
            timeline: snapshot.timeline(serializationCompletedAt: end))
        if monitoredEvents.contains(.parsing) { eventMonitor?.request(self, didParseResponse: response) }
        return response
    }

    /// Adds a handler using a `DataResponseSerializer` to be called once the request has finished.
    ///
    /// - Parameters:
    ///   - queue:               The queue on which the completion handler is called. `.main` by default.
    ///   - dataPreprocessor:    `DataPreprocessor` which processes the received `Data` before calling the handler.
    ///   - emptyResponseCodes:  HTTP status codes for which empty responses are always valid. `[204, 205]` by default.
    ///   - emptyRequestMethods: `HTTPMethod`s for which empty responses are always valid. `[.head]` by default.
    ///   - completionHandler:   A closure to be executed once the request has finished.
    /// - Returns: The request.
    @discardableResult
    public func responseData(
        queue: DispatchQueue = .main,
        dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods,
        completionHandler: @escaping @Sendable (AFDataResponse<Data>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: DataResponseSerializer(
                dataPreprocessor: dataPreprocessor,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            completionHandler: completionHandler)
    }

    /// Adds a handler using a `StringResponseSerializer` to be called once the request has finished.
    ///
    /// - Parameters:
    ///   - queue:               The queue on which the completion handler is dispatched. `.main` by default.
    ///   - dataPreprocessor:    `DataPreprocessor` which processes the received `Data` before calling the handler.
    ///   - encoding:            The string encoding. Defaults to `nil`, in which case the encoding will be determined
    ///                          from the server response, falling back to the default HTTP character set, `ISO-8859-1`.
    ///   - emptyResponseCodes:  HTTP status codes for which empty responses are always valid. `[204, 205]` by default.
    ///   - emptyRequestMethods: `HTTPMethod`s for which empty responses are always valid. `[.head]` by default.
    ///   - completionHandler:   A closure to be executed once the request has finished.
    /// - Returns: The request.
    @discardableResult
    public func responseString(
        queue: DispatchQueue = .main,
        dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
        encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods,
        completionHandler: @escaping @Sendable (AFDataResponse<String>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: StringResponseSerializer(
                dataPreprocessor: dataPreprocessor,
                encoding: encoding,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            completionHandler: completionHandler)
    }
}
