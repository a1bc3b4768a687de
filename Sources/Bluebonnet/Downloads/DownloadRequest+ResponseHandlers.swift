import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DownloadRequest {
    /// What a handler sees of the finished download, taken when the handler's turn comes.
    struct Snapshot: @unchecked Sendable {
        // @unchecked: values copied under the lock; nothing mutates them afterwards.
        let state: Finished
        let fileURL: URL?
        let resumeData: Data?
    }

    func snapshot() -> Snapshot {
        Snapshot(state: finished(), fileURL: fileURL, resumeData: resumeData)
    }

    /// The finished download as it is, nothing read from the file.
    func unserializedResponse(_ snapshot: Snapshot) -> AFDownloadResponse<URL?> {
        let end = Timeline.now()
        let result: AFResult<URL?> = snapshot.state.error.map { .failure($0) } ?? .success(snapshot.fileURL)
        let response = DownloadResponse(
            request: snapshot.state.request, response: snapshot.state.response, fileURL: snapshot.fileURL,
            resumeData: snapshot.resumeData, metrics: nil, serializationDuration: 0,
            result: result, timeline: snapshot.state.timeline(serializationCompletedAt: end),
            taskMetrics: snapshot.state.metrics)
        if monitoredEvents.contains(.parsing) { eventMonitor?.request(self, didParseResponse: response) }
        return response
    }

    /// Runs `serializer` over a snapshot of the finished download.
    func serializedResponse<Serializer: DownloadResponseSerializerProtocol>(
        using serializer: Serializer,
        snapshot: Snapshot
    ) -> AFDownloadResponse<Serializer.SerializedObject> {
        let start = Timeline.now()
        let state = snapshot.state
        let result: AFResult<Serializer.SerializedObject>
        do {
            result = .success(
                try serializer.serializeDownload(
                    request: state.request, response: state.response,
                    fileURL: snapshot.fileURL, error: state.error))
        } catch {
            result = .failure(
                error.asAFError(or: .responseSerializationFailed(reason: .customSerializationFailed(error: error))))
        }
        let end = Timeline.now()
        let response = DownloadResponse(
            request: state.request, response: state.response, fileURL: snapshot.fileURL,
            resumeData: snapshot.resumeData, metrics: nil, serializationDuration: end - start,
            result: result, timeline: state.timeline(serializationCompletedAt: end), taskMetrics: state.metrics)
        if monitoredEvents.contains(.parsing) { eventMonitor?.request(self, didParseResponse: response) }
        return response
    }

    /// Adds a handler that receives the unserialized response (Alamofire 4's `DefaultDownloadResponse`).
    ///
    /// - Parameters:
    ///   - queue:             The queue on which the completion handler is dispatched. `.main` by default.
    ///   - completionHandler: The code to be executed once the request has finished.
    /// - Returns: The request.
    @discardableResult
    public func response(
        queue: DispatchQueue = .main,
        completionHandler: @escaping @Sendable (AFDownloadResponse<URL?>) -> Void
    ) -> Self {
        appendResponseSerializer(inlineSafe: true) { [self] in
            let response = unserializedResponse(snapshot())
            queue.async { completionHandler(response) }
        }
        return self
    }

    /// Adds a handler using the specified serializer, which reads the downloaded file.
    ///
    /// - Parameters:
    ///   - queue:              The queue on which the completion handler is dispatched. `.main` by default.
    ///   - responseSerializer: The response serializer responsible for serializing the request, response, and file.
    ///   - completionHandler:  The code to be executed once the request has finished.
    /// - Returns: The request.
    @discardableResult
    public func response<Serializer: DownloadResponseSerializerProtocol>(
        queue: DispatchQueue = .main,
        responseSerializer: Serializer,
        completionHandler: @escaping @Sendable (AFDownloadResponse<Serializer.SerializedObject>) -> Void
    ) -> Self {
        appendResponseHandler(queue: queue, serializer: responseSerializer, completionHandler: completionHandler)
    }

    /// Adds a handler that serializes the downloaded file with `responseSerializer`: the form for a
    /// `ResponseSerializer`, so that its static members (`.data`, `.string`) can be named, as in Alamofire.
    ///
    /// - Parameters:
    ///   - queue:              The queue on which the completion handler is dispatched. `.main` by default.
    ///   - responseSerializer: The response serializer responsible for serializing the request, response, and file.
    ///   - completionHandler:  The code to be executed once the request has finished.
    /// - Returns: The request.
    @discardableResult
    public func response<Serializer: ResponseSerializer>(
        queue: DispatchQueue = .main,
        responseSerializer: Serializer,
        completionHandler: @escaping @Sendable (AFDownloadResponse<Serializer.SerializedObject>) -> Void
    ) -> Self {
        appendResponseHandler(queue: queue, serializer: responseSerializer, completionHandler: completionHandler)
    }

    private func appendResponseHandler<Serializer: DownloadResponseSerializerProtocol>(
        queue: DispatchQueue, serializer responseSerializer: Serializer,
        completionHandler: @escaping @Sendable (AFDownloadResponse<Serializer.SerializedObject>) -> Void
    ) -> Self {
        // Never inline: the serializer reads a file.
        appendSerializingHandler(
            inlineSafe: false,
            serialize: { [self] in serializedResponse(using: responseSerializer, snapshot: snapshot()) },
            failure: { $0.error }, replacing: { response, error in response.mapError { _ in error } },
            deliver: { response in
                let response = UncheckedBox(response)
                queue.async { completionHandler(response.value) }
            })
        return self
    }

    /// Adds a handler that receives the URL the file was moved to.
    ///
    /// - Parameters:
    ///   - queue:             The queue on which the completion handler is dispatched. `.main` by default.
    ///   - completionHandler: A closure to be executed once the request has finished.
    /// - Returns: The request.
    @discardableResult
    public func responseURL(
        queue: DispatchQueue = .main,
        completionHandler: @escaping @Sendable (AFDownloadResponse<URL>) -> Void
    ) -> Self {
        response(queue: queue, responseSerializer: URLResponseSerializer(), completionHandler: completionHandler)
    }

    /// Adds a handler using a `DataResponseSerializer`, reading the downloaded file.
    ///
    /// - Parameters:
    ///   - queue:               The queue on which the completion handler is dispatched. `.main` by default.
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
        completionHandler: @escaping @Sendable (AFDownloadResponse<Data>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: DataResponseSerializer(
                dataPreprocessor: dataPreprocessor, emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            completionHandler: completionHandler)
    }

    /// Adds a handler using a `StringResponseSerializer`, reading the downloaded file.
    ///
    /// - Parameters:
    ///   - queue:               The queue on which the completion handler is dispatched. `.main` by default.
    ///   - dataPreprocessor:    `DataPreprocessor` which processes the received `Data` before calling the handler.
    ///   - encoding:            The string encoding; `nil` (the default) takes the response's charset, else ISO-8859-1.
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
        completionHandler: @escaping @Sendable (AFDownloadResponse<String>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: StringResponseSerializer(
                dataPreprocessor: dataPreprocessor, encoding: encoding,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            completionHandler: completionHandler)
    }

    /// Adds a handler using a `JSONResponseSerializer`, reading the downloaded file.
    ///
    /// - Parameters:
    ///   - queue:                     The queue on which the completion handler is dispatched. `.main` by default.
    ///   - dataPreprocessor:          `DataPreprocessor` which processes the received `Data` before calling the handler.
    ///   - emptyResponseCodes:        HTTP status codes for which empty responses are always valid. `[204, 205]` by default.
    ///   - emptyRequestMethods:       `HTTPMethod`s for which empty responses are always valid. `[.head]` by default.
    ///   - options:                   `JSONSerialization.ReadingOptions`. `.allowFragments` by default.
    ///   - removesKeysWithNullValues: Whether null-valued keys are removed, recursively. `false` by default.
    ///   - completionHandler:         A closure to be executed once the request has finished.
    /// - Returns: The request.
    @discardableResult
    public func responseJSON(
        queue: DispatchQueue = .main,
        dataPreprocessor: any DataPreprocessor = JSONResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = JSONResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = JSONResponseSerializer.defaultEmptyRequestMethods,
        options: JSONSerialization.ReadingOptions = .allowFragments,
        removesKeysWithNullValues: Bool = false,
        completionHandler: @escaping @Sendable (AFDownloadResponse<Any>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: JSONResponseSerializer(
                dataPreprocessor: dataPreprocessor, emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods, options: options,
                removesKeysWithNullValues: removesKeysWithNullValues),
            completionHandler: completionHandler)
    }

    /// Adds a handler using a `DecodableResponseSerializer`, reading the downloaded file.
    ///
    /// - Parameters:
    ///   - type:                `Decodable` type to decode from the file.
    ///   - queue:               The queue on which the completion handler is dispatched. `.main` by default.
    ///   - dataPreprocessor:    `DataPreprocessor` which processes the received `Data` before calling the handler.
    ///   - decoder:             `DataDecoder` to use to decode the response. `JSONDecoder()` by default.
    ///   - emptyResponseCodes:  HTTP status codes for which empty responses are always valid. `[204, 205]` by default.
    ///   - emptyRequestMethods: `HTTPMethod`s for which empty responses are always valid. `[.head]` by default.
    ///   - completionHandler:   A closure to be executed once the request has finished.
    /// - Returns: The request.
    @discardableResult
    public func responseDecodable<T: Decodable>(
        of type: T.Type = T.self,
        queue: DispatchQueue = .main,
        dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer<T>.defaultDataPreprocessor,
        decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer<T>.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<T>.defaultEmptyRequestMethods,
        completionHandler: @escaping @Sendable (AFDownloadResponse<T>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: DecodableResponseSerializer<T>(
                dataPreprocessor: dataPreprocessor, decoder: decoder,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            completionHandler: completionHandler)
    }

    /// Adds a handler using a `PropertyListResponseSerializer`, reading the downloaded file.
    ///
    /// - Parameters:
    ///   - queue:             The queue on which the completion handler is dispatched. `.main` by default.
    ///   - options:           The property list reading options. None by default.
    ///   - completionHandler: A closure to be executed once the request has finished.
    /// - Returns: The request.
    @discardableResult
    public func responsePropertyList(
        queue: DispatchQueue = .main, options: PropertyListSerialization.ReadOptions = [],
        completionHandler: @escaping @Sendable (AFDownloadResponse<Any>) -> Void
    ) -> Self {
        response(
            queue: queue, responseSerializer: PropertyListResponseSerializer(options: options),
            completionHandler: completionHandler)
    }

    /// Adds a handler using an `XMLResponseSerializer`, reading the downloaded file.
    ///
    /// - Parameters:
    ///   - queue:             The queue on which the completion handler is dispatched. `.main` by default.
    ///   - options:           Options for building the `XMLDocument`. None by default.
    ///   - completionHandler: A closure to be executed once the request has finished.
    /// - Returns: The request.
    @discardableResult
    public func responseXML(
        queue: DispatchQueue = .main, options: XMLNode.Options = [],
        completionHandler: @escaping @Sendable (AFDownloadResponse<XMLDocument>) -> Void
    ) -> Self {
        response(
            queue: queue, responseSerializer: XMLResponseSerializer(options: options),
            completionHandler: completionHandler)
    }

    /// Adds a handler using an `ImageResponseSerializer`, reading the downloaded file.
    ///
    /// - Parameters:
    ///   - queue:             The queue on which the completion handler is dispatched. `.main` by default.
    ///   - maximumPixelCount: The largest `width × height` accepted. 100 megapixels by default.
    ///   - completionHandler: A closure to be executed once the request has finished.
    /// - Returns: The request.
    @discardableResult
    public func responseImage(
        queue: DispatchQueue = .main, maximumPixelCount: Int = ImageResponseSerializer.defaultMaximumPixelCount,
        completionHandler: @escaping @Sendable (AFDownloadResponse<ImageResponseSerializer.Image>) -> Void
    ) -> Self {
        response(
            queue: queue, responseSerializer: ImageResponseSerializer(maximumPixelCount: maximumPixelCount),
            completionHandler: completionHandler)
    }
}

/// A `DownloadResponseSerializerProtocol` that hands over the URL of the downloaded file, reading nothing.
public struct URLResponseSerializer: DownloadResponseSerializerProtocol {
    /// Creates an instance.
    public init() {}

    /// The file's URL, or `AFError.responseSerializationFailed(reason: .inputFileNil)` when there is none.
    public func serializeDownload(request: URLRequest?, response: HTTPURLResponse?, fileURL: URL?, error: (any Error)?)
        throws -> URL
    {
        if let error { throw error }
        guard let fileURL else { throw AFError.responseSerializationFailed(reason: .inputFileNil) }
        return fileURL
    }
}

extension DownloadResponseSerializerProtocol where Self == URLResponseSerializer {
    /// Provides a `URLResponseSerializer` instance.
    public static var url: URLResponseSerializer { URLResponseSerializer() }
}
