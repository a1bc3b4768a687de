import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DataRequest {
    /// Adds a handler that receives the unserialized response (the seed's `DefaultDataResponse`).
    ///
    /// - Parameters:
    ///   - queue:             The queue on which the completion handler is dispatched. `.main` by default.
    ///   - completionHandler: The code to be executed once the request has finished.
    /// - Returns: The request.
    @discardableResult
    public func response(queue: DispatchQueue = .main, completionHandler: @escaping @Sendable (AFDataResponse<Data?>) -> Void) -> Self {
        appendResponseSerializer { [self] in
            let response = unserializedResponse()
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
        appendResponseSerializer { [self] in
            // The value may not be `Sendable` (JSON's `Any`); it is handed over once and never touched again here.
            let response = UncheckedBox(serializedResponse(using: responseSerializer))
            queue.async { completionHandler(response.value) }
        }
        return self
    }

    /// The finished request as it is, nothing parsed; called on `serializationQueue`.
    func unserializedResponse() -> AFDataResponse<Data?> {
        let end = Timeline.now()
        let state = mutableState.read()
        let data = self.data
        let result: AFResult<Data?> = state.error.map { .failure($0) } ?? .success(data)
        let response = DataResponse(request: state.requests.last, response: state.response, data: data,
                                    serializationDuration: 0, result: result,
                                    timeline: Self.timeline(of: state, serializationCompletedAt: end))
        eventMonitor?.request(self, didParseResponse: response)
        return response
    }

    /// Runs `serializer` over the finished request; called on `serializationQueue`.
    func serializedResponse<Serializer: DataResponseSerializerProtocol>(
        using serializer: Serializer
    ) -> AFDataResponse<Serializer.SerializedObject> {
        let start = Timeline.now()
        let state = mutableState.read()
        let data = self.data
        let result: AFResult<Serializer.SerializedObject>
        do {
            result = .success(try serializer.serialize(request: state.requests.last, response: state.response, data: data, error: state.error))
        } catch {
            result = .failure(error.asAFError(or: .responseSerializationFailed(reason: .customSerializationFailed(error: error))))
        }
        let end = Timeline.now()
        let response = DataResponse(request: state.requests.last, response: state.response, data: data,
                                    serializationDuration: end - start, result: result,
                                    timeline: Self.timeline(of: state, serializationCompletedAt: end))
        eventMonitor?.request(self, didParseResponse: response)
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
        response(queue: queue,
                 responseSerializer: DataResponseSerializer(dataPreprocessor: dataPreprocessor,
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
        response(queue: queue,
                 responseSerializer: StringResponseSerializer(dataPreprocessor: dataPreprocessor,
                                                              encoding: encoding,
                                                              emptyResponseCodes: emptyResponseCodes,
                                                              emptyRequestMethods: emptyRequestMethods),
                 completionHandler: completionHandler)
    }
}
