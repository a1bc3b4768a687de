import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Forwards each event to several monitors, each on its own queue.
public final class CompositeEventMonitor: EventMonitor, SelectiveEventMonitor {
    /// The queue the composite itself reports on (it forwards without waiting).
    public let queue = DispatchQueue(label: "org.bluebonnet.compositeEventMonitor")
    /// The monitors, in order.
    public let monitors: [any EventMonitor]

    /// Creates a composite.
    ///
    /// - Parameter monitors: The monitors, in order.
    public init(monitors: [any EventMonitor]) {
        self.monitors = monitors
        kinds = monitors.map(EventKinds.handled(by:))
        handledEvents = kinds.reduce([]) { $0.union($1) }
        tasklessMonitors = monitors.map { $0 as? any TasklessTaskEventMonitor }
        var mailboxes: [EventMailbox] = []
        for monitor in monitors { mailboxes.append(EventMailbox.shared(for: monitor, among: mailboxes)) }
        self.mailboxes = mailboxes
    }

    private init(
        monitors: [any EventMonitor], kinds: [EventKinds], mailboxes: [EventMailbox],
        tasklessMonitors: [(any TasklessTaskEventMonitor)?]
    ) {
        self.monitors = monitors
        self.kinds = kinds
        handledEvents = kinds.reduce([]) { $0.union($1) }
        self.mailboxes = mailboxes
        self.tasklessMonitors = tasklessMonitors
    }

    /// The composite with `monitor` after these: the monitors already here keep their mailboxes, so what they were
    /// told before reaches them before what they are told through the new composite, and the new monitor shares the
    /// mailbox of one on its queue, so that each event reaches them in their order.
    func adding(_ monitor: any EventMonitor) -> CompositeEventMonitor {
        CompositeEventMonitor(
            monitors: monitors + [monitor], kinds: kinds + [EventKinds.handled(by: monitor)],
            mailboxes: mailboxes + [EventMailbox.shared(for: monitor, among: mailboxes)],
            tasklessMonitors: tasklessMonitors + [monitor as? any TasklessTaskEventMonitor])
    }

    /// What each monitor handles, in the order of `monitors`.
    private let kinds: [EventKinds]
    /// What any of the monitors handles.
    let handledEvents: EventKinds

    /// Each monitor's mailbox, in the order of `monitors`: monitors on one queue (and batched alike) share one, so
    /// that an event reaches them in their order, as Alamofire calls them, and one posted later never overtakes it
    /// (with a mailbox each, a monitor's drain could run a second event before another monitor's ran the first).
    private let mailboxes: [EventMailbox]
    /// Each monitor told of task events without the task, in the order of `monitors`.
    private let tasklessMonitors: [(any TasklessTaskEventMonitor)?]

    /// Posts `event` to each monitor that handles `kind`. Inlined, so that the event's closure is made only past the
    /// check: a request tells its monitor of a dozen events, of which `AF`'s notifications handle 4.
    @inline(__always)
    func performEvent(_ kind: EventKinds, _ event: @escaping @Sendable (any EventMonitor) -> Void) {
        guard handledEvents.contains(kind) else { return }
        post(kind, .other(event))
    }

    /// Posts an event of the request alone; its closure captures nothing, so posting it allocates nothing.
    @inline(__always)
    func performEvent(
        _ kind: EventKinds, of request: Request, _ event: @escaping @Sendable (any EventMonitor, Request) -> Void
    ) {
        guard handledEvents.contains(kind) else { return }
        post(kind, .request(event, request))
    }

    /// Posts an event of an attempt's task: a value, so posting it allocates nothing, and the attempt's
    /// `URLSessionTask` is made on the queue of a monitor that is handed it.
    func performEvent(_ event: TaskEvent, of request: Request, task: RequestTask, error: AFError?) {
        guard handledEvents.contains(event.kind) else { return }
        post(event.kind, .task(event, request, task, error))
    }

    /// Delivers at once the events a batching monitor holds (`BatchingEventMonitor`), and returns once they ran.
    func flushBatchedEvents() {
        var flushed: Set<ObjectIdentifier> = []
        for mailbox in mailboxes where flushed.insert(ObjectIdentifier(mailbox)).inserted { mailbox.flush() }
    }

    private func post(_ kind: EventKinds, _ event: EventMailbox.Event) {
        for index in monitors.indices where kinds[index].contains(kind) {
            mailboxes[index].post(event, to: monitors[index], taskless: tasklessMonitors[index])
        }
    }

    /// Forwards.
    public func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
        let error = UncheckedBox(error)
        performEvent(.other) { $0.urlSession(session, didBecomeInvalidWithError: error.value) }
    }

    /// Forwards.
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge
    ) {
        performEvent(.other) { $0.urlSession(session, task: task, didReceive: challenge) }
    }

    /// Forwards.
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        performEvent(.other) {
            $0.urlSession(
                session, task: task, didSendBodyData: bytesSent, totalBytesSent: totalBytesSent,
                totalBytesExpectedToSend: totalBytesExpectedToSend)
        }
    }

    /// Forwards.
    public func urlSession(_ session: URLSession, taskNeedsNewBodyStream task: URLSessionTask) {
        performEvent(.other) { $0.urlSession(session, taskNeedsNewBodyStream: task) }
    }

    /// Forwards.
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest
    ) {
        performEvent(.other) {
            $0.urlSession(session, task: task, willPerformHTTPRedirection: response, newRequest: request)
        }
    }

    /// Forwards.
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics
    ) {
        performEvent(.metrics) { $0.urlSession(session, task: task, didFinishCollecting: metrics) }
    }

    /// Forwards.
    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let error = UncheckedBox(error)
        performEvent(.other) { $0.urlSession(session, task: task, didCompleteWithError: error.value) }
    }

    /// Forwards.
    public func urlSession(_ session: URLSession, taskIsWaitingForConnectivity task: URLSessionTask) {
        performEvent(.other) { $0.urlSession(session, taskIsWaitingForConnectivity: task) }
    }

    /// Forwards.
    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse) {
        performEvent(.other) { $0.urlSession(session, dataTask: dataTask, didReceive: response) }
    }

    /// Forwards.
    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        performEvent(.bodyData) { $0.urlSession(session, dataTask: dataTask, didReceive: data) }
    }

    /// Forwards.
    public func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse
    ) {
        performEvent(.other) { $0.urlSession(session, dataTask: dataTask, willCacheResponse: proposedResponse) }
    }

    /// Forwards.
    public func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64,
        expectedTotalBytes: Int64
    ) {
        performEvent(.other) {
            $0.urlSession(
                session, downloadTask: downloadTask, didResumeAtOffset: fileOffset,
                expectedTotalBytes: expectedTotalBytes)
        }
    }

    /// Forwards.
    public func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
    ) {
        performEvent(.other) {
            $0.urlSession(
                session, downloadTask: downloadTask, didWriteData: bytesWritten, totalBytesWritten: totalBytesWritten,
                totalBytesExpectedToWrite: totalBytesExpectedToWrite)
        }
    }

    /// Forwards.
    public func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL
    ) {
        performEvent(.other) { $0.urlSession(session, downloadTask: downloadTask, didFinishDownloadingTo: location) }
    }

    /// Forwards.
    public func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest) {
        performEvent(.other) { $0.request(request, didCreateInitialURLRequest: urlRequest) }
    }

    /// Forwards.
    public func request(_ request: Request, didFailToCreateURLRequestWithError error: AFError) {
        performEvent(.other) { $0.request(request, didFailToCreateURLRequestWithError: error) }
    }

    /// Forwards.
    public func request(
        _ request: Request, didAdaptInitialRequest initialRequest: URLRequest, to adaptedRequest: URLRequest
    ) {
        performEvent(.other) { $0.request(request, didAdaptInitialRequest: initialRequest, to: adaptedRequest) }
    }

    /// Forwards.
    public func request(
        _ request: Request, didFailToAdaptURLRequest initialRequest: URLRequest, withError error: AFError
    ) {
        performEvent(.other) { $0.request(request, didFailToAdaptURLRequest: initialRequest, withError: error) }
    }

    /// Forwards.
    public func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest) {
        performEvent(.other) { $0.request(request, didCreateURLRequest: urlRequest) }
    }

    /// Forwards.
    public func request(_ request: Request, didCreateTask task: URLSessionTask) {
        performEvent(.taskCreation) { $0.request(request, didCreateTask: task) }
    }

    /// Forwards.
    public func request(_ request: Request, didGatherMetrics metrics: URLSessionTaskMetrics) {
        performEvent(.metrics) { $0.request(request, didGatherMetrics: metrics) }
    }

    /// Forwards.
    public func request(_ request: Request, didFailTask task: URLSessionTask, earlyWithError error: AFError) {
        performEvent(.other) { $0.request(request, didFailTask: task, earlyWithError: error) }
    }

    /// Forwards.
    public func request(_ request: Request, didCompleteTask task: URLSessionTask, with error: AFError?) {
        performEvent(.taskLifecycle) { $0.request(request, didCompleteTask: task, with: error) }
    }

    /// Forwards.
    public func requestIsRetrying(_ request: Request) {
        performEvent(.other) { $0.requestIsRetrying(request) }
    }

    /// Forwards.
    public func requestDidFinish(_ request: Request) {
        performEvent(.requestLifecycle) { $0.requestDidFinish(request) }
    }

    /// Forwards.
    public func requestDidResume(_ request: Request) {
        performEvent(.requestLifecycle) { $0.requestDidResume(request) }
    }

    /// Forwards.
    public func request(_ request: Request, didResumeTask task: URLSessionTask) {
        performEvent(.taskLifecycle) { $0.request(request, didResumeTask: task) }
    }

    /// Forwards.
    public func requestDidSuspend(_ request: Request) {
        performEvent(.requestLifecycle) { $0.requestDidSuspend(request) }
    }

    /// Forwards.
    public func request(_ request: Request, didSuspendTask task: URLSessionTask) {
        performEvent(.taskLifecycle) { $0.request(request, didSuspendTask: task) }
    }

    /// Forwards.
    public func requestDidCancel(_ request: Request) {
        performEvent(.requestLifecycle) { $0.requestDidCancel(request) }
    }

    /// Forwards.
    public func request(_ request: Request, didCancelTask task: URLSessionTask) {
        performEvent(.taskLifecycle) { $0.request(request, didCancelTask: task) }
    }

    /// Forwards.
    public func request(
        _ request: DataRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, data: Data?,
        withResult result: Request.ValidationResult
    ) {
        performEvent(.other) {
            $0.request(request, didValidateRequest: urlRequest, response: response, data: data, withResult: result)
        }
    }

    /// Forwards.
    public func request(_ request: DataRequest, didParseResponse response: DataResponse<Data?, AFError>) {
        performEvent(.parsing) { $0.request(request, didParseResponse: response) }
    }

    /// Forwards.
    public func request(
        _ request: DataStreamRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse,
        withResult result: Request.ValidationResult
    ) {
        performEvent(.other) {
            $0.request(request, didValidateRequest: urlRequest, response: response, withResult: result)
        }
    }

    /// Forwards.
    public func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable) {
        performEvent(.other) { $0.request(request, didCreateUploadable: uploadable) }
    }

    /// Forwards.
    public func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: AFError) {
        performEvent(.other) { $0.request(request, didFailToCreateUploadableWithError: error) }
    }

    /// Forwards.
    public func request(_ request: UploadRequest, didProvideInputStream stream: InputStream) {
        let stream = UncheckedBox(stream)
        performEvent(.other) { $0.request(request, didProvideInputStream: stream.value) }
    }

    /// Forwards.
    public func request(
        _ request: DownloadRequest, didFinishDownloadingUsing task: URLSessionTask, with result: Result<URL, AFError>
    ) {
        performEvent(.other) { $0.request(request, didFinishDownloadingUsing: task, with: result) }
    }

    /// Forwards.
    public func request(_ request: DownloadRequest, didCreateDestinationURL url: URL) {
        performEvent(.other) { $0.request(request, didCreateDestinationURL: url) }
    }

    /// Forwards.
    public func request(
        _ request: DownloadRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse,
        fileURL: URL?, withResult result: Request.ValidationResult
    ) {
        performEvent(.other) {
            $0.request(
                request, didValidateRequest: urlRequest, response: response, fileURL: fileURL, withResult: result)
        }
    }

    /// Forwards.
    public func request(_ request: DownloadRequest, didParseResponse response: DownloadResponse<URL?, AFError>) {
        performEvent(.parsing) { $0.request(request, didParseResponse: response) }
    }

    /// Forwards.
    public func request(_ request: Request, didGatherTaskMetrics metrics: RequestTaskMetrics) {
        performEvent(.metrics) { $0.request(request, didGatherTaskMetrics: metrics) }
    }

    /// Forwards.
    public func request<Value>(_ request: DataRequest, didParseResponse response: DataResponse<Value, AFError>) {
        let boxed = UncheckedBox(response)
        performEvent(.parsing) { $0.request(request, didParseResponse: boxed.value) }
    }

    /// Forwards.
    public func request<Value>(_ request: DataStreamRequest, didParseStream result: Result<Value, AFError>) {
        let boxed = UncheckedBox(result)
        performEvent(.parsing) { $0.request(request, didParseStream: boxed.value) }
    }

    /// Forwards.
    public func request<Value>(_ request: DownloadRequest, didParseResponse response: DownloadResponse<Value, AFError>)
    {
        let boxed = UncheckedBox(response)
        performEvent(.parsing) { $0.request(request, didParseResponse: boxed.value) }
    }
}

/// Delivers a monitor's events on its queue, in order, with one hop to the queue per burst: an event posted while an
/// earlier one still waits for the queue (a request's `didResume` and `didResumeTask`, its `didCompleteTask` and
/// `didFinish`) joins it instead of costing another dispatch and another thread wake-up. An event only ever runs
/// sooner than a dispatch of its own would have, never later, so a barrier on the queue still sees every event
/// posted before it, unless the monitor batches (`BatchingEventMonitor`): its burst is then dispatched once its first
/// event has waited the monitor's `batchingWindow`, so the events of many requests share one hop.
final class EventMailbox: Sendable {
    /// An event: for the commonest (a request's and its task's lifecycle), a closure that captures nothing with the
    /// values it is called with, so that posting one allocates nothing; for the others, a closure over their values.
    enum Event: Sendable {
        case request(@Sendable (any EventMonitor, Request) -> Void, Request)
        case task(TaskEvent, Request, RequestTask, AFError?)
        case other(@Sendable (any EventMonitor) -> Void)

        func run(for monitor: any EventMonitor, taskless: (any TasklessTaskEventMonitor)?) {
            switch self {
            case let .request(event, request): event(monitor, request)
            case let .task(event, request, task, error):
                if let taskless {
                    taskless.taskEvent(event, of: request)
                } else {
                    event.deliver(to: monitor, request: request, task: task, error: error)
                }
            case let .other(event): event(monitor)
            }
        }
    }

    /// An event with the monitor it is for: the pair, not a closure over both. A struct rather than a tuple: a closure
    /// kept in a tuple inside an array is stored generically, and reading it back costs a thunk (an allocation).
    private struct Posted {
        let event: Event
        let monitor: any EventMonitor
        /// The monitor, when it is told of task events without the task.
        let taskless: (any TasklessTaskEventMonitor)?
    }

    private struct State {
        var events: [Posted] = []
        /// Whether a drain is on the queue or running.
        var draining = false
    }

    let queue: DispatchQueue
    /// How long a burst's first event waits for others before the burst is dispatched; `nil`: not at all.
    let window: DispatchTimeInterval?
    private let state = Protected(State())

    init(queue: DispatchQueue, window: DispatchTimeInterval? = nil) {
        self.queue = queue
        self.window = window
    }

    /// A mailbox for `monitor`: on its queue, batching as it asks.
    convenience init(for monitor: any EventMonitor) {
        self.init(queue: monitor.queue, window: (monitor as? any BatchingEventMonitor)?.batchingWindow)
    }

    /// The mailbox of `existing` that delivers on `monitor`'s queue with its batching, else a new one.
    static func shared(for monitor: any EventMonitor, among existing: [EventMailbox]) -> EventMailbox {
        let queue = ObjectIdentifier(monitor.queue)
        let window = (monitor as? any BatchingEventMonitor)?.batchingWindow
        return existing.first { ObjectIdentifier($0.queue) == queue && $0.window == window }
            ?? EventMailbox(queue: monitor.queue, window: window)
    }

    func post(_ event: Event, to monitor: any EventMonitor, taskless: (any TasklessTaskEventMonitor)? = nil) {
        let schedule = state.write { state -> Bool in
            state.events.append(Posted(event: event, monitor: monitor, taskless: taskless))
            if state.draining { return false }
            state.draining = true
            return true
        }
        guard schedule else { return }
        if let window {
            // A barrier, so that on a concurrent queue it never overlaps a drain `flush()` ran.
            queue.asyncAfter(deadline: .now() + window, flags: .barrier) { self.drain() }
        } else {
            queue.async { self.drain() }
        }
    }

    /// Delivers at once what waits for its batching window, and returns once it ran: a barrier that sees every event
    /// posted before it. Never call it from the monitor's queue.
    func flush() {
        guard window != nil else { return }
        queue.sync(flags: .barrier) { drain() }
    }

    private func drain() {
        Confinement.assertOffEventLoop("An event monitor")
        // Everything posted so far is taken in one acquisition of the lock and run outside it; what is posted
        // meanwhile waits for the next round. The two arrays trade places, so each keeps its storage and a burst
        // allocates nothing but its closures.
        var batch: [Posted] = []
        while true {
            state.write { state in
                if state.events.isEmpty { state.draining = false }
                swap(&batch, &state.events)
            }
            guard !batch.isEmpty else { return }
            for posted in batch { posted.event.run(for: posted.monitor, taskless: posted.taskless) }
            batch.removeAll(keepingCapacity: true)
        }
    }
}

/// A monitor of Bluebonnet's own whose events may wait a moment to be delivered together: posting Alamofire's
/// notifications costs a thread wake-up per burst, and under load one burst then carries the events of many requests.
protocol BatchingEventMonitor: EventMonitor {
    /// How long an event may wait for others before they are delivered, in order, together.
    var batchingWindow: DispatchTimeInterval { get }
}
