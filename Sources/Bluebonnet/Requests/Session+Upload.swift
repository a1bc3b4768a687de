import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    /// A `URLRequestConvertible` and a body made independently.
    struct Upload: UploadConvertible {
        let request: any URLRequestConvertible
        let uploadable: any UploadableConvertible

        func createUploadable() throws -> UploadRequest.Uploadable { try uploadable.createUploadable() }
        func asURLRequest() throws -> URLRequest { try request.asURLRequest() }
    }

    /// A multipart form: sets the request's `Content-Type` to the form's, and encodes the form in memory or, above
    /// the threshold, into a temporary file that the request removes once it completes.
    struct MultipartUpload: UploadConvertible {
        let multipartFormData: MultipartFormData
        let encodingMemoryThreshold: UInt64
        let request: any URLRequestConvertible
        let fileManager: FileManager

        func asURLRequest() throws -> URLRequest {
            var urlRequest = try request.asURLRequest()
            urlRequest.setValue(multipartFormData.contentType, forHTTPHeaderField: "Content-Type")
            return urlRequest
        }

        func createUploadable() throws -> UploadRequest.Uploadable {
            guard multipartFormData.contentLength >= encodingMemoryThreshold else {
                return .data(try multipartFormData.encode())
            }
            let directory = fileManager.temporaryDirectory
                .appendingPathComponent("org.bluebonnet.session", isDirectory: true)
                .appendingPathComponent("multipart.form.data", isDirectory: true)
            try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
            let fileURL = directory.appendingPathComponent(UUID().uuidString)
            // `writeEncodedData(to:)` removes what it wrote when it fails.
            try multipartFormData.writeEncodedData(to: fileURL)
            return .file(fileURL, shouldRemove: true)
        }
    }

    /// An upload's `URLRequest`: the request convertible without parameters.
    private static func uploadRequest(
        _ url: any URLConvertible, method: HTTPMethod, headers: HTTPHeaders?,
        requestModifier: RequestModifier?
    ) -> any URLRequestConvertible {
        RequestConvertible(
            url: url, method: method, parameters: nil, encoding: URLEncoding.default, headers: headers,
            requestModifier: requestModifier)
    }

    // MARK: - Data

    /// Creates an `UploadRequest` that sends `data`.
    ///
    /// - Parameters:
    ///   - data:            The body.
    ///   - convertible:     The `URLConvertible` to send it to.
    ///   - method:          The `HTTPMethod`. `.post` by default.
    ///   - headers:         `HTTPHeaders` for the request. `nil` by default.
    ///   - interceptor:     `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first response handler resumes the request; `nil` (the default)
    ///                      follows the session's `startRequestsImmediately`.
    ///   - fileManager:     The `FileManager` for the request. `.default` by default.
    ///   - requestModifier: `RequestModifier` applied to the `URLRequest` when it is made. `nil` by default.
    /// - Returns: The created `UploadRequest`.
    public func upload(
        _ data: Data,
        to convertible: any URLConvertible,
        method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        upload(
            data,
            with: Self.uploadRequest(convertible, method: method, headers: headers, requestModifier: requestModifier),
            interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }

    /// Creates an `UploadRequest` that sends `data` with the given `URLRequest`.
    ///
    /// - Parameters:
    ///   - data:        The body.
    ///   - convertible: The `URLRequestConvertible`.
    ///   - interceptor: `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first response handler resumes the request; `nil` (the default)
    ///                  follows the session's `startRequestsImmediately`.
    ///   - fileManager: The `FileManager` for the request. `.default` by default.
    /// - Returns: The created `UploadRequest`.
    public func upload(
        _ data: Data, with convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default
    ) -> UploadRequest {
        upload(
            Upload(request: convertible, uploadable: UploadRequest.Uploadable.data(data)), interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }

    // MARK: - File

    /// Creates an `UploadRequest` that streams the file at `fileURL` from disk.
    ///
    /// - Parameters:
    ///   - fileURL:         The `file:` URL of the body.
    ///   - convertible:     The `URLConvertible` to send it to.
    ///   - method:          The `HTTPMethod`. `.post` by default.
    ///   - headers:         `HTTPHeaders` for the request. `nil` by default.
    ///   - interceptor:     `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first response handler resumes the request; `nil` (the default)
    ///                      follows the session's `startRequestsImmediately`.
    ///   - fileManager:     The `FileManager` used to measure the file. `.default` by default.
    ///   - requestModifier: `RequestModifier` applied to the `URLRequest` when it is made. `nil` by default.
    /// - Returns: The created `UploadRequest`.
    public func upload(
        _ fileURL: URL,
        to convertible: any URLConvertible,
        method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        upload(
            fileURL,
            with: Self.uploadRequest(convertible, method: method, headers: headers, requestModifier: requestModifier),
            interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }

    /// Creates an `UploadRequest` that streams the file at `fileURL` with the given `URLRequest`.
    ///
    /// - Parameters:
    ///   - fileURL:     The `file:` URL of the body.
    ///   - convertible: The `URLRequestConvertible`.
    ///   - interceptor: `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first response handler resumes the request; `nil` (the default)
    ///                  follows the session's `startRequestsImmediately`.
    ///   - fileManager: The `FileManager` used to measure the file. `.default` by default.
    /// - Returns: The created `UploadRequest`.
    public func upload(
        _ fileURL: URL, with convertible: any URLRequestConvertible, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default
    ) -> UploadRequest {
        upload(
            Upload(request: convertible, uploadable: UploadRequest.Uploadable.file(fileURL, shouldRemove: false)),
            interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }

    // MARK: - InputStream

    /// Creates an `UploadRequest` that sends what `stream` yields, with chunked transfer encoding.
    ///
    /// - Parameters:
    ///   - stream:          The `InputStream`; it is read once, off the caller's thread.
    ///   - convertible:     The `URLConvertible` to send it to.
    ///   - method:          The `HTTPMethod`. `.post` by default.
    ///   - headers:         `HTTPHeaders` for the request. `nil` by default.
    ///   - interceptor:     `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first response handler resumes the request; `nil` (the default)
    ///                      follows the session's `startRequestsImmediately`.
    ///   - fileManager:     The `FileManager` for the request. `.default` by default.
    ///   - requestModifier: `RequestModifier` applied to the `URLRequest` when it is made. `nil` by default.
    /// - Returns: The created `UploadRequest`.
    public func upload(
        _ stream: InputStream,
        to convertible: any URLConvertible,
        method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        upload(
            stream,
            with: Self.uploadRequest(convertible, method: method, headers: headers, requestModifier: requestModifier),
            interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }

    /// Creates an `UploadRequest` that sends what `stream` yields with the given `URLRequest`.
    ///
    /// - Parameters:
    ///   - stream:      The `InputStream`; it is read once, off the caller's thread.
    ///   - convertible: The `URLRequestConvertible`.
    ///   - interceptor: `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first response handler resumes the request; `nil` (the default)
    ///                  follows the session's `startRequestsImmediately`.
    ///   - fileManager: The `FileManager` for the request. `.default` by default.
    /// - Returns: The created `UploadRequest`.
    public func upload(
        _ stream: InputStream, with convertible: any URLRequestConvertible,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default
    ) -> UploadRequest {
        upload(
            Upload(request: convertible, uploadable: UploadRequest.Uploadable.stream(stream)), interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }

    // MARK: - Multipart

    /// Creates an `UploadRequest` that sends the multipart form `multipartFormData` builds.
    ///
    /// The builder runs at once, on the caller's thread; the form is encoded later, on `requestQueue`: in memory
    /// below `encodingMemoryThreshold`, otherwise into a temporary file that is streamed, then removed.
    ///
    /// - Parameters:
    ///   - multipartFormData:       The closure that appends the form's parts.
    ///   - url:                     The `URLConvertible` to send it to.
    ///   - encodingMemoryThreshold: The size above which the form goes through a file. 10 MB by default.
    ///   - method:                  The `HTTPMethod`. `.post` by default.
    ///   - headers:                 `HTTPHeaders` for the request. `nil` by default.
    ///   - interceptor:             `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first response handler resumes the request; the session decides when `nil`
    ///                              (the default).
    ///   - fileManager:             The `FileManager` for the form and its temporary file. `.default` by default.
    ///   - requestModifier:         `RequestModifier` applied to the `URLRequest` when it is made. `nil` by default.
    /// - Returns: The created `UploadRequest`.
    public func upload(
        multipartFormData: (MultipartFormData) -> Void,
        to url: any URLConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        let form = MultipartFormData(fileManager: fileManager)
        multipartFormData(form)
        return upload(
            multipartFormData: form, to: url, usingThreshold: encodingMemoryThreshold, method: method,
            headers: headers, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume,
            fileManager: fileManager, requestModifier: requestModifier)
    }

    /// Creates an `UploadRequest` that sends the multipart form `multipartFormData` builds, with the given
    /// `URLRequest`.
    ///
    /// - Parameters:
    ///   - multipartFormData:       The closure that appends the form's parts; it runs at once.
    ///   - request:                 The `URLRequestConvertible`.
    ///   - encodingMemoryThreshold: The size above which the form goes through a file. 10 MB by default.
    ///   - interceptor:             `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first response handler resumes the request; the session decides when `nil`
    ///                              (the default).
    ///   - fileManager:             The `FileManager` for the form and its temporary file. `.default` by default.
    /// - Returns: The created `UploadRequest`.
    public func upload(
        multipartFormData: (MultipartFormData) -> Void,
        with request: any URLRequestConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default
    ) -> UploadRequest {
        let form = MultipartFormData(fileManager: fileManager)
        multipartFormData(form)
        return upload(
            multipartFormData: form, with: request, usingThreshold: encodingMemoryThreshold, interceptor: interceptor,
            fileManager: fileManager)
    }

    /// Creates an `UploadRequest` that sends a `MultipartFormData`.
    ///
    /// - Parameters:
    ///   - multipartFormData:       The form.
    ///   - url:                     The `URLConvertible` to send it to.
    ///   - encodingMemoryThreshold: The size above which the form goes through a file. 10 MB by default.
    ///   - method:                  The `HTTPMethod`. `.post` by default.
    ///   - headers:                 `HTTPHeaders` for the request. `nil` by default.
    ///   - interceptor:             `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first response handler resumes the request; the session decides when `nil`
    ///                              (the default).
    ///   - fileManager:             The `FileManager` for the temporary file. `.default` by default.
    ///   - requestModifier:         `RequestModifier` applied to the `URLRequest` when it is made. `nil` by default.
    /// - Returns: The created `UploadRequest`.
    public func upload(
        multipartFormData: MultipartFormData,
        to url: any URLConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        method: HTTPMethod = .post,
        headers: HTTPHeaders? = nil,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default,
        requestModifier: RequestModifier? = nil
    ) -> UploadRequest {
        let request = Self.uploadRequest(url, method: method, headers: headers, requestModifier: requestModifier)
        return upload(
            multipartFormData: multipartFormData, with: request, usingThreshold: encodingMemoryThreshold,
            interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }

    /// Creates an `UploadRequest` that sends a `MultipartFormData` with the given `URLRequest`.
    ///
    /// - Parameters:
    ///   - multipartFormData:       The form.
    ///   - request:                 The `URLRequestConvertible`.
    ///   - encodingMemoryThreshold: The size above which the form goes through a file. 10 MB by default.
    ///   - interceptor:             `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first response handler resumes the request; the session decides when `nil`
    ///                              (the default).
    ///   - fileManager:             The `FileManager` for the temporary file. `.default` by default.
    /// - Returns: The created `UploadRequest`.
    public func upload(
        multipartFormData: MultipartFormData,
        with request: any URLRequestConvertible,
        usingThreshold encodingMemoryThreshold: UInt64 = MultipartFormData.encodingMemoryThreshold,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default
    ) -> UploadRequest {
        upload(
            MultipartUpload(
                multipartFormData: multipartFormData, encodingMemoryThreshold: encodingMemoryThreshold,
                request: request, fileManager: fileManager), interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume, fileManager: fileManager)
    }

    // MARK: - Common

    /// Creates an `UploadRequest` from an `UploadConvertible`; its `URLRequest` and body are made on `requestQueue`.
    ///
    /// - Parameters:
    ///   - convertible: The `UploadConvertible`.
    ///   - interceptor: `RequestInterceptor` for this request, used after the session's. `nil` by default.
    ///   - shouldAutomaticallyResume: Whether the first response handler resumes the request; `nil` (the default)
    ///                  follows the session's `startRequestsImmediately`.
    ///   - fileManager: The `FileManager` for the request. `.default` by default.
    /// - Returns: The created `UploadRequest`.
    public func upload(
        _ convertible: any UploadConvertible, interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        fileManager: FileManager = .default
    ) -> UploadRequest {
        let request = UploadRequest(
            convertible: convertible,
            underlyingQueue: rootQueue,
            serializationQueue: serializationQueue,
            eventMonitor: eventMonitor,
            interceptor: interceptor,
            shouldAutomaticallyResume: shouldAutomaticallyResume,
            context: context,
            delegate: self,
            fileManager: fileManager
        )
        perform(request)
        return request
    }
}
