import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    /// Creates a `DownloadRequest` from a `URLRequest` made of the given parts.
    ///
    /// - Parameters:
    ///   - convertible:     `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - method:          `HTTPMethod` for the `URLRequest`. `.get` by default.
    ///   - parameters:      `Parameters` (a.k.a. `[String: any Any & Sendable]`) value to be encoded. `nil` by default.
    ///   - encoding:        `ParameterEncoding` to be used to encode the `parameters`. `URLEncoding.default` by default.
    ///   - headers:         `HTTPHeaders` value to be added to the `URLRequest`. `nil` by default.
    ///   - interceptor:     `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - requestModifier: `RequestModifier` applied to the `URLRequest` before encoding. `nil` by default.
    ///   - destination:     `DownloadRequest.Destination` closure used to determine where the file is moved. `nil`
    ///                      by default: a file of its own in the temporary directory.
    /// - Returns: The created `DownloadRequest`.
    public func download(
        _ convertible: any URLConvertible,
        method: HTTPMethod = .get,
        parameters: Parameters? = nil,
        encoding: any ParameterEncoding = URLEncoding.default,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        requestModifier: RequestModifier? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        download(
            RequestConvertible(
                url: convertible, method: method, parameters: parameters, encoding: encoding,
                headers: headers, requestModifier: requestModifier),
            interceptor: interceptor, to: destination)
    }

    /// Creates a `DownloadRequest` from a `URLRequest` made of the given parts, with `Encodable` parameters.
    ///
    /// - Parameters:
    ///   - convertible:     `URLConvertible` value to be used as the `URLRequest`'s `URL`.
    ///   - method:          `HTTPMethod` for the `URLRequest`. `.get` by default.
    ///   - parameters:      `Encodable` value to be encoded into the `URLRequest`. `nil` by default.
    ///   - encoder:         `ParameterEncoder` to be used to encode the `parameters`.
    ///                      `URLEncodedFormParameterEncoder.default` by default.
    ///   - headers:         `HTTPHeaders` value to be added to the `URLRequest`. `nil` by default.
    ///   - interceptor:     `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - requestModifier: `RequestModifier` applied to the `URLRequest` before encoding. `nil` by default.
    ///   - destination:     `DownloadRequest.Destination` closure used to determine where the file is moved. `nil`
    ///                      by default.
    /// - Returns: The created `DownloadRequest`.
    public func download<Parameters: Encodable & Sendable>(
        _ convertible: any URLConvertible,
        method: HTTPMethod = .get,
        parameters: Parameters? = nil,
        encoder: any ParameterEncoder = URLEncodedFormParameterEncoder.default,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        requestModifier: RequestModifier? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        download(
            RequestEncodableConvertible(
                url: convertible, method: method, parameters: parameters, encoder: encoder,
                headers: headers, requestModifier: requestModifier),
            interceptor: interceptor, to: destination)
    }

    /// Creates a `DownloadRequest` from a `URLRequestConvertible` value.
    ///
    /// - Parameters:
    ///   - convertible: `URLRequestConvertible` value to be used to create the `URLRequest`.
    ///   - interceptor: `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - destination: `DownloadRequest.Destination` closure used to determine where the file is moved. `nil` by
    ///                  default.
    /// - Returns: The created `DownloadRequest`.
    public func download(
        _ convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        makeDownload(.request(convertible), interceptor: interceptor, destination: destination)
    }

    /// Creates a `DownloadRequest` that continues an earlier download from its `resumeData`: it asks for the rest
    /// with `Range` and `If-Range`, appends a `206` to the partial file, and starts over on a `200` (the resource
    /// changed). Resume data that is malformed or whose partial file is gone fails with
    /// `AFError.createURLRequestFailed(error: DownloadResumeError)`.
    ///
    /// - Parameters:
    ///   - data:        The resume data of an earlier `DownloadRequest`.
    ///   - interceptor: `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - destination: `DownloadRequest.Destination` closure used to determine where the file is moved. `nil` by
    ///                  default.
    /// - Returns: The created `DownloadRequest`.
    public func download(
        resumingWith data: Data, interceptor: (any RequestInterceptor)? = nil,
        to destination: DownloadRequest.Destination? = nil
    ) -> DownloadRequest {
        makeDownload(.resumeData(data), interceptor: interceptor, destination: destination)
    }

    private func makeDownload(
        _ downloadable: DownloadRequest.Downloadable, interceptor: (any RequestInterceptor)?,
        destination: DownloadRequest.Destination?
    ) -> DownloadRequest {
        let request = DownloadRequest(
            downloadable: downloadable,
            underlyingQueue: rootQueue,
            serializationQueue: serializationQueue,
            eventMonitor: eventMonitor,
            interceptor: interceptor,
            shouldAutomaticallyResume: nil,
            context: context,
            delegate: self,
            destination: destination ?? DownloadRequest.defaultDestination
        )
        perform(request)
        return request
    }
}
