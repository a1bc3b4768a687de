import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An event of an attempt's task. It travels to each monitor's queue with the attempt (`RequestTask`), and the
/// attempt's `URLSessionTask` is made only there, for a monitor that is handed it: Alamofire's notifications need the
/// request alone.
enum TaskEvent: Sendable {
    /// `request(_:didCreateTask:)`.
    case create
    /// `request(_:didResumeTask:)`.
    case resume
    /// `request(_:didSuspendTask:)`.
    case suspend
    /// `request(_:didCancelTask:)`.
    case cancel
    /// `request(_:didCompleteTask:with:)` (and `request(_:didFailTask:earlyWithError:)` before it for a refused server).
    case complete

    /// The group of events it belongs to.
    var kind: EventKinds { self == .create ? .taskCreation : .taskLifecycle }

    /// Tells `monitor` of the event, on the monitor's queue, with the attempt's `URLSessionTask` (made here if it was
    /// not yet).
    func deliver(to monitor: any EventMonitor, request: Request, task: RequestTask, error: AFError?) {
        let sessionTask = request.sessionTask(for: task)
        switch self {
        case .create: monitor.request(request, didCreateTask: sessionTask)
        case .resume: monitor.request(request, didResumeTask: sessionTask)
        case .suspend: monitor.request(request, didSuspendTask: sessionTask)
        case .cancel: monitor.request(request, didCancelTask: sessionTask)
        case .complete:
            // A server whose identity was refused fails the task early, as Alamofire's challenge handling reports.
            if let error, case .serverTrustEvaluationFailed = error {
                monitor.request(request, didFailTask: sessionTask, earlyWithError: error)
            }
            monitor.request(request, didCompleteTask: sessionTask, with: error)
        }
    }
}

extension Request {
    /// Tells the request's monitor of an event of the attempt's task.
    func tellTask(_ event: TaskEvent, _ task: RequestTask, error: AFError? = nil) {
        guard let eventMonitor else { return }
        if let composite = eventMonitor as? CompositeEventMonitor {
            composite.performEvent(event, of: self, task: task, error: error)
        } else {
            if let taskless = eventMonitor as? any TasklessTaskEventMonitor {
                taskless.taskEvent(event, of: self)
            } else {
                event.deliver(to: eventMonitor, request: self, task: task, error: error)
            }
        }
    }
}

extension Request {
    /// Tells a monitor that a redirect to `next` is about to be weighed by the redirect handler, as URLSession tells
    /// Alamofire's delegate before asking its handler.
    func tellWillRedirect(_ head: ResponseHead, to next: URLRequest) {
        tellSessionMonitor {
            $0.urlSession($1, task: $2, willPerformHTTPRedirection: head.httpResponse, newRequest: next)
        }
    }

    /// Tells a monitor that the request's `InputStream` body would have to be sent again, which it cannot be.
    func tellNeedsNewBodyStream() {
        tellSessionMonitor { $0.urlSession($1, taskNeedsNewBodyStream: $2) }
    }

    /// Tells a monitor of the head of the response the request delivers, when its task is a data task.
    func tellDidReceiveResponse(_ head: ResponseHead) {
        tellSessionMonitor { monitor, urlSession, task in
            guard let dataTask = task as? URLSessionDataTask else { return }
            monitor.urlSession(urlSession, dataTask: dataTask, didReceive: head.httpResponse)
        }
    }

    /// Tells a monitor of body bytes the request received, when its task is a data task.
    ///
    /// - Parameters:
    ///   - data:  The bytes.
    ///   - ended: The attempt's task, when the attempt has just ended (the request no longer holds it).
    func tellDidReceiveData(_ data: Data, ended: RequestTask? = nil) {
        guard sessionMonitoredEvents.contains(.other) else { return }
        tellSessionMonitor(.bodyData, ended: ended) { monitor, urlSession, task in
            guard let dataTask = task as? URLSessionDataTask else { return }
            monitor.urlSession(urlSession, dataTask: dataTask, didReceive: data)
        }
    }

    /// Tells a monitor of a piece of the body sent.
    func tellDidSendBodyData(_ count: Int) {
        guard sessionMonitoredEvents.contains(.other) else { return }
        let (sent, total) = mutableState.read { ($0.progress.upload.completed, $0.progress.upload.total) }
        tellSessionMonitor {
            $0.urlSession(
                $1, task: $2, didSendBodyData: Int64(count), totalBytesSent: sent, totalBytesExpectedToSend: total)
        }
    }

    /// Tells a monitor that `proposed` may be stored in the cache, when the request's task is a data task.
    func tellWillCacheResponse(_ proposed: CachedURLResponse) {
        tellSessionMonitor { monitor, urlSession, task in
            guard let dataTask = task as? URLSessionDataTask else { return }
            monitor.urlSession(urlSession, dataTask: dataTask, willCacheResponse: proposed)
        }
    }
}
