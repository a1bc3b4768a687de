import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A value that can produce the body of an upload.
public protocol UploadableConvertible: Sendable {
    /// Makes the `UploadRequest.Uploadable`, encoding a multipart form if needed.
    ///
    /// - Returns: The `Uploadable`.
    /// - Throws: Any error making it; it surfaces as `AFError.createUploadableFailed(error:)` unless it is an
    ///   `AFError` already.
    func createUploadable() throws -> UploadRequest.Uploadable
}

/// A value that can produce both the `URLRequest` and the body of an upload.
public protocol UploadConvertible: UploadableConvertible & URLRequestConvertible {}

/// A `DataRequest` that sends a body from memory, a file or a stream, streamed with back-pressure.
public final class UploadRequest: DataRequest, @unchecked Sendable {
    // @unchecked: the upload's own state is behind `Protected`; the rest is immutable.
    /// The body of an upload.
    public enum Uploadable: @unchecked Sendable {
        // `InputStream` is not `Sendable`; the request reads it from one thread at a time.
        /// Bytes in memory.
        case data(Data)
        /// A file, streamed from disk; removed once the request completes when `shouldRemove` is `true`.
        case file(URL, shouldRemove: Bool)
        /// A stream of unknown length, sent with chunked transfer encoding. It can be read only once.
        case stream(InputStream)
    }

    /// The value the body is made from.
    public let upload: any UploadableConvertible
    /// The `FileManager` used to measure and remove files.
    public let fileManager: FileManager

    /// The body, once made: written when it is made and read by `uploadable` and the cleanup.
    private let madeUploadable: Protected<Uploadable?>

    /// The body, once it has been made (after the `URLRequest`).
    public var uploadable: Uploadable? { madeUploadable.read() }

    init(
        convertible: any UploadConvertible,
        underlyingQueue: DispatchQueue,
        serializationQueue: DispatchQueue,
        eventMonitor: (any EventMonitor)?,
        interceptor: (any RequestInterceptor)?,
        shouldAutomaticallyResume: Bool?,
        context: SessionContext,
        delegate: any RequestLifecycleDelegate,
        fileManager: FileManager
    ) {
        upload = convertible
        self.fileManager = fileManager
        let made = Protected<Uploadable?>(nil)
        madeUploadable = made
        // A file made for the upload (a form written to disk) is removed once the request has ended, however it ended:
        // file I/O, which never runs on the event loop that may complete the request.
        let cleanup = RequestKind.Cleanup(
            blocks: { made.read { $0?.temporaryFile != nil } },
            run: { if let file = made.read({ $0?.temporaryFile }) { try? fileManager.removeItem(at: file) } })
        super.init(
            convertible: convertible, underlyingQueue: underlyingQueue, serializationQueue: serializationQueue,
            eventMonitor: eventMonitor, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume,
            context: context, delegate: delegate,
            // Encoding a multipart form can take a while, so an upload's body is always made on
            // `requestQueue`, never on the thread that resumes it.
            makesURLRequestOnRequestQueue: true,
            // An upload's body has nowhere to go in a file, so a `file:` URL is not read.
            kind: RequestKind(body: .madeByRequest, route: .http(loadsLocalFiles: false), cleanup: cleanup))
    }

    /// Why URLSession's task could not read the file at `url`, or `nil` when it is a readable file.
    static func unreadableFileError(_ url: URL, fileManager: FileManager) -> URLError? {
        var isDirectory: ObjCBool = false
        let (code, reason): (URLError.Code, String)
        if !fileManager.fileExists(atPath: url.path, isDirectory: &isDirectory) {
            (code, reason) = (.fileDoesNotExist, "does not exist")
        } else if isDirectory.boolValue {
            (code, reason) = (.fileIsDirectory, "is a folder")
        } else if !fileManager.isReadableFile(atPath: url.path) {
            (code, reason) = (.noPermissionsToReadFile, "cannot be read (permission denied)")
        } else {
            return nil
        }
        return URLError(
            code,
            userInfo: [
                NSLocalizedDescriptionKey: "The file to upload, \(url.path), \(reason).", NSFilePathErrorKey: url.path,
            ])
    }

    static func body(for uploadable: Uploadable, fileManager: FileManager) throws -> UploadBody {
        switch uploadable {
        case let .data(data):
            return UploadBody(source: .data(data), length: Int64(data.count))
        case let .file(url, _):
            let attributes = try fileManager.attributesOfItem(atPath: url.path)
            guard let size = (attributes[.size] as? NSNumber)?.int64Value else {
                throw AFError.multipartEncodingFailed(reason: .bodyPartFileSizeNotAvailable(at: url))
            }
            return UploadBody(source: .file(url), length: size)
        case let .stream(stream):
            return UploadBody(source: .stream(stream), length: nil)
        }
    }

}

extension UploadRequest: RequestBodyMaking {
    func makeBody() -> Result<MadeBody, AFError> {
        let uploadable: Uploadable
        let made: MadeBody
        do {
            uploadable = try upload.createUploadable()
            if case let .file(url, _) = uploadable,
                let failure = Self.unreadableFileError(url, fileManager: fileManager)
            {
                // URLSession makes an upload task from a file it cannot read, and the task fails once it runs: the
                // adapters, the monitors and the task see the request first, as Alamofire's do.
                made = .unreadable(failure)
            } else {
                made = .body(.fixed(try Self.body(for: uploadable, fileManager: fileManager)))
            }
        } catch {
            let failure = error.asAFError(or: .createUploadableFailed(error: error))
            eventMonitor?.request(self, didFailToCreateUploadableWithError: failure)
            return .failure(failure)
        }
        // Kept before the machine holds the body: a cleanup that runs from now on finds the file to remove.
        madeUploadable.write(uploadable)
        return .success(made)
    }

    func didMakeBody(requestAlreadyEnded: Bool) {
        guard let uploadable else { return }
        // Cancelled while the form was being encoded: the cleanup may have run before the file existed.
        if requestAlreadyEnded, let file = uploadable.temporaryFile { try? fileManager.removeItem(at: file) }
        // After `didCreateInitialURLRequest`, the order Alamofire's monitors see.
        eventMonitor?.request(self, didCreateUploadable: uploadable)
        // The stream is the body from here on: a monitor is handed it, as Alamofire's is when URLSession asks for it.
        if case let .stream(stream) = uploadable { eventMonitor?.request(self, didProvideInputStream: stream) }
    }
}

extension UploadRequest.Uploadable {
    /// A file made for the upload, to remove once the request has ended.
    var temporaryFile: URL? {
        if case let .file(url, shouldRemove: true) = self { return url }
        return nil
    }
}

extension UploadRequest.Uploadable: UploadableConvertible {
    /// The value itself.
    ///
    /// - Returns: The instance.
    public func createUploadable() throws -> UploadRequest.Uploadable { self }
}
