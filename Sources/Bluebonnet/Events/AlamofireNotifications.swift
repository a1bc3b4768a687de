import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Request {
    /// Posted when a `Request` is resumed. The `Notification` carries the `Request`.
    public static let didResumeNotification = Notification.Name(
        rawValue: "org.alamofire.notification.name.request.didResume")
    /// Posted when a `Request` is suspended. The `Notification` carries the `Request`.
    public static let didSuspendNotification = Notification.Name(
        rawValue: "org.alamofire.notification.name.request.didSuspend")
    /// Posted when a `Request` is cancelled. The `Notification` carries the `Request`.
    public static let didCancelNotification = Notification.Name(
        rawValue: "org.alamofire.notification.name.request.didCancel")
    /// Posted when a `Request` finished. The `Notification` carries the `Request`.
    public static let didFinishNotification = Notification.Name(
        rawValue: "org.alamofire.notification.name.request.didFinish")

    /// Posted when a request's task runs (made, or resumed after a suspend). The `Notification` carries the `Request`.
    public static let didResumeTaskNotification = Notification.Name(
        rawValue: "org.alamofire.notification.name.request.didResumeTask")
    /// Posted when a request's task is suspended. The `Notification` carries the `Request`.
    public static let didSuspendTaskNotification = Notification.Name(
        rawValue: "org.alamofire.notification.name.request.didSuspendTask")
    /// Posted when a request's task is cancelled. The `Notification` carries the `Request`.
    public static let didCancelTaskNotification = Notification.Name(
        rawValue: "org.alamofire.notification.name.request.didCancelTask")
    /// Posted when a request's task completed. The `Notification` carries the `Request`.
    public static let didCompleteTaskNotification = Notification.Name(
        rawValue: "org.alamofire.notification.name.request.didCompleteTask")
}

extension Notification {
    /// The `Request` a Bluebonnet notification carries, `nil` for any other notification.
    public var request: Request? {
        userInfo?[Self.requestKey] as? Request
    }

    /// The `userInfo` key of the `Request` (Alamofire's, so observers written for it read ours).
    static let requestKey = "org.alamofire.notification.key.request"
}

/// The `EventMonitor` that posts Alamofire's notifications to `NotificationCenter.default`. `AF` includes it, as in
/// Alamofire; add it to your own `Session`'s monitors to get the notifications from its requests.
///
/// Notifications are posted from `queue`, never from a NIO event loop, so an observer may block without stalling
/// other requests' I/O. They are posted in order, and together: an event waits at most a millisecond for others, so
/// that the notifications of many requests cost one wake-up of `queue`.
public final class AlamofireNotifications: EventMonitor, TasklessTaskEventMonitor, BatchingEventMonitor {
    /// The queue notifications are posted from: a serial queue of the monitor's own, not `.main`, which a server
    /// process may never drain.
    public let queue: DispatchQueue

    /// Creates the monitor.
    ///
    /// - Parameter queue: The queue notifications are posted from. A serial queue of its own by default.
    public init(queue: DispatchQueue = DispatchQueue(label: "org.bluebonnet.notifications")) {
        self.queue = queue
    }

    /// The events it posts for; a composite dispatches no other to it.
    let handledEvents: EventKinds = [.requestLifecycle, .taskLifecycle]

    /// Notifications wait at most a millisecond to be posted together: the events of many requests then cost one
    /// wake-up of `queue` rather than two a request (Alamofire posts them from the main queue, whenever it next runs).
    let batchingWindow: DispatchTimeInterval = .milliseconds(1)

    /// A request's `userInfo`.
    private struct UserInfo: @unchecked Sendable {
        // @unchecked: the dictionary is never mutated, and holds only the request (`Sendable`) under a `String` key.
        let id: ObjectIdentifier
        let userInfo: [AnyHashable: Any]
    }

    /// The `userInfo` of the request whose events came last: a request's 4 notifications usually come in a row, and
    /// share one dictionary. Dropped with the request's last notification, so it never keeps a request alive for long.
    private let lastUserInfo = Protected<UserInfo?>(nil)

    private func post(_ name: Notification.Name, _ request: Request, last: Bool = false) {
        let id = ObjectIdentifier(request)
        let cached = lastUserInfo.write { cached -> UserInfo? in
            guard let entry = cached, entry.id == id else { return nil }
            if last { cached = nil }
            return entry
        }
        let userInfo = cached ?? UserInfo(id: id, userInfo: [Notification.requestKey: request])
        if cached == nil, !last { lastUserInfo.write { $0 = userInfo } }
        NotificationCenter.default.post(name: name, object: nil, userInfo: userInfo.userInfo)
    }

    /// Posts `Request.didResumeNotification`.
    public func requestDidResume(_ request: Request) { post(Request.didResumeNotification, request) }
    /// Posts `Request.didSuspendNotification`.
    public func requestDidSuspend(_ request: Request) { post(Request.didSuspendNotification, request) }
    /// Posts `Request.didCancelNotification`.
    public func requestDidCancel(_ request: Request) { post(Request.didCancelNotification, request) }
    /// Posts `Request.didFinishNotification`.
    public func requestDidFinish(_ request: Request) { post(Request.didFinishNotification, request, last: true) }
    /// Posts `Request.didResumeTaskNotification`.
    public func request(_ request: Request, didResumeTask task: URLSessionTask) { taskEvent(.resume, of: request) }
    /// Posts `Request.didSuspendTaskNotification`.
    public func request(_ request: Request, didSuspendTask task: URLSessionTask) { taskEvent(.suspend, of: request) }
    /// Posts `Request.didCancelTaskNotification`.
    public func request(_ request: Request, didCancelTask task: URLSessionTask) { taskEvent(.cancel, of: request) }
    /// Posts `Request.didCompleteTaskNotification`.
    public func request(_ request: Request, didCompleteTask task: URLSessionTask, with error: AFError?) {
        taskEvent(.complete, of: request)
    }

    /// Posts the notification of a task event, which names the request alone: the task is never made for it.
    func taskEvent(_ event: TaskEvent, of request: Request) {
        switch event {
        case .create: break
        case .resume: post(Request.didResumeTaskNotification, request)
        case .suspend: post(Request.didSuspendTaskNotification, request)
        case .cancel: post(Request.didCancelTaskNotification, request)
        case .complete: post(Request.didCompleteTaskNotification, request)
        }
    }
}
