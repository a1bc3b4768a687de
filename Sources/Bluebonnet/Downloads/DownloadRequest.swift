import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request whose response body is written to a file as it arrives, never held whole in memory, then moved to a
/// destination of the caller's choosing.
public final class DownloadRequest: Request, @unchecked Sendable {
    // @unchecked: the download's own state is behind `Protected`; the rest is immutable.

    /// What to do with the destination when the downloaded file is moved there.
    public struct Options: OptionSet, Sendable {
        /// Creates the directories the destination needs.
        public static let createIntermediateDirectories = Options(rawValue: 1 << 0)
        /// Removes a file already at the destination.
        public static let removePreviousFile = Options(rawValue: 1 << 1)

        /// The raw bits.
        public let rawValue: Int

        /// Creates options from raw bits.
        ///
        /// - Parameter rawValue: The bits.
        public init(rawValue: Int) {
            self.rawValue = rawValue
        }
    }

    /// Picks where a finished download goes, from its temporary file and the response. It runs off the event loop,
    /// on a file I/O thread.
    public typealias Destination =
        @Sendable (_ temporaryURL: URL, _ response: HTTPURLResponse)
        -> (destinationURL: URL, options: Options)

    /// What a download is made from.
    public enum Downloadable: Sendable {
        /// A request to send.
        case request(any URLRequestConvertible)
        /// The `resumeData` of an earlier download, to continue where it stopped.
        case resumeData(Data)
    }

    /// A destination in `directory` of `domain`, named after the response's suggested file name (sanitised) or,
    /// without one, the last component of the request's URL.
    ///
    /// - Parameters:
    ///   - directory: The search path directory. `.documentDirectory` by default.
    ///   - domain:    The search path domain mask. `.userDomainMask` by default.
    ///   - options:   The options. None by default.
    /// - Returns: The `Destination`.
    public class func suggestedDownloadDestination(
        for directory: FileManager.SearchPathDirectory = .documentDirectory,
        in domain: FileManager.SearchPathDomainMask = .userDomainMask,
        options: Options = []
    ) -> Destination {
        { temporaryURL, response in
            let base =
                FileManager.default.urls(for: directory, in: domain).first ?? FileManager.default.temporaryDirectory
            let name = SuggestedFilename.name(for: response) ?? temporaryURL.lastPathComponent
            return (base.appendingPathComponent(name), options)
        }
    }

    /// Where a download goes when no destination is given: the temporary directory, under a name of its own (never
    /// the partial file's, which a resumed download may have chosen), as Alamofire does; the file is the caller's.
    static let defaultDestination: Destination = { _, _ in (defaultDestinationURL(), []) }

    /// A file of its own in the temporary directory.
    static func defaultDestinationURL() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("Bluebonnet_\(UUID().uuidString).download")
    }

    /// The request or resume data the download is made from.
    public let downloadable: Downloadable
    let destination: Destination
    let writer: DownloadFileWriter

    private struct DownloadState {
        /// The file's length once the body is written: what it starts with plus the announced length; -1 unknown.
        var expectedFileLength: Int64 = -1
        var fileURL: URL?
        var resumeData: Data?
        /// Set by `cancel(producingResumeData: true)`.
        var producesResumeDataOnCancel = false
        var resumeHandlers: [@Sendable (Data?) -> Void] = []
        /// The resumed download being continued, and whether the current body appends to it.
        var resuming: DownloadResumeData?
        /// Set when a `206` does not continue the partial file: its chunks are refused with this.
        var refusal: AFError?
        /// The partial file an earlier attempt kept for `resumeData`: a retry that does not continue it removes it.
        var keptPartial: URL?
        var response: HTTPURLResponse?
        /// `maximumFileSize(_:)`, and the bytes the file holds so far (a resumed partial's included).
        var maximumFileSize: Int64?
        var fileBytes: Int64 = 0
    }

    private let downloadState: Protected<DownloadState>

    /// Where the downloaded file was moved, once it was.
    public var fileURL: URL? { downloadState.write { $0.fileURL } }

    /// What `download(resumingWith:)` needs to continue this download: made when the download was cancelled with
    /// `cancel(producingResumeData: true)`, or cut short by the network, and the server named a validator (a strong
    /// `ETag` or a `Last-Modified`). A documented, versioned JSON document: see `DownloadResumeData`.
    public var resumeData: Data? { downloadState.write { $0.resumeData } }

    init(
        downloadable: Downloadable,
        underlyingQueue: DispatchQueue,
        serializationQueue: DispatchQueue,
        eventMonitor: (any EventMonitor)?,
        interceptor: (any RequestInterceptor)?,
        shouldAutomaticallyResume: Bool?,
        context: SessionContext,
        delegate: any RequestLifecycleDelegate,
        destination: @escaping Destination
    ) {
        self.downloadable = downloadable
        self.destination = destination
        let writer = DownloadFileWriter()
        let state = Protected(DownloadState())
        self.writer = writer
        downloadState = state
        super.init(
            underlyingQueue: underlyingQueue, serializationQueue: serializationQueue, eventMonitor: eventMonitor,
            interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, context: context,
            delegate: delegate, kind: Self.kind(of: downloadable, state: state),
            makeURLRequest: {
                switch downloadable {
                case let .request(convertible):
                    return try convertible.asURLRequest()
                case let .resumeData(data):
                    let resume = try DownloadResumeData(data: data)
                    writer.adopt(resume.temporaryFileURL, identity: resume.fileIdentity)
                    state.write { $0.resuming = resume }
                    return resume.resumingRequest()
                }
            })
        writer.observeWrites { [weak self] bytes, length in self?.didWriteToFile(bytes: bytes, length: length) }
    }

    /// Tells monitors of a chunk written to the file, as URLSession tells Alamofire's.
    private func didWriteToFile(bytes: Int, length: Int64) {
        guard sessionMonitoredEvents.contains(.other) else { return }
        let expected = downloadState.write { $0.expectedFileLength }
        tellSessionMonitor { monitor, urlSession, task in
            guard let task = task as? URLSessionDownloadTask else { return }
            monitor.urlSession(
                urlSession, downloadTask: task, didWriteData: Int64(bytes), totalBytesWritten: length,
                totalBytesExpectedToWrite: expected)
        }
    }

    // MARK: - Cancelling

    /// Cancels the download without producing resume data.
    ///
    /// - Returns: The instance.
    @discardableResult
    override public func cancel() -> Self {
        cancel(producingResumeData: false)
    }

    /// Cancels the download; with `true`, `resumeData` is made if the server allows resuming.
    ///
    /// - Parameter shouldProduceResumeData: Whether to make resume data.
    /// - Returns: The instance.
    @discardableResult
    public func cancel(producingResumeData shouldProduceResumeData: Bool) -> Self {
        downloadState.write { $0.producesResumeDataOnCancel = shouldProduceResumeData }
        super.cancel()
        return self
    }

    /// Cancels the download, producing resume data, and hands it to `completionHandler` once it is known.
    ///
    /// - Parameter completionHandler: Called on `.main` with the resume data, `nil` when none could be made.
    /// - Returns: The instance.
    @discardableResult
    public func cancel(byProducingResumeData completionHandler: @escaping @Sendable (_ data: Data?) -> Void) -> Self {
        downloadState.write {
            $0.producesResumeDataOnCancel = true
            $0.resumeHandlers.append(completionHandler)
        }
        super.cancel()
        return self
    }

    // MARK: - Limits

    /// Sets the largest file this download may write, to protect a disk from a server that sends without end.
    /// A response whose `Content-Length` says it would be larger is refused before a byte is written; one that grows
    /// past it fails when it does. Either way the request fails with
    /// `AFError.responseLimitExceeded(reason: .maximumResponseSizeExceeded(limit:))`, the partial file is removed
    /// and no resume data is made. A resumed download counts the bytes it already has. No limit by default, as in
    /// URLSession; set it before the request starts.
    ///
    /// - Parameter bytes: The limit in bytes; `nil` for none.
    /// - Returns: The instance.
    @discardableResult
    public func maximumFileSize(_ bytes: Int64?) -> Self {
        downloadState.write { $0.maximumFileSize = bytes }
        return self
    }

    // MARK: - The kind

    /// A download's kind: its `URLRequest`'s body; its response streamed to a file (the request is the consumer), over
    /// HTTP or from a `file:` URL. A resumed download's credentials belong to the origin the download started on, which
    /// the resume data records: its first URL may be another origin's (a CDN a redirect led to). Until the resume data
    /// is read, and for resume data that names no origin, nobody's. Once it has ended, the handlers of
    /// `cancel(byProducingResumeData:)` get the resume data, if any, on the main queue.
    private static func kind(of downloadable: Downloadable, state: Protected<DownloadState>) -> RequestKind {
        let credentials: RequestKind.Credentials
        switch downloadable {
        case .request:
            credentials = .firstRequestOrigin
        case .resumeData:
            credentials = .recorded { state.read { $0.resuming?.originURL.map { .origin($0) } ?? .nobody } }
        }
        let cleanup = RequestKind.Cleanup(
            blocks: { true },
            run: {
                let (handlers, data) = state.write { state -> ([@Sendable (Data?) -> Void], Data?) in
                    defer { state.resumeHandlers = [] }
                    return (state.resumeHandlers, state.resumeData)
                }
                for handler in handlers { DispatchQueue.main.async { handler(data) } }
            })
        return RequestKind(
            consumer: .streamed, route: .http(loadsLocalFiles: true), credentials: credentials, cleanup: cleanup)
    }

    /// The body of a response that was not followed (a redirect declined), or of a local file: written like any
    /// other, then moved.
    func responseBodyWasHeld(_ body: Data?) {
        guard let body else { return }
        guard let response else {
            // A local file has no HTTP response for the destination to judge: it goes where a download goes by
            // default, as in Alamofire.
            if LocalFileTransport.isLocalFile(lastRequest?.url) { keepLocalFile(body) }
            return
        }
        do {
            let temporary = FileManager.default.temporaryDirectory.appendingPathComponent(
                "Bluebonnet_\(UUID().uuidString).tmp")
            try body.write(to: temporary)
            if case let .failure(error) = moveToDestination(temporary, response: response) { recordError(error) }
        } catch {
            recordError(DownloadFileWriter.fileError(.cannotWriteToFile, underlying: error))
        }
    }

    private func keepLocalFile(_ body: Data) {
        Confinement.assertOffEventLoop("A download's local file")
        let destinationURL = Self.defaultDestinationURL()
        do {
            try body.write(to: destinationURL, options: .withoutOverwriting)
        } catch {
            recordError(DownloadFileWriter.fileError(.cannotWriteToFile, underlying: error))
            return
        }
        downloadState.write { $0.fileURL = destinationURL }
        eventMonitor?.request(self, didCreateDestinationURL: destinationURL)
    }

    private func recordError(_ error: AFError) {
        mutableState.write { $0.machine.recordFailure(error) }
    }

    /// Moves a finished body to the destination: where it went, or why it could not.
    private func moveToDestination(_ temporaryURL: URL, response: HTTPURLResponse) -> Result<URL, AFError> {
        Confinement.assertOffEventLoop("A download destination")
        let (destinationURL, options) = destination(temporaryURL, response)
        let fileManager = session?.delegate.fileManager ?? .default
        do {
            if options.contains(.createIntermediateDirectories) {
                try fileManager.createDirectory(
                    at: destinationURL.deletingLastPathComponent(), withIntermediateDirectories: true)
            }
            if options.contains(.removePreviousFile), fileManager.fileExists(atPath: destinationURL.path) {
                try fileManager.removeItem(at: destinationURL)
            }
            try fileManager.moveItem(at: temporaryURL, to: destinationURL)
        } catch {
            try? fileManager.removeItem(at: temporaryURL)
            return .failure(.downloadedFileMoveFailed(error: error, source: temporaryURL, destination: destinationURL))
        }
        downloadState.write { $0.fileURL = destinationURL }
        eventMonitor?.request(self, didCreateDestinationURL: destinationURL)
        return .success(destinationURL)
    }

    /// Keeps a partial body for `resumeData` when the server allows resuming, else removes it.
    private func keepForResume(_ written: DownloadFileWriter.Written) {
        let (response, resuming, produce) = downloadState.write {
            ($0.response, $0.resuming, $0.producesResumeDataOnCancel)
        }
        // A plain `cancel()` means the caller is done with the download; the network cutting it short does not.
        let wanted = !isCancelled || produce
        guard wanted, written.length > 0, let response, let request = lastRequest,
            let resume = DownloadResumeData(
                partial: written, response: response, request: request, resuming: resuming,
                firstURL: firstRequest?.url),
            let data = try? resume.encoded()
        else {
            try? FileManager.default.removeItem(at: written.url)
            return
        }
        downloadState.write {
            $0.resumeData = data
            $0.keptPartial = written.url
        }
    }
}

extension DownloadRequest: ResponseBodyConsumer {
    func responseBodyWillBegin(_ head: ResponseHead) {
        // A download keeps the response for its destination and its resume rules, which Alamofire's API hands one.
        let response = head.httpResponse
        let (offset, stale, resumed) = downloadState.write { state -> (Int64?, URL?, Bool) in
            state.response = response
            state.fileURL = nil
            state.resumeData = nil
            state.refusal = nil
            let kept = state.keptPartial
            state.keptPartial = nil
            // The resumed file is the writer's own; any other partial an earlier attempt kept is now nobody's.
            let stale = kept == state.resuming?.temporaryFileURL ? nil : kept
            var offset: Int64?
            var resumed = false
            if let resuming = state.resuming {
                switch resuming.continuation(with: response) {
                case .append:
                    offset = resuming.bytes
                    resumed = true
                case .restart: offset = nil
                case let .refuse(reason):
                    state.refusal = .sessionTaskFailed(error: reason)
                    offset = resuming.bytes
                }
            }
            state.fileBytes = offset ?? 0
            state.expectedFileLength = Self.fileLength(start: state.fileBytes, declared: response.expectedContentLength)
            // A declared length past the limit is refused before anything is written.
            if state.refusal == nil, let limit = state.maximumFileSize, state.expectedFileLength > limit {
                state.refusal = Self.fileTooLarge(limit)
            }
            return (offset, stale, resumed)
        }
        if let stale { Offload.run { try? FileManager.default.removeItem(at: stale) } }
        writer.begin(keeping: offset)
        // The server sent the rest of the file: URLSession tells Alamofire's monitors where the download goes on from.
        if resumed, let offset, sessionMonitoredEvents.contains(.other) {
            let expected = downloadState.write { $0.expectedFileLength }
            tellSessionMonitor { monitor, urlSession, task in
                guard let task = task as? URLSessionDownloadTask else { return }
                monitor.urlSession(
                    urlSession, downloadTask: task, didResumeAtOffset: offset, expectedTotalBytes: expected)
            }
        }
    }

    func consume(_ chunk: Data, readiness: TransportReadiness) {
        let refusal = downloadState.write { state -> AFError? in
            guard state.refusal == nil else { return state.refusal }
            state.fileBytes += Int64(chunk.count)
            if let limit = state.maximumFileSize, state.fileBytes > limit { state.refusal = Self.fileTooLarge(limit) }
            return state.refusal
        }
        if let refusal {
            readiness.fail(refusal)
            return
        }
        writer.write(chunk, readiness: readiness)
    }

    /// The file's length once a body of the server's `declared` length follows `start` bytes: -1 when the server did
    /// not say, `Int64.max` when the sum would overflow (a hostile `Content-Length`).
    static func fileLength(start: Int64, declared: Int64) -> Int64 {
        guard declared >= 0 else { return -1 }
        let (sum, overflow) = start.addingReportingOverflow(declared)
        return overflow ? .max : sum
    }

    private static func fileTooLarge(_ limit: Int64) -> AFError {
        .responseLimitExceeded(reason: .maximumResponseSizeExceeded(limit: limit))
    }

    func responseBodyDidEnd(error: AFError?, completion: @escaping @Sendable (AFError?) -> Void) {
        writer.end { [self] result in
            switch result {
            case let .failure(writeError):
                completion(writeError)
            case let .success(written):
                if let error {
                    // A file refused for its size is nobody's to resume.
                    if error.isResponseLimitError {
                        try? FileManager.default.removeItem(at: written.url)
                    } else {
                        keepForResume(written)
                    }
                    completion(nil)
                    return
                }
                guard let response = downloadState.write({ $0.response }) else {
                    try? FileManager.default.removeItem(at: written.url)
                    completion(nil)
                    return
                }
                let attempt = mutableState.read { $0.task }
                tellSessionMonitor(ended: attempt) { monitor, urlSession, task in
                    guard let task = task as? URLSessionDownloadTask else { return }
                    monitor.urlSession(urlSession, downloadTask: task, didFinishDownloadingTo: written.url)
                }
                let moved = moveToDestination(written.url, response: response)
                tellSessionMonitor(ended: attempt) { [self] monitor, _, task in
                    monitor.request(self, didFinishDownloadingUsing: task, with: moved)
                }
                if case let .failure(error) = moved { completion(error) } else { completion(nil) }
            }
        }
    }
}
