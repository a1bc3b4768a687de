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

    private struct UploadState {
        var uploadable: Uploadable?
        var body: UploadBody?
        var cleanedUp = false
        /// How many hops have been handed the body (redirects and retries included).
        var sends = 0
        /// Where the latest attempt's adapters chose a coding for the body.
        var codingChoice: UploadBodyCodingChoice?
        /// Why the file to upload cannot be read: the attempt fails with it once sent, as URLSession's task does.
        var unreadableFile: URLError?
    }

    private let uploadState = Protected(UploadState())

    /// The body, once it has been made (after the `URLRequest`).
    public var uploadable: Uploadable? { uploadState.read().uploadable }

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
        super.init(
            convertible: convertible, underlyingQueue: underlyingQueue, serializationQueue: serializationQueue,
            eventMonitor: eventMonitor, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume,
            context: context, delegate: delegate,
            // Encoding a multipart form can take a while, so an upload's body is always made on
            // `requestQueue`, never on the thread that resumes it.
            makesURLRequestOnRequestQueue: true)
    }

    override func didCreateInitialURLRequest(_ urlRequest: URLRequest) {
        // A retry makes the `URLRequest` again but sends the body made the first time: a form is not encoded twice,
        // and a file it was written to is not left behind.
        if uploadState.read().body != nil {
            super.didCreateInitialURLRequest(urlRequest)
            return
        }
        let uploadable: Uploadable
        let body: UploadBody
        var unreadableFile: URLError?
        do {
            uploadable = try upload.createUploadable()
            if case let .file(url, _) = uploadable,
                let failure = Self.unreadableFileError(url, fileManager: fileManager)
            {
                // URLSession makes an upload task from a file it cannot read, and the task fails once it runs: the
                // adapters, the monitors and the task see the request first, as Alamofire's do.
                body = UploadBody(source: .file(url), length: 0)
                unreadableFile = failure
            } else {
                body = try Self.body(for: uploadable, fileManager: fileManager)
            }
        } catch {
            let failure = error.asAFError(or: .createUploadableFailed(error: error))
            eventMonitor?.request(self, didFailToCreateUploadableWithError: failure)
            failBeforeExecuting(with: failure)
            return
        }
        // Cancelled while the form was being encoded: `cleanup()` has run already, so the file goes now.
        let alreadyCleanedUp = uploadState.write { state -> Bool in
            state.uploadable = uploadable
            state.body = body
            state.unreadableFile = unreadableFile
            return state.cleanedUp
        }
        if alreadyCleanedUp { removeTemporaryFile(of: uploadable) }
        super.didCreateInitialURLRequest(urlRequest)
        // After `didCreateInitialURLRequest`, the order Alamofire's monitors see.
        eventMonitor?.request(self, didCreateUploadable: uploadable)
        // The stream is the body from here on: a monitor is handed it, as Alamofire's is when URLSession asks for it.
        if case let .stream(stream) = uploadable { eventMonitor?.request(self, didProvideInputStream: stream) }
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

    /// An upload's body has nowhere to go in a file.
    override var loadsLocalFiles: Bool { false }

    override var canResendBody: Bool { uploadState.read { $0.body?.isReplayable ?? true } }

    override var sendsUploadBody: Bool { uploadState.read { $0.body != nil } }

    override func uploadBody(for urlRequest: URLRequest, hop: Int) throws -> UploadBody? {
        let (plainBody, sends, coding, unreadableFile) = uploadState.write {
            state -> (UploadBody?, Int, UploadBodyCoding?, URLError?) in
            state.sends += 1
            return (state.body, state.sends, state.codingChoice?.chosen, state.unreadableFile)
        }
        if let unreadableFile { throw AFError.sessionTaskFailed(error: unreadableFile) }
        guard let plainBody else { return nil }
        let body = coding.map(plainBody.coded(with:)) ?? plainBody
        if hop > 0 {
            // A redirect that turned the request into a GET dropped the body; 307 and 308 keep method and body.
            let firstMethod = firstRequest?.httpMethod?.uppercased() ?? "GET"
            guard urlRequest.httpMethod?.uppercased() ?? "GET" == firstMethod, firstMethod != "GET" else { return nil }
        }
        // A stream can be read once: a redirect or a retry that needs it again fails clearly rather than sending an
        // empty body.
        guard sends == 1 || body.isReplayable else {
            throw AFError.sessionTaskFailed(error: URLError(.requestBodyStreamExhausted))
        }
        return body
    }

    override func makeUploadBodyCodingChoice() -> UploadBodyCodingChoice? {
        uploadState.write { state -> UploadBodyCodingChoice? in
            guard let body = state.body else { return nil }
            let bytes: Data? = if case let .data(data) = body.source { data } else { nil }
            let choice = UploadBodyCodingChoice(bytesInMemory: bytes)
            state.codingChoice = choice
            return choice
        }
    }

    override func cleanup() {
        let uploadable = uploadState.write { state -> Uploadable? in
            state.cleanedUp = true
            return state.uploadable
        }
        if let uploadable { removeTemporaryFile(of: uploadable) }
    }

    private func removeTemporaryFile(of uploadable: Uploadable) {
        guard case let .file(url, shouldRemove: true) = uploadable else { return }
        try? fileManager.removeItem(at: url)
    }

    /// A file to remove is file I/O, which never runs on the event loop that may complete the request.
    override var cleanupBlocks: Bool {
        if case .file(_, shouldRemove: true)? = uploadState.read().uploadable { return true }
        return false
    }
}

extension UploadRequest.Uploadable: UploadableConvertible {
    /// The value itself.
    ///
    /// - Returns: The instance.
    public func createUploadable() throws -> UploadRequest.Uploadable { self }
}
