import Foundation

/// A value that awaits the serialized response of a `DownloadRequest`.
public struct DownloadTask<Value>: @unchecked Sendable {
    // @unchecked: `Value` need not be `Sendable` (JSON's `Any`); the task holds only the request and a `ResponseBox`,
    // whose value is made once and never mutated.
    /// The `DownloadResponse`, once the download finished and was serialized.
    public var response: DownloadResponse<Value, AFError> {
        get async { await box.value(cancelling: shouldAutomaticallyCancel ? request : nil) }
    }

    /// The `Result` of the response.
    public var result: Result<Value, AFError> {
        get async { await response.result }
    }

    /// The serialized value.
    ///
    /// - Throws: The `AFError` the download failed with.
    public var value: Value {
        get async throws { try await result.get() }
    }

    private let request: DownloadRequest
    private let box: ResponseBox<DownloadResponse<Value, AFError>>
    private let shouldAutomaticallyCancel: Bool

    init(request: DownloadRequest, box: ResponseBox<DownloadResponse<Value, AFError>>, shouldAutomaticallyCancel: Bool)
    {
        self.request = request
        self.box = box
        self.shouldAutomaticallyCancel = shouldAutomaticallyCancel
    }

    /// Cancels the underlying `DownloadRequest`.
    public func cancel() { request.cancel() }
    /// Resumes the underlying `DownloadRequest`.
    public func resume() { request.resume() }
    /// Suspends the underlying `DownloadRequest`.
    public func suspend() { request.suspend() }
}

extension DownloadRequest {
    /// Creates a `DownloadTask` to `await` serialization using the provided serializer, which reads the file.
    ///
    /// - Parameters:
    ///   - serializer:                Response serializer used to serialize the downloaded file.
    ///   - shouldAutomaticallyCancel: Whether cancelling the awaiting Swift task cancels the download. `true` by default.
    /// - Returns: The `DownloadTask`.
    public func serializingDownload<Serializer: DownloadResponseSerializerProtocol>(
        using serializer: Serializer,
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true
    ) -> DownloadTask<Serializer.SerializedObject> {
        downloadTask(serializer: serializer, automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// Creates a `DownloadTask` to `await` serialization using the provided `ResponseSerializer`, which reads the
    /// file: the form that lets its static members (`.data`, `.string`) be named, as in Alamofire.
    ///
    /// - Parameters:
    ///   - serializer:                Response serializer used to serialize the downloaded file.
    ///   - shouldAutomaticallyCancel: Whether cancelling the awaiting Swift task cancels the download. `true` by default.
    /// - Returns: The `DownloadTask`.
    public func serializingDownload<Serializer: ResponseSerializer>(
        using serializer: Serializer,
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true
    ) -> DownloadTask<Serializer.SerializedObject> {
        downloadTask(serializer: serializer, automaticallyCancelling: shouldAutomaticallyCancel)
    }

    private func downloadTask<Serializer: DownloadResponseSerializerProtocol>(
        serializer: Serializer, automaticallyCancelling shouldAutomaticallyCancel: Bool
    ) -> DownloadTask<Serializer.SerializedObject> {
        let box = ResponseBox<DownloadResponse<Serializer.SerializedObject, AFError>>()
        appendResponseSerializer(inlineSafe: true) { [self] in
            let snapshot = snapshot()
            // Made by the awaiting task, which reads the file there rather than on the serialization queue.
            box.fulfill { self.serializedResponse(using: serializer, snapshot: snapshot) }
        }
        return DownloadTask(request: self, box: box, shouldAutomaticallyCancel: shouldAutomaticallyCancel)
    }

    /// Creates a `DownloadTask` to `await` the URL the file was moved to.
    ///
    /// - Parameter shouldAutomaticallyCancel: Whether cancelling the awaiting Swift task cancels the download.
    /// - Returns: The `DownloadTask`.
    public func serializingDownloadedFileURL(automaticallyCancelling shouldAutomaticallyCancel: Bool = true)
        -> DownloadTask<URL>
    {
        serializingDownload(using: URLResponseSerializer(), automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// Creates a `DownloadTask` to `await` the downloaded file's `Data`.
    ///
    /// - Parameters:
    ///   - shouldAutomaticallyCancel: Whether cancelling the awaiting Swift task cancels the download.
    ///   - dataPreprocessor:          `DataPreprocessor` which processes the received `Data` before completion.
    ///   - emptyResponseCodes:        HTTP response codes for which empty responses are allowed. `[204, 205]` by default.
    ///   - emptyRequestMethods:       `HTTPMethod`s for which empty responses are always valid. `[.head]` by default.
    /// - Returns: The `DownloadTask`.
    public func serializingData(
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
        dataPreprocessor: any DataPreprocessor = DataResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = DataResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DataResponseSerializer.defaultEmptyRequestMethods
    ) -> DownloadTask<Data> {
        serializingDownload(
            using: DataResponseSerializer(
                dataPreprocessor: dataPreprocessor, emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// Creates a `DownloadTask` to `await` the downloaded file as a `String`.
    ///
    /// - Parameters:
    ///   - shouldAutomaticallyCancel: Whether cancelling the awaiting Swift task cancels the download.
    ///   - dataPreprocessor:          `DataPreprocessor` which processes the received `Data` before completion.
    ///   - encoding:                  The string encoding; `nil` (the default) takes the response's charset.
    ///   - emptyResponseCodes:        HTTP response codes for which empty responses are allowed. `[204, 205]` by default.
    ///   - emptyRequestMethods:       `HTTPMethod`s for which empty responses are always valid. `[.head]` by default.
    /// - Returns: The `DownloadTask`.
    public func serializingString(
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
        dataPreprocessor: any DataPreprocessor = StringResponseSerializer.defaultDataPreprocessor,
        encoding: String.Encoding? = nil,
        emptyResponseCodes: Set<Int> = StringResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = StringResponseSerializer.defaultEmptyRequestMethods
    ) -> DownloadTask<String> {
        serializingDownload(
            using: StringResponseSerializer(
                dataPreprocessor: dataPreprocessor, encoding: encoding,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// Creates a `DownloadTask` to `await` a `Decodable` value read from the downloaded file.
    ///
    /// - Parameters:
    ///   - type:                      `Decodable` type to decode.
    ///   - shouldAutomaticallyCancel: Whether cancelling the awaiting Swift task cancels the download.
    ///   - dataPreprocessor:          `DataPreprocessor` which processes the received `Data` before completion.
    ///   - decoder:                   `DataDecoder` to use to decode the response. `JSONDecoder()` by default.
    ///   - emptyResponseCodes:        HTTP response codes for which empty responses are allowed. `[204, 205]` by default.
    ///   - emptyRequestMethods:       `HTTPMethod`s for which empty responses are always valid. `[.head]` by default.
    /// - Returns: The `DownloadTask`.
    public func serializingDecodable<Value: Decodable>(
        _ type: Value.Type = Value.self,
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
        dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer<Value>.defaultDataPreprocessor,
        decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer<Value>.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<Value>.defaultEmptyRequestMethods
    ) -> DownloadTask<Value> {
        serializingDownload(
            using: DecodableResponseSerializer<Value>(
                dataPreprocessor: dataPreprocessor, decoder: decoder,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            automaticallyCancelling: shouldAutomaticallyCancel)
    }
}
