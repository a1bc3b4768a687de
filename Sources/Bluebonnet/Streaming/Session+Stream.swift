import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    /// Creates a `DataStreamRequest` from a `URLRequest` made of the given parts, with `Encodable` parameters.
    ///
    /// - Parameters:
    ///   - convertible:                      `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - method:                           `HTTPMethod` for the `URLRequest`. `.get` by default.
    ///   - parameters:                       `Encodable` value to be encoded into the `URLRequest`. `nil` by default.
    ///   - encoder:                          `ParameterEncoder` to be used to encode the `parameters`.
    ///                                       `URLEncodedFormParameterEncoder.default` by default.
    ///   - headers:                          `HTTPHeaders` value to be added to the `URLRequest`. `nil` by default.
    ///   - automaticallyCancelOnStreamError: Whether a stream handler that throws cancels the request. `false` by
    ///                                       default.
    ///   - interceptor:                      `RequestInterceptor` for this request. `nil` by default.
    ///   - requestModifier:                  `RequestModifier` applied to the `URLRequest`. `nil` by default.
    /// - Returns: The created `DataStreamRequest`.
    public func streamRequest<Parameters: Encodable & Sendable>(
        _ convertible: any URLConvertible,
        method: HTTPMethod = .get,
        parameters: Parameters? = nil,
        encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default,
        headers: HTTPHeaders? = nil,
        automaticallyCancelOnStreamError: Bool = false,
        interceptor: (any RequestInterceptor)? = nil,
        requestModifier: RequestModifier? = nil
    ) -> DataStreamRequest {
        streamRequest(
            RequestEncodableConvertible(
                url: convertible, method: method, parameters: parameters, encoder: encoder,
                headers: headers, requestModifier: requestModifier),
            automaticallyCancelOnStreamError: automaticallyCancelOnStreamError, interceptor: interceptor)
    }

    /// Creates a `DataStreamRequest` from a `URLRequest` made of the given parts, without parameters.
    ///
    /// - Parameters:
    ///   - convertible:                      `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - method:                           `HTTPMethod` for the `URLRequest`. `.get` by default.
    ///   - headers:                          `HTTPHeaders` value to be added to the `URLRequest`. `nil` by default.
    ///   - automaticallyCancelOnStreamError: Whether a stream handler that throws cancels the request. `false` by
    ///                                       default.
    ///   - interceptor:                      `RequestInterceptor` for this request. `nil` by default.
    ///   - requestModifier:                  `RequestModifier` applied to the `URLRequest`. `nil` by default.
    /// - Returns: The created `DataStreamRequest`.
    public func streamRequest(
        _ convertible: any URLConvertible,
        method: HTTPMethod = .get,
        headers: HTTPHeaders? = nil,
        automaticallyCancelOnStreamError: Bool = false,
        interceptor: (any RequestInterceptor)? = nil,
        requestModifier: RequestModifier? = nil
    ) -> DataStreamRequest {
        streamRequest(
            RequestEncodableConvertible<Empty>(
                url: convertible, method: method, parameters: nil,
                encoder: URLEncodedFormParameterEncoder.default, headers: headers,
                requestModifier: requestModifier),
            automaticallyCancelOnStreamError: automaticallyCancelOnStreamError, interceptor: interceptor)
    }

    /// Creates a `DataStreamRequest` from a `URLRequestConvertible` value.
    ///
    /// - Parameters:
    ///   - convertible:                      `URLRequestConvertible` value to be used to create the `URLRequest`.
    ///   - automaticallyCancelOnStreamError: Whether a stream handler that throws cancels the request. `false` by
    ///                                       default.
    ///   - interceptor:                      `RequestInterceptor` for this request. `nil` by default.
    /// - Returns: The created `DataStreamRequest`.
    public func streamRequest(
        _ convertible: any URLRequestConvertible, automaticallyCancelOnStreamError: Bool = false,
        interceptor: (any RequestInterceptor)? = nil
    ) -> DataStreamRequest {
        let request = DataStreamRequest(
            convertible: convertible, automaticallyCancelOnStreamError: automaticallyCancelOnStreamError,
            underlyingQueue: rootQueue, serializationQueue: serializationQueue, eventMonitor: eventMonitor,
            interceptor: interceptor, context: context, delegate: self)
        perform(request)
        return request
    }
}
