import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The base of every request: its lifecycle, the `URLRequest`s it sent, the response, the error and the ordered list
/// of response handlers waiting for completion.
public class Request: @unchecked Sendable {
    /// The unique identifier of the request, for `Hashable` and `Equatable`.
    public let id: UUID
    /// The serial queue where the request's `URLRequest` is created.
    public let underlyingQueue: DispatchQueue
    /// The queue where response handlers serialize.
    public let serializationQueue: DispatchQueue
    /// The monitor told of this request's events.
    public let eventMonitor: (any EventMonitor)?

    let context: SessionContext
    weak var delegate: (any RequestDelegate)?
    /// Makes the request's `URLRequest` (the convertible's `asURLRequest()`).
    let makeURLRequest: @Sendable () throws -> URLRequest
    let mutableState = Protected(MutableState())

    struct MutableState {
        var state: State = .initialized
        var requests: [URLRequest] = []
        var response: HTTPURLResponse?
        var error: AFError?
        var transportTask: (any TransportTask)?
        var attemptInFlight = false
        var transportCompleted = false
        var responseSerializers: [ResponseHandler] = []
        var isProcessingResponseSerializers = false
        var validators: [@Sendable () -> Void] = []
        /// Whether every validator is one of Bluebonnet's cheap, non-blocking checks.
        var validatorsAreLightweight = true
        /// Whether making the `URLRequest` has begun (on `requestQueue`, or inline on the first resume).
        var creationClaimed = false
        var redirectHandler: (any RedirectHandler)?
        var redirectCount = 0
        var startTime: CFAbsoluteTime?
        var initialResponseTime: CFAbsoluteTime?
        var completedTime: CFAbsoluteTime?
        var deadline: Date?
        /// The request's own limit on the body held in memory, overriding the session's when set.
        var maximumResponseSize: Int64??
        var urlRequestHandlers: [(queue: DispatchQueue, handler: @Sendable (URLRequest) -> Void)] = []
        var cURLHandlers: [(queue: DispatchQueue, handler: @Sendable (String) -> Void)] = []
        var progress = ProgressTracking()
    }

    init(
        id: UUID = UUID(),
        underlyingQueue: DispatchQueue,
        serializationQueue: DispatchQueue,
        eventMonitor: (any EventMonitor)?,
        context: SessionContext,
        delegate: any RequestDelegate,
        makeURLRequest: @escaping @Sendable () throws -> URLRequest
    ) {
        self.id = id
        self.makeURLRequest = makeURLRequest
        self.underlyingQueue = underlyingQueue
        self.serializationQueue = serializationQueue
        self.eventMonitor = eventMonitor
        self.context = context
        self.delegate = delegate
    }

    // MARK: - State

    // Accessors copy one field under the lock, not the whole state: every array and reference in it would be
    // retained and released on each read.

    /// The current state.
    public var state: State { mutableState.write { $0.state } }
    /// Whether the request has not been resumed yet.
    public var isInitialized: Bool { state == .initialized }
    /// Whether the request is running.
    public var isResumed: Bool { state == .resumed }
    /// Whether the request is suspended.
    public var isSuspended: Bool { state == .suspended }
    /// Whether the request was cancelled.
    public var isCancelled: Bool { state == .cancelled }
    /// Whether the request finished and every response handler has run.
    public var isFinished: Bool { state == .finished }

    /// Every `URLRequest` sent, one per redirect hop, in order.
    public var requests: [URLRequest] { mutableState.write { $0.requests } }
    /// The first `URLRequest` made.
    public var firstRequest: URLRequest? { requests.first }
    /// The last `URLRequest` made.
    public var lastRequest: URLRequest? { requests.last }
    /// The current `URLRequest` (the last one).
    public var request: URLRequest? { lastRequest }
    /// The response of the final hop, once its head has arrived.
    public var response: HTTPURLResponse? { mutableState.write { $0.response } }
    /// The error that ended the request, or that validation found.
    public var error: AFError? { mutableState.write { $0.error } }
    /// How many redirects were followed.
    public var redirectCount: Int { mutableState.write { $0.redirectCount } }

    // MARK: - Controls

    /// Cancels the request. Response handlers receive `AFError.explicitlyCancelled`; a request that already
    /// completed keeps its result.
    ///
    /// - Returns: The instance.
    @discardableResult
    public func cancel() -> Self {
        let (didCancel, task, finishNow) = mutableState.write { state -> (Bool, (any TransportTask)?, Bool) in
            guard !state.transportCompleted, state.state.canTransitionTo(.cancelled) else { return (false, nil, false) }
            state.state = .cancelled
            state.error = .explicitlyCancelled
            return (true, state.transportTask, state.transportTask == nil && !state.attemptInFlight)
        }
        guard didCancel else { return self }
        eventMonitor?.requestDidCancel(self)
        task?.cancel()
        if finishNow { finish(body: nil, error: .explicitlyCancelled) }
        return self
    }

    /// Suspends the request: no more of the response body is read, and no more of an upload's body is sent, until
    /// `resume()`.
    ///
    /// - Returns: The instance.
    @discardableResult
    public func suspend() -> Self {
        let (didSuspend, task) = mutableState.write { state -> (Bool, (any TransportTask)?) in
            guard !state.transportCompleted, state.state.canTransitionTo(.suspended) else { return (false, nil) }
            state.state = .suspended
            return (true, state.transportTask)
        }
        guard didSuspend else { return self }
        task?.suspend()
        eventMonitor?.requestDidSuspend(self)
        return self
    }

    /// Resumes the request: starts it if its `URLRequest` is ready, or continues reading after `suspend()`.
    ///
    /// - Returns: The instance.
    @discardableResult
    public func resume() -> Self {
        let (didResume, task, start, create) = mutableState.write { state -> (Bool, (any TransportTask)?, URLRequest?, Bool) in
            guard state.state.canTransitionTo(.resumed) else { return (false, nil, nil, false) }
            state.state = .resumed
            let create = createsURLRequestOnResume && !state.creationClaimed
            if create { state.creationClaimed = true }
            return (true, state.transportTask, create ? nil : Self.claimStart(&state), create)
        }
        guard didResume else { return self }
        task?.resume()
        eventMonitor?.requestDidResume(self)
        if create { createURLRequest() } else if let start { startAttempt(start) }
        return self
    }

    /// Whether the first `resume()` makes the `URLRequest` inline rather than leaving it to `requestQueue`.
    var createsURLRequestOnResume: Bool { context.createsRequestsOnResume }

    /// Makes the `URLRequest` on `requestQueue`, unless the first resume already did.
    func createURLRequestOnRequestQueue() {
        context.requestQueue.async { [self] in
            let claimed = mutableState.write { state -> Bool in
                guard !state.creationClaimed, state.state != .cancelled else { return false }
                state.creationClaimed = true
                return true
            }
            if claimed { createURLRequest() }
        }
    }

    /// Makes the `URLRequest` from the request's convertible, then starts it if it is resumed.
    private func createURLRequest() {
        do {
            let urlRequest = try makeURLRequest()
            try urlRequest.validate()
            didCreateInitialURLRequest(urlRequest)
        } catch {
            didFailToCreateURLRequest(with: error.asAFError(or: .createURLRequestFailed(error: error)))
        }
    }

    /// Returns the `URLRequest` to start when the request is resumed, its request is made, and nothing runs yet.
    private static func claimStart(_ state: inout MutableState) -> URLRequest? {
        guard state.state == .resumed, !state.attemptInFlight, !state.transportCompleted,
              let request = state.requests.last else { return nil }
        state.attemptInFlight = true
        return request
    }

    /// Sets the redirect handler for this request, overriding the session's.
    ///
    /// - Parameter handler: The `RedirectHandler`.
    /// - Returns: The instance.
    @discardableResult
    public func redirect(using handler: any RedirectHandler) -> Self {
        mutableState.write { $0.redirectHandler = handler }
        return self
    }

    /// Sets the largest response body this request holds in memory, overriding the session's
    /// `maximumResponseSize`. A larger body fails the request with
    /// `AFError.responseLimitExceeded(reason: .maximumResponseSizeExceeded(limit:))`. Applies to the hops sent after
    /// the call: set it before the request starts.
    ///
    /// - Parameter bytes: The limit in decoded bytes; `nil` for no limit.
    /// - Returns: The instance.
    @discardableResult
    public func maximumResponseSize(_ bytes: Int64?) -> Self {
        mutableState.write { $0.maximumResponseSize = .some(bytes) }
        return self
    }

    /// Calls `handler` with each `URLRequest` this request makes (the first, then one per redirect).
    ///
    /// - Parameters:
    ///   - queue:   The queue the handler runs on. `.main` by default.
    ///   - handler: The closure.
    /// - Returns: The instance.
    @discardableResult
    public func onURLRequestCreation(on queue: DispatchQueue = .main, perform handler: @escaping @Sendable (URLRequest) -> Void) -> Self {
        let (existing, create) = mutableState.write { state -> (URLRequest?, Bool) in
            state.urlRequestHandlers.append((queue, handler))
            return (state.requests.last, Self.needsCreationForHandler(state))
        }
        if let existing { queue.async { handler(existing) } }
        if create { createURLRequestOnRequestQueue() }
        return self
    }

    /// Whether a handler waiting for the `URLRequest` must have it made now: with the default queues it is made by
    /// the first `resume()`, which a request with no response handler may never get, so the handler would wait
    /// forever. Alamofire makes it when the request is created, whatever follows.
    static func needsCreationForHandler(_ state: MutableState) -> Bool {
        state.requests.isEmpty && !state.creationClaimed && state.state != .cancelled
    }

    // MARK: - Creation and attempts

    /// Called on `underlyingQueue` once the `URLRequest` is made.
    func didCreateInitialURLRequest(_ urlRequest: URLRequest) {
        let (start, urlHandlers, curlHandlers) = mutableState.write { state -> (URLRequest?, [(queue: DispatchQueue, handler: @Sendable (URLRequest) -> Void)], [(queue: DispatchQueue, handler: @Sendable (String) -> Void)]) in
            guard state.state != .cancelled else { return (nil, [], []) }
            state.requests.append(urlRequest)
            let curl = state.cURLHandlers
            state.cURLHandlers = []
            return (Self.claimStart(&state), state.urlRequestHandlers, curl)
        }
        eventMonitor?.request(self, didCreateInitialURLRequest: urlRequest)
        notify(urlRequest, urlHandlers: urlHandlers, cURLHandlers: curlHandlers)
        if let start { startAttempt(start) }
    }

    /// Called on `underlyingQueue` when the `URLRequest` could not be made.
    func didFailToCreateURLRequest(with error: AFError) {
        eventMonitor?.request(self, didFailToCreateURLRequestWithError: error)
        failBeforeStarting(with: error)
    }

    /// Ends a request that never reached the network, unless it was cancelled (which ended it already).
    func failBeforeStarting(with error: AFError) {
        let shouldFinish = mutableState.write { state -> Bool in
            guard state.state != .cancelled else { return false }
            state.attemptInFlight = true
            return true
        }
        if shouldFinish { finish(body: nil, error: error) }
    }

    private func notify(
        _ urlRequest: URLRequest,
        urlHandlers: [(queue: DispatchQueue, handler: @Sendable (URLRequest) -> Void)],
        cURLHandlers: [(queue: DispatchQueue, handler: @Sendable (String) -> Void)]
    ) {
        for (queue, handler) in urlHandlers { queue.async { handler(urlRequest) } }
        guard !cURLHandlers.isEmpty else { return }
        let curl = cURLDescription()
        for (queue, handler) in cURLHandlers { queue.async { handler(curl) } }
    }

    /// Sends one hop. The caller has set `attemptInFlight`.
    private func startAttempt(_ urlRequest: URLRequest) {
        let now = Timeline.now()
        let (deadline, hop, firstURL, ownLimit) = mutableState.write { state -> (Date?, Int, URL?, Int64??) in
            if state.startTime == nil {
                state.startTime = now
                if let resource = context.resourceTimeout { state.deadline = Date(timeIntervalSinceReferenceDate: now + resource) }
            }
            return (state.deadline, state.requests.count - 1, state.requests.first?.url, state.maximumResponseSize)
        }
        var prepared: TransportRequest
        do {
            // The session's credentials were set for the origin the request starts on; a redirect elsewhere
            // goes without them, as the redirect rules already stripped the request's own.
            var sameOrigin = hop == 0
            if !sameOrigin, let firstURL, let url = urlRequest.url { sameOrigin = RedirectRules.sameOrigin(firstURL, url) }
            prepared = try context.transportRequest(for: urlRequest, deadline: deadline, sendsSessionCredentials: sameOrigin,
                                                    maximumBodySize: ownLimit ?? context.maximumResponseSize)
            prepared.body = try uploadBody(for: urlRequest, hop: hop)
            if let body = prepared.body { didStartSendingBody(length: body.length) }
        } catch {
            finish(body: nil, error: error.asAFError(or: .createURLRequestFailed(error: error)))
            return
        }
        let task = context.transport.execute(prepared, sink: self)
        let (cancelNow, suspendNow) = mutableState.write { state -> (Bool, Bool) in
            state.transportTask = task
            return (state.state == .cancelled, state.state == .suspended)
        }
        if cancelNow { task.cancel() } else if suspendNow { task.suspend() }
    }

    // MARK: - Completion

    /// Hook for subclasses: the body of the final response.
    func didReceiveBody(_ body: Data?) {}

    /// Hook for uploads: the body to stream for one hop (0 for the first request, then one per redirect).
    func uploadBody(for urlRequest: URLRequest, hop: Int) throws -> UploadBody? { nil }

    /// Hook for subclasses: releases what the request holds on disk once it has completed, however it ended.
    func cleanup() {}

    /// A queued response handler. `inlineSafe` handlers are cheap and never block (they snapshot the request for
    /// an awaiting task, or hand an unparsed body to the caller's queue), so they may run on the thread that
    /// finished the request, sparing a hop to `serializationQueue`.
    struct ResponseHandler: Sendable {
        let inlineSafe: Bool
        let run: @Sendable () -> Void
    }

    /// Ends the request: stamps the time, then validators and response handlers run, on `serializationQueue` unless
    /// everything queued is cheap and non-blocking.
    func finish(body: Data?, error: AFError?) {
        let now = Timeline.now()
        didReceiveBody(body)
        cleanup()
        let (inline, downloadObserved) = mutableState.write { state -> (Bool, Bool) in
            // Complete, the download's total is what arrived, so a watched download ends at exactly 1.0.
            let completesDownload = error == nil && state.progress.download.total != state.progress.download.completed
            if completesDownload { state.progress.download.total = state.progress.download.completed }
            state.transportTask = nil
            state.attemptInFlight = false
            state.transportCompleted = true
            state.completedTime = now
            if let error { state.error = error }
            state.isProcessingResponseSerializers = true
            return (state.validatorsAreLightweight && state.responseSerializers.allSatisfy(\.inlineSafe),
                    completesDownload && state.progress.download.progress != nil)
        }
        if downloadObserved { updateProgress(.download) { _ in } }
        guard inline else {
            serializationQueue.async { [self] in
                runValidatorsAndNotify()
                processResponseSerializers(inline: false)
            }
            return
        }
        runValidatorsAndNotify()
        processResponseSerializers(inline: true)
    }

    private func runValidatorsAndNotify() {
        let validators = mutableState.write { $0.validators }
        for validator in validators { validator() }
        eventMonitor?.requestDidFinish(self)
    }

    /// Runs queued handlers in order until none is left. Inline (off `serializationQueue`), it stops at the first
    /// handler that is not inline-safe and lets `serializationQueue` run the rest, still in order.
    private func processResponseSerializers(inline: Bool) {
        while true {
            enum Step { case run(@Sendable () -> Void), hop, done }
            let step = mutableState.write { state -> Step in
                guard let first = state.responseSerializers.first else {
                    state.isProcessingResponseSerializers = false
                    return .done
                }
                if inline && !first.inlineSafe { return .hop }
                state.responseSerializers.removeFirst()
                // Finished before the last handler hands out its result, so whoever receives it sees
                // `isFinished`; a handler added meanwhile moves the request back to `.resumed`.
                if state.responseSerializers.isEmpty, state.state.canTransitionTo(.finished) { state.state = .finished }
                return .run(first.run)
            }
            switch step {
            case let .run(handler): handler()
            case .hop: serializationQueue.async { self.processResponseSerializers(inline: false) }; return
            case .done: return
            }
        }
    }

    /// Queues a response handler: it runs after completion, in order; at once if the request already completed.
    ///
    /// - Parameters:
    ///   - inlineSafe: Whether the handler is cheap and never blocks, so it may run on any thread.
    ///   - closure:    The handler.
    func appendResponseSerializer(inlineSafe: Bool = false, _ closure: @escaping @Sendable () -> Void) {
        let (processNow, resumeNow) = mutableState.write { state -> (Bool, Bool) in
            state.responseSerializers.append(ResponseHandler(inlineSafe: inlineSafe, run: closure))
            if state.state == .finished { state.state = .resumed }
            let resume = state.state == .initialized && context.startRequestsImmediately
            guard state.transportCompleted, !state.isProcessingResponseSerializers else { return (false, resume) }
            state.isProcessingResponseSerializers = true
            return (true, resume)
        }
        if processNow {
            if inlineSafe { processResponseSerializers(inline: true) } else { serializationQueue.async { self.processResponseSerializers(inline: false) } }
        }
        if resumeNow { resume() }
    }

    /// Adds a validator that runs after completion and before any handler.
    ///
    /// - Parameters:
    ///   - lightweight: Whether it is one of Bluebonnet's own cheap checks, safe on any thread.
    ///   - validator:   The validator.
    func appendValidator(lightweight: Bool = false, _ validator: @escaping @Sendable () -> Void) {
        mutableState.write { state in
            state.validators.append(validator)
            state.validatorsAreLightweight = state.validatorsAreLightweight && lightweight
        }
    }

    /// Records a validation failure unless an earlier failure is already recorded.
    func recordValidationError(_ error: AFError) {
        mutableState.write { state in
            if state.error == nil { state.error = error }
        }
    }

    /// The timeline of `state` (a snapshot the caller already took) as of `serializationCompletedTime`.
    static func timeline(of state: MutableState, serializationCompletedAt end: CFAbsoluteTime) -> Timeline {
        let completed = state.completedTime ?? end
        let start = state.startTime ?? completed
        return Timeline(
            requestStartTime: start,
            initialResponseTime: state.initialResponseTime ?? completed,
            requestCompletedTime: completed,
            serializationCompletedTime: end
        )
    }
}

// MARK: - Transport events

extension Request: TransportSink {
    func transportDidReceiveResponse(_ response: HTTPURLResponse, expectedBodyLength expected: Int64) {
        let now = Timeline.now()
        mutableState.write { state in
            state.response = response
            state.initialResponseTime = now
            state.progress.download.completed = 0
            state.progress.download.total = expected
        }
    }

    func transportDidSendBodyBytes(_ count: Int) {
        updateProgress(.upload) { $0.completed += Int64(count) }
    }

    func transportDidSendBody() {
        updateProgress(.upload) { track in
            if track.total < 0 { track.total = track.completed }
        }
    }

    func transportDidReceiveBodyBytes(_ count: Int) {
        updateProgress(.download) { $0.completed += Int64(count) }
    }

    func transportDidComplete(body: Data, error: (any Error)?) {
        let (cancelled, lastRequest, response) = mutableState.write { state -> (Bool, URLRequest?, HTTPURLResponse?) in
            state.transportTask = nil
            return (state.state == .cancelled, state.requests.last, state.response)
        }
        if cancelled {
            finish(body: nil, error: .explicitlyCancelled)
            return
        }
        if let error {
            let sessionGone = delegate == nil
            finish(body: nil, error: sessionGone ? .sessionDeinitialized : TransportErrorMapper.afError(from: error))
            return
        }
        guard let lastRequest, let response,
              let redirected = RedirectRules.redirectedRequest(from: lastRequest, response: response) else {
            finish(body: body, error: nil)
            return
        }
        followRedirect(redirected, response: response, body: body)
    }

    private func followRedirect(_ redirected: Result<URLRequest, AFError>, response: HTTPURLResponse, body: Data) {
        let newRequest: URLRequest
        switch redirected {
        case let .failure(error):
            finish(body: nil, error: error)
            return
        case let .success(request):
            newRequest = request
        }
        let (handler, count) = mutableState.write { state in
            (state.redirectHandler ?? context.redirectHandler, state.redirectCount)
        }
        guard count < handler.maximumRedirects else {
            finish(body: nil, error: .redirectFailed(reason: .tooManyRedirects(limit: handler.maximumRedirects)))
            return
        }
        handler.request(self, willBeRedirectedTo: newRequest, for: response) { [self] decision in
            guard let next = decision else {
                finish(body: body, error: nil)
                return
            }
            let (start, urlHandlers) = mutableState.write { state -> (Bool, [(queue: DispatchQueue, handler: @Sendable (URLRequest) -> Void)]) in
                state.redirectCount += 1
                state.requests.append(next)
                state.response = nil
                return (state.state != .cancelled, state.urlRequestHandlers)
            }
            notify(next, urlHandlers: urlHandlers, cURLHandlers: [])
            if start { startAttempt(next) } else { finish(body: nil, error: .explicitlyCancelled) }
        }
    }
}

// MARK: - Descriptions

extension Request: Equatable {
    /// Requests are equal when their `id`s are.
    public static func == (lhs: Request, rhs: Request) -> Bool { lhs.id == rhs.id }
}

extension Request: Hashable {
    /// Hashes the `id`.
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
}

extension Request: CustomStringConvertible {
    /// `METHOD URL`, with the status code once a response arrived.
    public var description: String {
        guard let request = lastRequest, let url = request.url, let method = request.httpMethod else {
            return "No request created yet."
        }
        let requestDescription = "\(method) \(url.absoluteString)"
        return response.map { "\(requestDescription) (\($0.statusCode))" } ?? requestDescription
    }
}

extension Request: CustomDebugStringConvertible {
    /// The request as a cURL command.
    public var debugDescription: String { cURLDescription() }
}
