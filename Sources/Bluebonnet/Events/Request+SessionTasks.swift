import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// An attempt's `URLSessionTask` costs about 8,000 instructions and 16 allocations to make (FoundationNetworking's
// initializer makes a `Progress`, a lock and two dispatch queues), so it is made only when someone asks: a monitor
// given a task event, a read of `task` or `tasks`, an `onURLSessionTaskCreation(on:perform:)` handler. Alamofire's
// notifications need the request alone and never make one.

extension Request {
    /// The `URLSessionTask` of one attempt, made on first use; later uses get the same object.
    func sessionTask(for task: RequestTask) -> URLSessionTask {
        if let made = mutableState.read({ $0.sessionTasks[task.attempt] }) { return made }
        // Made outside the lock: FoundationNetworking's initializer may read the properties the task overrides.
        let source = AttemptTaskSource(task: task, request: self)
        let made: URLSessionTask =
            switch self {
            case is DownloadRequest: BluebonnetDownloadTask(source)
            case is UploadRequest: BluebonnetUploadTask(source)
            default: BluebonnetDataTask(source)
            }
        return mutableState.write { state in
            if let existing = state.sessionTasks[task.attempt] { return existing }
            state.sessionTasks[task.attempt] = made
            return made
        }
    }

    /// The attempts made so far, as their tasks: the current attempt's when it has one, and a new one otherwise.
    private var attemptTasks: [RequestTask] {
        mutableState.read { state in
            (0..<state.metrics.attemptCount(current: state.task, announced: state.attemptAnnounced)).map { attempt in
                if let current = state.task, current.attempt == attempt { return current }
                return RequestTask(attempt: attempt, originalRequest: state.metrics.originalRequest(ofAttempt: attempt))
            }
        }
    }

    /// One `URLSessionTask` per attempt made so far, in order: the first, then one per retry. Each stands for its
    /// attempt (redirects included, as a `URLSessionTask` follows them): its properties are read from the request,
    /// and `cancel()`, `suspend()` and `resume()` act on the request.
    public var tasks: [URLSessionTask] { attemptTasks.map(sessionTask(for:)) }
    /// The first attempt's task.
    public var firstTask: URLSessionTask? { attemptTasks.first.map(sessionTask(for:)) }
    /// The last attempt's task.
    public var lastTask: URLSessionTask? { attemptTasks.last.map(sessionTask(for:)) }
    /// The current attempt's task: `lastTask`. `nil` until the request's first attempt begins.
    public var task: URLSessionTask? { lastTask }

    /// Sets a closure to be called with each attempt's `URLSessionTask` as it begins (once more per retry), and at once
    /// with the current attempt's if there is one. Only the last closure set is kept, as in Alamofire.
    ///
    /// - Parameters:
    ///   - queue:   The queue the handler runs on. `.main` by default.
    ///   - handler: The closure.
    /// - Returns: The instance.
    @discardableResult
    public func onURLSessionTaskCreation(
        on queue: DispatchQueue = .main, perform handler: @escaping @Sendable (URLSessionTask) -> Void
    ) -> Self {
        mutableState.write { $0.taskCreationHandler = (queue, handler) }
        // The current attempt's, made for the handler when nothing made it yet.
        if let current = attemptTasks.last {
            let task = sessionTask(for: current)
            queue.async { handler(task) }
        }
        return self
    }

    /// Hands a new attempt's task to the `onURLSessionTaskCreation(on:perform:)` handler, if one is set.
    func tellTaskCreationHandler(_ task: RequestTask) {
        guard let (queue, handler) = mutableState.read({ $0.taskCreationHandler }) else { return }
        let made = sessionTask(for: task)
        queue.async { handler(made) }
    }
}
