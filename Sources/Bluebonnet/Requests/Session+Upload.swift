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
    static func uploadRequest(
        _ url: any URLConvertible, method: HTTPMethod, headers: HTTPHeaders?,
        requestModifier: RequestModifier?
    ) -> any URLRequestConvertible {
        RequestConvertible(
            url: url, method: method, parameters: nil, encoding: URLEncoding.default, headers: headers,
            requestModifier: requestModifier)
    }

    // MARK: - Data

    // MARK: - File

    // MARK: - InputStream

    // MARK: - Multipart

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
