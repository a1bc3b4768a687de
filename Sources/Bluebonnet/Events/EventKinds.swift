/// Groups of events, so a composite forwards to a monitor only the events it handles. Every dispatch to a monitor's
/// queue costs a closure and a thread wake-up; `AlamofireNotifications` handles 4 of the 12 or so events of a request.
struct EventKinds: OptionSet, Sendable {
    let rawValue: UInt8

    /// `requestDidResume`, `requestDidSuspend`, `requestDidCancel`, `requestDidFinish`.
    static let requestLifecycle = EventKinds(rawValue: 1 << 0)
    /// `didResumeTask`, `didSuspendTask`, `didCancelTask`, `didCompleteTask` (and `didCompleteWithError`).
    static let taskLifecycle = EventKinds(rawValue: 1 << 1)
    /// `didCreateTask`.
    static let taskCreation = EventKinds(rawValue: 1 << 2)
    /// `didGatherTaskMetrics`.
    static let metrics = EventKinds(rawValue: 1 << 3)
    /// `didParseResponse`.
    static let parsing = EventKinds(rawValue: 1 << 4)
    /// Every other event: creation, adaptation, retry, validation, uploadables.
    static let other = EventKinds(rawValue: 1 << 5)
    /// `urlSession(_:dataTask:didReceive:)` with body bytes: one event per piece of a stream's body.
    static let bodyData = EventKinds(rawValue: 1 << 6)

    static let all: EventKinds = [
        .requestLifecycle, .taskLifecycle, .taskCreation, .metrics, .parsing, .other, .bodyData,
    ]
    /// The events about tasks, for which a request makes a `RequestTask`.
    static let tasks: EventKinds = [.taskLifecycle, .taskCreation, .metrics, .other, .bodyData]

    /// The events `monitor` handles: all of them unless it is one of Bluebonnet's monitors that says otherwise.
    static func handled(by monitor: (any EventMonitor)?) -> EventKinds {
        switch monitor {
        case nil: []
        case let selective as any SelectiveEventMonitor: selective.handledEvents
        default: .all
        }
    }
}

/// A monitor of Bluebonnet's own that handles only some events.
protocol SelectiveEventMonitor: EventMonitor {
    /// The events it handles; the others are not dispatched to it.
    var handledEvents: EventKinds { get }
}

/// A monitor of Bluebonnet's own that is told of task events without the attempt's `URLSessionTask` (Alamofire's
/// notifications name the request alone), so that none is made for it. Its mailbox finds it out once, when it is
/// made, rather than at every event.
protocol TasklessTaskEventMonitor: SelectiveEventMonitor {
    /// Tells the monitor of an event of the request's task.
    func taskEvent(_ event: TaskEvent, of request: Request)
}
