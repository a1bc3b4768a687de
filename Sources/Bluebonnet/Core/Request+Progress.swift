import Foundation

/// The byte counts behind a request's upload and download `Progress`. The counts are always kept; the `Progress`
/// objects are made only when someone asks for them, so a request nobody watches pays for two integers.
struct ProgressTracking {
    enum Kind { case upload, download }

    var uploadCompleted: Int64 = 0
    /// The body's length; -1 while a streamed body of unknown length is being sent.
    var uploadTotal: Int64 = 0
    var downloadCompleted: Int64 = 0
    /// The response's length; -1 when the server did not announce it (or the body is decoded).
    var downloadTotal: Int64 = 0
    var upload: Progress?
    var download: Progress?
    var uploadHandlers: [(queue: DispatchQueue, handler: Request.ProgressHandler)] = []
    var downloadHandlers: [(queue: DispatchQueue, handler: Request.ProgressHandler)] = []

    /// The `Progress` of `kind`, made on first use, brought up to date with the counts.
    mutating func progress(_ kind: Kind) -> Progress {
        switch kind {
        case .upload:
            let progress = upload ?? Progress(totalUnitCount: 0)
            upload = progress
            progress.totalUnitCount = uploadTotal
            progress.completedUnitCount = uploadCompleted
            return progress
        case .download:
            let progress = download ?? Progress(totalUnitCount: 0)
            download = progress
            progress.totalUnitCount = downloadTotal
            progress.completedUnitCount = downloadCompleted
            return progress
        }
    }

    /// Adds a handler; from now on the `Progress` of `kind` exists and is kept up to date.
    mutating func addHandler(_ kind: Kind, queue: DispatchQueue, closure: @escaping Request.ProgressHandler) {
        switch kind {
        case .upload: uploadHandlers.append((queue, closure))
        case .download: downloadHandlers.append((queue, closure))
        }
        _ = progress(kind)
    }

    func isObserved(_ kind: Kind) -> Bool {
        switch kind {
        case .upload: upload != nil
        case .download: download != nil
        }
    }

    func handlers(_ kind: Kind) -> [(queue: DispatchQueue, handler: Request.ProgressHandler)] {
        switch kind {
        case .upload: uploadHandlers
        case .download: downloadHandlers
        }
    }
}

extension Request {
    /// A closure told of a request's upload or download progress.
    public typealias ProgressHandler = @Sendable (_ progress: Progress) -> Void

    /// How much of the request body has been sent. `totalUnitCount` is the body's length (-1 while a stream of
    /// unknown length is sent) and `completedUnitCount` reaches it once the whole body is out.
    public var uploadProgress: Progress {
        mutableState.write { $0.progress.progress(.upload) }
    }

    /// How much of the response body has arrived. The total is the announced `Content-Length` (-1 when there is
    /// none, or when the body is decoded); once the request completes it equals the bytes received.
    public var downloadProgress: Progress {
        mutableState.write { $0.progress.progress(.download) }
    }

    /// Calls `closure` each time more of the request body has been sent.
    ///
    /// - Parameters:
    ///   - queue:   The queue the closure runs on. `.main` by default.
    ///   - closure: The closure, given the request's `uploadProgress`.
    /// - Returns: The instance.
    @discardableResult
    public func uploadProgress(queue: DispatchQueue = .main, closure: @escaping ProgressHandler) -> Self {
        mutableState.write { $0.progress.addHandler(.upload, queue: queue, closure: closure) }
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
        mutableState.write { $0.progress.addHandler(.download, queue: queue, closure: closure) }
        return self
    }

    /// Changes the counts, then brings the `Progress` up to date and tells its handlers, if anyone is watching.
    func updateProgress(_ kind: ProgressTracking.Kind, _ change: (inout ProgressTracking) -> Void) {
        let update = mutableState.write { state -> (Progress, [(queue: DispatchQueue, handler: ProgressHandler)])? in
            change(&state.progress)
            guard state.progress.isObserved(kind) else { return nil }
            return (state.progress.progress(kind), state.progress.handlers(kind))
        }
        guard let (progress, handlers) = update else { return }
        for (queue, handler) in handlers {
            queue.async { handler(progress) }
        }
    }

    /// A hop with a body begins: the upload counts start over at its length (-1 when unknown).
    func didStartSendingBody(length: Int64?) {
        updateProgress(.upload) { progress in
            progress.uploadTotal = length ?? -1
            progress.uploadCompleted = 0
        }
    }
}
