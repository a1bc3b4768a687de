import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension DataRequest {
    /// Adds a handler using a `JSONResponseSerializer` to be called once the request has finished.
    ///
    /// - Parameters:
    ///   - queue:                     The queue on which the completion handler is dispatched. `.main` by default.
    ///   - dataPreprocessor:          `DataPreprocessor` which processes the received `Data` before calling the handler.
    ///   - emptyResponseCodes:        HTTP status codes for which empty responses are always valid. `[204, 205]` by default.
    ///   - emptyRequestMethods:       `HTTPMethod`s for which empty responses are always valid. `[.head]` by default.
    ///   - options:                   `JSONSerialization.ReadingOptions` used when parsing the response. `.allowFragments` by default.
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
        completionHandler: @escaping @Sendable (AFDataResponse<Any>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: JSONResponseSerializer(
                dataPreprocessor: dataPreprocessor,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods,
                options: options,
                removesKeysWithNullValues: removesKeysWithNullValues),
            completionHandler: completionHandler)
    }

    /// Adds a handler using a `DecodableResponseSerializer` to be called once the request has finished.
    ///
    /// - Parameters:
    ///   - type:                `Decodable` type to decode from response data.
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
        completionHandler: @escaping @Sendable (AFDataResponse<T>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: DecodableResponseSerializer<T>(
                dataPreprocessor: dataPreprocessor, decoder: decoder,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            completionHandler: completionHandler)
    }

    /// Adds a handler using a `PropertyListResponseSerializer` to be called once the request has finished.
    ///
    /// - Parameters:
    ///   - queue:               The queue on which the completion handler is dispatched. `.main` by default.
    ///   - dataPreprocessor:    `DataPreprocessor` which processes the received `Data` before calling the handler.
    ///   - emptyResponseCodes:  HTTP status codes for which empty responses are always valid. `[204, 205]` by default.
    ///   - emptyRequestMethods: `HTTPMethod`s for which empty responses are always valid. `[.head]` by default.
    ///   - options:             The property list reading options. None by default.
    ///   - completionHandler:   A closure to be executed once the request has finished.
    /// - Returns: The request.
    @discardableResult
    public func responsePropertyList(
        queue: DispatchQueue = .main,
        dataPreprocessor: any DataPreprocessor = PropertyListResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = PropertyListResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = PropertyListResponseSerializer.defaultEmptyRequestMethods,
        options: PropertyListSerialization.ReadOptions = [],
        completionHandler: @escaping @Sendable (AFDataResponse<Any>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: PropertyListResponseSerializer(
                dataPreprocessor: dataPreprocessor,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods,
                options: options),
            completionHandler: completionHandler)
    }

    /// Adds a handler using an `XMLResponseSerializer` to be called once the request has finished.
    ///
    /// - Parameters:
    ///   - queue:               The queue on which the completion handler is dispatched. `.main` by default.
    ///   - dataPreprocessor:    `DataPreprocessor` which processes the received `Data` before calling the handler.
    ///   - emptyResponseCodes:  HTTP status codes for which empty responses are always valid. `[204, 205]` by default.
    ///   - emptyRequestMethods: `HTTPMethod`s for which empty responses are always valid. `[.head]` by default.
    ///   - options:             Options for building the `XMLDocument`. None by default.
    ///   - completionHandler:   A closure to be executed once the request has finished.
    /// - Returns: The request.
    @discardableResult
    public func responseXML(
        queue: DispatchQueue = .main,
        dataPreprocessor: any DataPreprocessor = XMLResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = XMLResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = XMLResponseSerializer.defaultEmptyRequestMethods,
        options: XMLNode.Options = [],
        completionHandler: @escaping @Sendable (AFDataResponse<XMLDocument>) -> Void
    ) -> Self {
        response(
            queue: queue,
            responseSerializer: XMLResponseSerializer(
                dataPreprocessor: dataPreprocessor,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods,
                options: options),
            completionHandler: completionHandler)
    }

    /// Adds a handler using an `ImageResponseSerializer` to be called once the request has finished.
    ///
    /// - Parameters:
    ///   - queue:             The queue on which the completion handler is dispatched. `.main` by default.
    ///   - maximumPixelCount: The largest `width × height` accepted. 100 megapixels by default.
    ///   - completionHandler: A closure to be executed once the request has finished.
    /// - Returns: The request.
    @discardableResult
    public func responseImage(
        queue: DispatchQueue = .main,
        maximumPixelCount: Int = ImageResponseSerializer.defaultMaximumPixelCount,
        completionHandler: @escaping @Sendable (AFDataResponse<ImageResponseSerializer.Image>) -> Void
    ) -> Self {
        response(
            queue: queue, responseSerializer: ImageResponseSerializer(maximumPixelCount: maximumPixelCount),
            completionHandler: completionHandler)
    }

    // MARK: - async

    /// Creates a `DataTask` to `await` a `Decodable` value.
    ///
    /// - Parameters:
    ///   - type:                      `Decodable` type to decode from response data.
    ///   - shouldAutomaticallyCancel: Whether cancelling the awaiting Swift task cancels the request. `true` by default.
    ///   - dataPreprocessor:          `DataPreprocessor` which processes the received `Data` before completion.
    ///   - decoder:                   `DataDecoder` to use to decode the response. `JSONDecoder()` by default.
    ///   - emptyResponseCodes:        HTTP response codes for which empty responses are allowed. `[204, 205]` by default.
    ///   - emptyRequestMethods:       `HTTPMethod`s for which empty responses are always valid. `[.head]` by default.
    /// - Returns: The `DataTask`.
    public func serializingDecodable<Value: Decodable>(
        _ type: Value.Type = Value.self,
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true,
        dataPreprocessor: any DataPreprocessor = DecodableResponseSerializer<Value>.defaultDataPreprocessor,
        decoder: any DataDecoder = JSONDecoder(),
        emptyResponseCodes: Set<Int> = DecodableResponseSerializer<Value>.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = DecodableResponseSerializer<Value>.defaultEmptyRequestMethods
    ) -> DataTask<Value> {
        serializingResponse(
            using: DecodableResponseSerializer<Value>(
                dataPreprocessor: dataPreprocessor, decoder: decoder,
                emptyResponseCodes: emptyResponseCodes,
                emptyRequestMethods: emptyRequestMethods),
            automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// Creates a `DataTask` to `await` a property list.
    ///
    /// - Parameters:
    ///   - options:                   The property list reading options. None by default.
    ///   - shouldAutomaticallyCancel: Whether cancelling the awaiting Swift task cancels the request. `true` by default.
    /// - Returns: The `DataTask`.
    public func serializingPropertyList(
        options: PropertyListSerialization.ReadOptions = [],
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true
    ) -> DataTask<Any> {
        serializingResponse(
            using: PropertyListResponseSerializer(options: options), automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// Creates a `DataTask` to `await` an `XMLDocument`.
    ///
    /// - Parameters:
    ///   - options:                   Options for building the document. None by default.
    ///   - shouldAutomaticallyCancel: Whether cancelling the awaiting Swift task cancels the request. `true` by default.
    /// - Returns: The `DataTask`.
    public func serializingXML(
        options: XMLNode.Options = [],
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true
    ) -> DataTask<XMLDocument> {
        serializingResponse(
            using: XMLResponseSerializer(options: options), automaticallyCancelling: shouldAutomaticallyCancel)
    }

    /// Creates a `DataTask` to `await` an `Image`.
    ///
    /// - Parameters:
    ///   - maximumPixelCount:         The largest `width × height` accepted. 100 megapixels by default.
    ///   - shouldAutomaticallyCancel: Whether cancelling the awaiting Swift task cancels the request. `true` by default.
    /// - Returns: The `DataTask`.
    public func serializingImage(
        maximumPixelCount: Int = ImageResponseSerializer.defaultMaximumPixelCount,
        automaticallyCancelling shouldAutomaticallyCancel: Bool = true
    ) -> DataTask<ImageResponseSerializer.Image> {
        serializingResponse(
            using: ImageResponseSerializer(maximumPixelCount: maximumPixelCount),
            automaticallyCancelling: shouldAutomaticallyCancel)
    }
}
