import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One attempt of a request on the wire, redirects included, as the request tracks it: a value, made only while
/// someone watches the request's tasks. The `URLSessionTask` that stands for it is made from it on first use
/// (`Request.sessionTask(for:)`).
struct RequestTask: Sendable, Hashable {
    /// An identifier unique among the tasks of this process.
    let taskIdentifier: Int
    /// Which attempt: 0 for the first, one more per retry.
    let attempt: Int
    /// The `URLRequest` the attempt began with (after adaptation).
    let originalRequest: URLRequest?

    private static let counter = Atomic<Int>(0)

    /// The next task identifier.
    static func nextIdentifier() -> Int { counter.wrappingAdd(1, ordering: .relaxed).newValue }

    init(attempt: Int, originalRequest: URLRequest?, taskIdentifier: Int = RequestTask.nextIdentifier()) {
        self.taskIdentifier = taskIdentifier
        self.attempt = attempt
        self.originalRequest = originalRequest
    }

    static func == (lhs: RequestTask, rhs: RequestTask) -> Bool { lhs.taskIdentifier == rhs.taskIdentifier }

    func hash(into hasher: inout Hasher) { hasher.combine(taskIdentifier) }
}

/// What an attempt's `URLSessionTask` reports, read from its request each time: the live request while the attempt
/// runs, what was measured of it once it ended. The task keeps no copy of its own, so it never disagrees with the
/// request.
struct AttemptTaskSource: Sendable {
    let task: RequestTask
    weak var request: Request?

    /// A reading of the attempt.
    struct Reading {
        var state: URLSessionTask.State = .completed
        var currentRequest: URLRequest?
        var head: ResponseHead?
        var error: AFError?
        var received: Int64 = 0
        var sent: Int64 = 0
        var expectedToReceive: Int64 = -1
        var expectedToSend: Int64 = 0
    }

    func read() -> Reading {
        guard let request else { return Reading(currentRequest: task.originalRequest) }
        return request.mutableState.read { state in
            var reading = Reading()
            if let ended = state.metrics.endedAttempt(task.attempt) {
                let last = ended.transactionMetrics.last
                reading.currentRequest = last?.request ?? task.originalRequest
                reading.head = last?.head
                reading.error = ended.error
                reading.received = last?.countOfResponseBodyBytesReceived ?? 0
                reading.sent = last?.countOfRequestBodyBytesSent ?? 0
                reading.expectedToReceive = last?.head?.declaredContentLength ?? -1
                reading.expectedToSend = reading.sent
                return reading
            }
            switch state.machine.control {
            case _ where state.machine.isComplete: reading.state = .completed
            case .initialized, .suspended: reading.state = .suspended
            case .resumed: reading.state = .running
            case .cancelled: reading.state = .canceling
            }
            reading.currentRequest = state.requests.last ?? task.originalRequest
            reading.head = state.head
            reading.error = state.error
            reading.received = state.progress.download.completed
            reading.sent = state.progress.upload.completed
            reading.expectedToReceive = state.progress.download.total
            reading.expectedToSend = max(0, state.progress.upload.total)
            return reading
        }
    }
}
