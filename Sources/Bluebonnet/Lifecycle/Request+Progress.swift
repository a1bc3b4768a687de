import Foundation

/// The byte counts behind a request's upload and download `Progress`. The counts are always kept; the `Progress`
/// objects are made only when someone asks for them, so a request nobody watches pays for four integers.
struct ProgressTracking {
    enum Kind {
        case upload, download

        var track: WritableKeyPath<ProgressTracking, Track> {
            switch self {
            case .upload: \.upload
            case .download: \.download
            }
        }
    }

    /// One direction's counts, its `Progress` once made, and its handlers.
    struct Track {
        var completed: Int64 = 0
        /// The body's length; -1 while it is unknown (a stream, a response without `Content-Length`, a decoded body).
        var total: Int64 = 0
        var progress: Progress?
        var handlers: [(queue: DispatchQueue, handler: Request.ProgressHandler)] = []

        /// The `Progress`, made on first use, brought up to date with the counts.
        mutating func current() -> Progress {
            let made = progress ?? Progress(totalUnitCount: 0)
            progress = made
            made.totalUnitCount = total
            made.completedUnitCount = completed
            return made
        }
    }

    var upload = Track()
    var download = Track()

    /// Whether a progress handler is registered: its calls are queued as the bytes move, so the response handlers
    /// run on `serializationQueue`, behind them when both go through the session's root queue, as in Alamofire.
    var hasHandlers: Bool { !upload.handlers.isEmpty || !download.handlers.isEmpty }
}

extension Request {
    /// A closure told of a request's upload or download progress.
    public typealias ProgressHandler = @Sendable (_ progress: Progress) -> Void

    /// How much of the request body has been sent. `totalUnitCount` is the body's length (-1 while a stream of
    /// unknown length is sent) and `completedUnitCount` reaches it once the whole body is out.
    public var uploadProgress: Progress {
        mutableState.write { $0.progress.upload.current() }
    }

    /// How much of the response body has arrived. The total is the announced `Content-Length` (-1 when there is
    /// none, or when the body is decoded); once the request completes it equals the bytes received.
    public var downloadProgress: Progress {
        mutableState.write { $0.progress.download.current() }
    }

    /// Calls `closure` each time more of the request body has been sent.
    ///
    /// - Parameters:
    ///   - queue:   The queue the closure runs on. `.main` by default.
    ///   - closure: The closure, given the request's `uploadProgress`.
    /// - Returns: The instance.
    @discardableResult
    public func uploadProgress(queue: DispatchQueue = .main, closure: @escaping ProgressHandler) -> Self {
        addProgressHandler(.upload, queue: queue, closure: closure)
        return self
    }

    /// Calls `closure` each time more of the response body has arrived.
    ///
    /// - Parameters:
    ///   - queue:   The queue the closure runs on. `.main` by default.
    ///   - closure: The closure, given the request's `downloadProgress`.
    /// - Returns: The instance.
    @discardableResult
    public func downloadProgress(queue: DispatchQueue = .main, closure: @escaping ProgressHandler) -> Self {
        addProgressHandler(.download, queue: queue, closure: closure)
        return self
    }

    /// The upload progress handler added last, with its queue; `nil` when none was added. (Alamofire keeps one
    /// handler and replaces it; every handler added here is called.)
    public var uploadProgressHandler: (handler: ProgressHandler, queue: DispatchQueue)? {
        mutableState.read { $0.progress.upload.handlers.last.map { ($0.handler, $0.queue) } }
    }

    /// The download progress handler added last, with its queue; `nil` when none was added.
    public var downloadProgressHandler: (handler: ProgressHandler, queue: DispatchQueue)? {
        mutableState.read { $0.progress.download.handlers.last.map { ($0.handler, $0.queue) } }
    }

    /// Adds a handler; from now on the `Progress` of `kind` exists and is kept up to date.
    private func addProgressHandler(
        _ kind: ProgressTracking.Kind, queue: DispatchQueue, closure: @escaping ProgressHandler
    ) {
        mutableState.write { state in
            state.progress[keyPath: kind.track].handlers.append((queue, closure))
            _ = state.progress[keyPath: kind.track].current()
        }
    }

    /// Changes the counts (and what else of the state goes with them, under the same lock), then brings the
    /// `Progress` of `kind` up to date and tells its handlers, if anyone is watching.
    func updateProgress(_ kind: ProgressTracking.Kind, _ change: (inout MutableState) -> Void) {
        let update = mutableState.write { state -> (Progress, [(queue: DispatchQueue, handler: ProgressHandler)])? in
            change(&state)
            guard state.progress[keyPath: kind.track].progress != nil else { return nil }
            return (state.progress[keyPath: kind.track].current(), state.progress[keyPath: kind.track].handlers)
        }
        guard let (progress, handlers) = update else { return }
        for (queue, handler) in handlers {
            queue.async { handler(progress) }
        }
    }

    /// A hop with a body begins: the upload counts start over at its length (-1 when unknown).
    func didStartSendingBody(length: Int64?) {
        updateProgress(.upload) { state in
            state.progress.upload.total = length ?? -1
            state.progress.upload.completed = 0
        }
    }
}
