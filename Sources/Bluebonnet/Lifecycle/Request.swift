import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The base of every request: its lifecycle, the `URLRequest`s it sent, the response, the error and the ordered list
/// of response handlers waiting for completion.
///
/// The lifecycle lives in one `RequestStateMachine` behind the request's lock; every public control and every engine
/// callback is an event of that machine, and the action it returns runs after the lock is released.
public class Request: @unchecked Sendable {
    // @unchecked: every mutable field is in `mutableState`, behind its lock; the rest is immutable.

    /// The unique identifier of the request, for `Hashable` and `Equatable`.
    public let id: UUID
    /// The serial queue where the request's own work runs: redirect handlers, adapters, retriers, validators of a
    /// retried request, progress updates. Never a NIO event loop.
    public let underlyingQueue: DispatchQueue
    /// The queue where response handlers serialize.
    public let serializationQueue: DispatchQueue
    /// The monitor told of this request's events: the session's monitors, then those `eventMonitor(_:)` added.
    public var eventMonitor: (any EventMonitor)? {
        guard hasOwnMonitors.load(ordering: .acquiring) else { return sessionMonitor }
        return ownMonitors.read { $0?.monitor }
    }
    /// The events some monitor handles: a request makes tasks, metrics or parsed responses for monitors only when one
    /// will look.
    var monitoredEvents: EventKinds {
        guard hasOwnMonitors.load(ordering: .acquiring) else { return sessionMonitoredEvents }
        return ownMonitors.read { $0?.events ?? [] }
    }
    /// Tells the monitor of an event of `kind` when one handles it. Checked here, before the event is made: a
    /// composite monitor's event is a closure, which costs an allocation even when no monitor wants it.
    @inline(__always)
    func tellMonitor(_ kind: EventKinds, _ event: (any EventMonitor) -> Void) {
        guard monitoredEvents.contains(kind), let eventMonitor else { return }
        event(eventMonitor)
    }

    /// The session's monitor, and what it handles. URLSession's own events (`urlSession(...)`) go to it alone, as
    /// Alamofire's `SessionDelegate` tells only the session's monitor.
    let sessionMonitor: (any EventMonitor)?
    let sessionMonitoredEvents: EventKinds
    /// Whether `eventMonitor(_:)` added monitors: an atomic, so a request without any reads its monitor without a
    /// lock, once per event.
    private let hasOwnMonitors = Atomic<Bool>(false)
    /// The session's monitors and those `eventMonitor(_:)` added, with what they handle. A lock of its own, taken
    /// last: events are read inside `mutableState`'s.
    private let ownMonitors = Protected<(monitor: CompositeEventMonitor, events: EventKinds)?>(nil)
    /// Whether the first response handler resumes the request; `nil` follows the session's
    /// `startRequestsImmediately`.
    public let shouldAutomaticallyResume: Bool?

    let context: SessionContext
    /// The session that made the request, while it lives, as Alamofire exposes it.
    public var delegate: (any RequestDelegate)? { lifecycleDelegate }
    /// The session, for what the request tells it.
    weak var lifecycleDelegate: (any RequestLifecycleDelegate)?
    /// Makes the request's `URLRequest` (the convertible's `asURLRequest()`).
    let makeURLRequest: @Sendable () throws -> URLRequest
    /// What kind of request this is: what it sends, what takes its response, what carries it, whose credentials it
    /// carries and what it releases at the end.
    let kind: RequestKind
    /// The request itself in its role of consumer, for a kind whose response body streams
    /// (`RequestKind.Consumer.streamed`); set once, as the request is made. Unowned: it is the request.
    private(set) unowned(unsafe) var bodyConsumer: (any ResponseBodyConsumer)?
    let mutableState: Protected<MutableState>

    struct MutableState {
        var machine: RequestStateMachine
        var requests: [URLRequest] = []
        /// The current hop's response head; `response` is made from it when first read.
        var head: ResponseHead?
        /// The final response's body, for a request that keeps it in memory (`DataRequest.data`).
        var data: Data?
        /// The request's error: the machine's, which is its only writer.
        var error: AFError? { machine.error }
        var validators: [@Sendable () -> Void] = []
        /// Whether every validator is one of Bluebonnet's cheap, non-blocking checks.
        var validatorsAreLightweight = true
        var startTime: CFAbsoluteTime?
        var initialResponseTime: CFAbsoluteTime?
        var completedTime: CFAbsoluteTime?
        var deadline: Date?
        /// The request's own limit on the body held in memory, overriding the session's when set.
        var maximumResponseSize: Int64??
        var urlRequestHandlers: [(queue: DispatchQueue, handler: @Sendable (URLRequest) -> Void)] = []
        var followedResponseHandlers: [(queue: DispatchQueue, handler: FollowedResponseHandler)] = []
        var cURLHandlers: [(queue: DispatchQueue, handler: @Sendable (String) -> Void)] = []
        var progress = ProgressTracking()
        /// The request's own interceptor: its `interceptor:`, composed with those chained on in order. It runs
        /// after the session's, as in Alamofire.
        var interceptor: (any RequestInterceptor)?
        /// The attempt's task, made only when a monitor listens for task events or a task creation handler is set.
        var task: RequestTask?
        /// The `URLSessionTask`s made so far, by attempt (`Request.sessionTask(for:)`).
        var sessionTasks: [Int: URLSessionTask] = [:]
        /// The `onURLSessionTaskCreation(on:perform:)` handler.
        var taskCreationHandler: (queue: DispatchQueue, handler: @Sendable (URLSessionTask) -> Void)?
        /// Whether monitors heard of the attempt before its first hop went out (`announceAttempt(_:)`).
        var attemptAnnounced = false
        /// The stamps behind `taskMetrics` and `allTaskMetrics`.
        var metrics = MetricsLog()
        /// What features keep on the request (its own redirect handler, cache handler, credential).
        var features = FeatureValues()
        /// The request's own head step, after the session's (`onHTTPResponse`).
        var headStep: (any ResponseHeadStep)?

        var state: State { machine.state }

        init(machine: RequestStateMachine) {
            self.machine = machine
        }

        /// A retry begins a new attempt: what the last one left is forgotten, as in Alamofire's `prepareForRetry` (the
        /// machine forgets the error).
        mutating func forgetAttempt() {
            head = nil
            metrics.beginRetry()
        }
    }

    /// What watches the request from outside (tracing, metrics), if anything does.
    let observer: (any RequestObserving)?

    init(
        id: UUID = .random(),
        underlyingQueue: DispatchQueue,
        serializationQueue: DispatchQueue,
        eventMonitor: (any EventMonitor)?,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        context: SessionContext,
        delegate: any RequestLifecycleDelegate,
        makesURLRequestOnRequestQueue: Bool = false,
        kind: RequestKind = RequestKind(),
        makeURLRequest: @escaping @Sendable () throws -> URLRequest
    ) {
        self.id = id
        self.kind = kind
        self.shouldAutomaticallyResume = shouldAutomaticallyResume
        self.makeURLRequest = makeURLRequest
        self.underlyingQueue = underlyingQueue
        self.serializationQueue = serializationQueue
        sessionMonitor = eventMonitor
        sessionMonitoredEvents = EventKinds.handled(by: eventMonitor)
        self.context = context
        self.lifecycleDelegate = delegate
        // Made here, on the caller's thread, so a trace's parent is the caller's context when the request was made.
        observer = context.observers?.makeObserver()
        let creation: RequestStateMachine.Policy.Creation
        if context.createsRequestsOnResume && !makesURLRequestOnRequestQueue {
            creation = .onResume
        } else {
            creation = context.setsUpEagerly ? .bySession : .onResumeOnRequestQueue
        }
        let intercepted = interceptor != nil || context.interceptor != nil
        let policy = RequestStateMachine.Policy(
            creation: creation, adapts: intercepted, retries: intercepted,
            startsImmediately: shouldAutomaticallyResume ?? context.startRequestsImmediately)
        let body: RequestStateMachine.BodyState =
            switch kind.body {
            case .inURLRequest: .none
            case let .supplied(supply): .made(supply, sends: 0, coding: nil)
            case .madeByRequest: .toBeMade
            }
        var state = MutableState(machine: RequestStateMachine(policy: policy, body: body))
        state.interceptor = interceptor
        mutableState = Protected(state)
        if case .streamed = kind.consumer {
            guard let consumer = self as? any ResponseBodyConsumer else {
                preconditionFailure("\(type(of: self)) streams its response but consumes nothing")
            }
            bodyConsumer = consumer
        }
        Self.checkRoles(of: kind, in: self)
    }

    /// A kind that names the request in a role is made only by a request that plays it: a library bug otherwise.
    private static func checkRoles(of kind: RequestKind, in request: Request) {
        if case .madeByRequest = kind.body {
            precondition(request is any RequestBodyMaking, "\(type(of: request)) makes no body")
        }
        if case .webSocket = kind.route {
            precondition(request is any WebSocketSink, "\(type(of: request)) carries no socket")
        }
    }

    // MARK: - State

    // Accessors copy one field under the lock, not the whole state: every array and reference in it would be
    // retained and released on each read.

    /// The current state.
    public var state: State { mutableState.read { $0.machine.state } }
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
    /// How many times the request has been retried.
    public var retryCount: Int { mutableState.read { $0.machine.retryCount } }

    /// Every `URLRequest` made, in order: the initial one, the adapted one, one per redirect hop and, for each
    /// retry, the initial and adapted ones again.
    public var requests: [URLRequest] { mutableState.read { $0.requests } }
    /// The first `URLRequest` made.
    public var firstRequest: URLRequest? { requests.first }
    /// The last `URLRequest` made.
    public var lastRequest: URLRequest? { requests.last }
    /// The current `URLRequest` (the last one).
    public var request: URLRequest? { lastRequest }
    /// The response of the final hop, once its head has arrived.
    public var response: HTTPURLResponse? { mutableState.read { $0.head }?.httpResponse }
    /// The error that ended the request, or that validation found.
    public var error: AFError? { mutableState.read { $0.error } }
    /// How many redirects were followed.
    public var redirectCount: Int { mutableState.read { $0.machine.redirectCount } }
    /// URLSession's metrics of the last attempt: always `nil` on Linux, as with Alamofire there (FoundationNetworking
    /// never reports them). Bluebonnet's measurements are `taskMetrics`.
    public var metrics: URLSessionTaskMetrics? { nil }
    /// URLSession's metrics of every attempt: always empty on Linux. Bluebonnet's are `allTaskMetrics`.
    public var allMetrics: [URLSessionTaskMetrics] { [] }
    /// URLSession's metrics of the first attempt: always `nil` on Linux. Bluebonnet's are `firstTaskMetrics`.
    public var firstMetrics: URLSessionTaskMetrics? { nil }
    /// URLSession's metrics of the last attempt: always `nil` on Linux. Bluebonnet's are `lastTaskMetrics`.
    public var lastMetrics: URLSessionTaskMetrics? { nil }
    /// What Bluebonnet measured of the last attempt, once its first hop began.
    public var taskMetrics: RequestTaskMetrics? { mutableState.read { $0.metrics.last } }
    /// What Bluebonnet measured of every attempt, in order: one entry per retry.
    public var allTaskMetrics: [RequestTaskMetrics] { mutableState.read { $0.metrics.all } }
    /// What Bluebonnet measured of the first attempt.
    public var firstTaskMetrics: RequestTaskMetrics? { allTaskMetrics.first }
    /// What Bluebonnet measured of the last attempt: `taskMetrics`.
    public var lastTaskMetrics: RequestTaskMetrics? { taskMetrics }

    // MARK: - Interceptors

    /// The request's own interceptor: the one it was made with, composed with those chained on; `nil` when none.
    public var interceptor: (any RequestInterceptor)? { mutableState.read { $0.interceptor } }

    /// Adds an interceptor: it adapts and retries after the session's and the request's earlier ones. Chain it
    /// before the request is resumed to have it see the first attempt.
    ///
    /// - Parameter interceptor: The `RequestInterceptor`.
    /// - Returns: The instance.
    @discardableResult
    public func interceptor(_ interceptor: any RequestInterceptor) -> Self {
        mutableState.write { state in
            state.interceptor = state.interceptor.map { Interceptor(interceptors: [$0, interceptor]) } ?? interceptor
            state.machine.addInterceptor(adapts: true)
        }
        return self
    }

    /// Adds an adapter: it runs after the session's and the request's earlier adapters.
    ///
    /// - Parameter adapter: The `RequestAdapter`.
    /// - Returns: The instance.
    @discardableResult
    public func adapt(using adapter: any RequestAdapter) -> Self {
        mutableState.write { state in
            let existing = state.interceptor.map { [$0] } ?? []
            state.interceptor = Interceptor(adapters: existing + [adapter], retriers: existing)
            state.machine.addInterceptor(adapts: true)
        }
        return self
    }

    /// Adds a retrier: it is asked after the session's and the request's earlier retriers.
    ///
    /// - Parameter retrier: The `RequestRetrier`.
    /// - Returns: The instance.
    @discardableResult
    public func retry(using retrier: any RequestRetrier) -> Self {
        mutableState.write { state in
            let existing = state.interceptor.map { [$0] } ?? []
            state.interceptor = Interceptor(adapters: existing, retriers: existing + [retrier])
            state.machine.addInterceptor(adapts: false)
        }
        return self
    }

    /// The session's interceptor, then the request's, as one adapter (Alamofire's order); `nil` when there is none.
    var adapter: (any RequestAdapter)? {
        switch (interceptor, context.interceptor) {
        case let (own?, session?): Interceptor(adapters: [session, own])
        case let (own, session): own ?? session
        }
    }

    /// The session's interceptor, then the request's, as one retrier (Alamofire's order): a `.retry` of the session's
    /// means the request's is not asked. `nil` when there is none.
    var retrier: (any RequestRetrier)? {
        switch (interceptor, context.interceptor) {
        case let (own?, session?): Interceptor(retriers: [session, own])
        case let (own, session): own ?? session
        }
    }

    // MARK: - Controls

    /// Cancels the request. Response handlers receive `AFError.explicitlyCancelled`; a request that already
    /// completed keeps its result.
    ///
    /// - Returns: The instance.
    @discardableResult
    public func cancel() -> Self {
        // The monitored task is taken with the transition: once the engine is told, the attempt may end at once.
        let (action, monitored, announced) = mutableState.write {
            state -> (RequestStateMachine.Action, RequestTask?, RequestTask?) in
            let action = state.machine.cancel()
            guard action.isTaken else { return (action, nil, nil) }
            return (action, state.task, state.attemptAnnounced ? state.task : nil)
        }
        guard action.isTaken else { return self }
        eventMonitor?.requestDidCancel(self)
        // An announced attempt's task is cancelled before it ever ran, as Alamofire's suspended task is.
        if let announced { tellTask(.cancel, announced) }
        perform(action, monitoredTask: monitored)
        return self
    }

    /// Ends a request that waited to start when its session went away, with `AFError.sessionDeinitialized`.
    func abandonForSessionDeinit() {
        abandon(with: .sessionDeinitialized)
    }

    /// Ends a request that has not begun its first attempt with `error`: its session went away, or is shutting down.
    func abandon(with error: AFError) {
        perform(mutableState.write { $0.machine.abandon(with: error) })
    }

    /// Cancels the request as `cancel()` does (a subclass's own cancelling included), but it ends with `error`: its
    /// session shut down.
    func cancel(dueTo error: AFError) {
        mutableState.write { $0.machine.setCancellationError(error) }
        cancel()
    }

    /// Suspends the request: no more of the response body is read, and no more of an upload's body is sent, until
    /// `resume()`.
    ///
    /// - Returns: The instance.
    @discardableResult
    public func suspend() -> Self {
        let (action, monitored, announced) = mutableState.write { state in
            (state.machine.suspend(), state.task, state.attemptAnnounced ? state.task : nil)
        }
        guard action.isTaken else { return self }
        eventMonitor?.requestDidSuspend(self)
        if let announced { tellTask(.suspend, announced) }
        perform(action, monitoredTask: monitored)
        return self
    }

    /// Resumes the request: starts it if its `URLRequest` is ready, or continues reading after `suspend()`.
    ///
    /// - Returns: The instance.
    @discardableResult
    public func resume() -> Self {
        let delegate = lifecycleDelegate
        let (action, refused, monitored) = mutableState.write {
            state -> (RequestStateMachine.Action, Bool, RequestTask?) in
            // The session counts the request, or refuses it (it is shutting down), with the transition: a shutdown
            // beginning now either waits for it or it is never sent.
            if state.machine.startsOnResume, let refusal = delegate?.requestDidStart(self) {
                return (state.machine.abandon(with: refusal), true, nil)
            }
            return (state.machine.resume(), false, state.task)
        }
        guard action.isTaken else { return self }
        if refused {
            perform(action)
            return self
        }
        eventMonitor?.requestDidResume(self)
        perform(action, monitoredTask: monitored)
        return self
    }

    /// Adds a monitor of this request's events alone, told after the session's monitors, from the next event on.
    ///
    /// - Parameter eventMonitor: The monitor.
    /// - Returns: The instance.
    @discardableResult
    public func eventMonitor(_ eventMonitor: any EventMonitor) -> Self {
        ownMonitors.write { own in
            let composite: CompositeEventMonitor
            if let existing = own?.monitor ?? (sessionMonitor as? CompositeEventMonitor) {
                composite = existing.adding(eventMonitor)
            } else if let sessionMonitor {
                composite = CompositeEventMonitor(monitors: [sessionMonitor, eventMonitor])
            } else {
                composite = CompositeEventMonitor(monitors: [eventMonitor])
            }
            own = (composite, composite.handledEvents)
        }
        hasOwnMonitors.store(true, ordering: .releasing)
        return self
    }

    /// Sets a value a feature keeps on the request.
    func setFeature<Key: FeatureKey>(_ key: Key.Type, to value: Key.Value?) {
        mutableState.write { $0.features[key] = value }
    }

    /// A value a feature keeps on the request.
    func feature<Key: FeatureKey>(_ key: Key.Type) -> Key.Value? {
        mutableState.read { $0.features[key] }
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

    /// What `onFollowedResponse(on:perform:)` is called with: the request a hop sent, the response it followed, and
    /// that response's body.
    public typealias FollowedResponseHandler =
        @Sendable (_ request: URLRequest, _ response: HTTPURLResponse, _ data: Data?) -> Void

    /// Calls `handler` with each response this request followed instead of delivering (a redirect, an answered
    /// authentication challenge), with the request that hop sent and the response's body, before the next hop's
    /// response is handled. Bluebonnet's own: URLSession never shows these to Alamofire's requests. `bonnet --all`
    /// prints a redirect chain with it.
    ///
    /// - Parameters:
    ///   - queue:   The queue the handler runs on. `.main` by default.
    ///   - handler: The closure.
    /// - Returns: The instance.
    @discardableResult
    public func onFollowedResponse(
        on queue: DispatchQueue = .main, perform handler: @escaping FollowedResponseHandler
    ) -> Self {
        mutableState.write { $0.followedResponseHandlers.append((queue, handler)) }
        return self
    }

    /// Calls `handler` with each `URLRequest` this request makes (the first, then one per redirect).
    ///
    /// - Parameters:
    ///   - queue:   The queue the handler runs on. `.main` by default.
    ///   - handler: The closure.
    /// - Returns: The instance.
    @discardableResult
    public func onURLRequestCreation(
        on queue: DispatchQueue = .main, perform handler: @escaping @Sendable (URLRequest) -> Void
    ) -> Self {
        let (existing, create) = mutableState.write { state -> (URLRequest?, Bool) in
            state.urlRequestHandlers.append((queue, handler))
            return (state.requests.last, state.machine.awaitsCreation)
        }
        if let existing { queue.async { handler(existing) } }
        // A lazy request makes its `URLRequest` on its first resume; an eager one was queued when it was made.
        if create, context.setsUpEagerly { createURLRequestOnRequestQueue() }
        return self
    }

    // MARK: - Creation

    /// Called once the `URLRequest` is made (first attempt and each retry). A kind that makes its body makes it with
    /// its first `URLRequest`: a retry sends the body made then, so a form is not encoded twice, and a file it was
    /// written to is not left behind.
    func didCreateInitialURLRequest(_ urlRequest: URLRequest) {
        var made: (maker: any RequestBodyMaking, requestEnded: Bool)?
        if case .madeByRequest = kind.body, let maker = self as? any RequestBodyMaking,
            mutableState.read({ $0.machine.awaitsBody })
        {
            switch maker.makeBody() {
            case let .success(body):
                made = (maker, mutableState.write { $0.machine.didMakeBody(body) })
            case let .failure(error):
                failBeforeExecuting(with: error)
                return
            }
        }
        announceURLRequest(urlRequest)
        if let made { made.maker.didMakeBody(requestAlreadyEnded: made.requestEnded) }
    }

    private func announceURLRequest(_ urlRequest: URLRequest) {
        typealias Handlers = (
            [(queue: DispatchQueue, handler: @Sendable (URLRequest) -> Void)],
            [(queue: DispatchQueue, handler: @Sendable (String) -> Void)]
        )
        let (action, handlers) = mutableState.write { state -> (RequestStateMachine.Action, Handlers) in
            let action = state.machine.didCreateURLRequest(urlRequest)
            guard action.isTaken else { return (action, ([], [])) }
            state.requests.append(urlRequest)
            let curl = state.cURLHandlers
            state.cURLHandlers = []
            return (action, (state.urlRequestHandlers, curl))
        }
        guard action.isTaken else { return }
        tellMonitor(.other) { $0.request(self, didCreateInitialURLRequest: urlRequest) }
        notify(urlRequest, urlHandlers: handlers.0, cURLHandlers: handlers.1)
        perform(action)
    }

    // MARK: - Completion

    /// The body of the final response when it was held in memory (`nil` when the request failed or was cancelled, when
    /// it streamed to its consumer, or when a retry forgets the last attempt's): kept as `data`, or handed to the
    /// consumer when the kind streams.
    func takeHeldBody(_ body: Data?) {
        if let bodyConsumer {
            // A held body reaches a consumer only through a follower's decision (made on `underlyingQueue`) or a local
            // file (read on `Offload`): a consumer writes it to a file or runs its validators on it.
            if body != nil { Confinement.assertOffEventLoop("A held response body's consumer") }
            bodyConsumer.responseBodyWasHeld(body)
        } else {
            mutableState.write { $0.data = body?.isEmpty == false ? body : nil }
        }
    }

    /// Whose credentials (the session's `Authorization`, `Proxy-Authorization` and `Cookie` headers, the request's
    /// `authenticate` credential, a URL's user and password) a request may carry.
    enum CredentialOwner: Sendable {
        /// The origin of this URL.
        case origin(URL)
        /// No origin: the request goes without them.
        case nobody
    }

    /// The URL whose origin owns the request's credentials, given its first request's URL.
    func credentialOwner(firstURL: URL?) -> URL? {
        switch kind.credentials {
        case .firstRequestOrigin:
            return firstURL
        case let .recorded(owner):
            switch owner() {
            case let .origin(url): return url
            case .nobody: return nil
            }
        }
    }

    /// Whether the request's body can be sent again, to answer a challenge: not a stream read once.
    var canResendBody: Bool {
        if case .inURLRequest = kind.body { return true }
        return mutableState.read { $0.machine.canResendBody }
    }

    /// Whether the request streams a body of its own rather than its `URLRequest`'s `httpBody`.
    var sendsUploadBody: Bool {
        if case .inURLRequest = kind.body { return false }
        return mutableState.read { $0.machine.sendsBody }
    }

    /// Ends the request: stamps the time, then validators (unless this attempt's already ran) and response handlers
    /// run, on `serializationQueue` unless everything queued is cheap and non-blocking. Reached only through the
    /// executor's `.finish`.
    func finish(_ outcome: RequestStateMachine.Outcome) {
        lifecycleDelegate?.cleanup(after: self)
        let now = Timeline.now()
        let cleanupBlocks = kind.cleanup?.blocks() ?? false
        let error = outcome.error
        let (inline, ended) = mutableState.write { state -> (Bool, AttemptEnd?) in
            state.machine.beginFinishing()
            // A request cancelled while a redirect or retry was being decided ends its attempt here.
            let ended = endAttempt(&state, at: now, error: error)
            // Complete, the download's total is what arrived, so `downloadProgress` reads 1.0; the handlers are not
            // called again for it, as Alamofire reports progress per chunk only.
            if error == nil { state.progress.download.total = state.progress.download.completed }
            state.completedTime = now
            let inline =
                !cleanupBlocks && (outcome.validated || state.validatorsAreLightweight)
                && state.machine.handlersAreInlineSafe && !state.progress.hasHandlers
            return (inline, ended)
        }
        tell(ended)
        if let observer { observer.requestDidFinish(self, response: mutableState.read { $0.head }, error: error) }
        context.logger?.debug("completed", metadata: logMetadata(["error": "\(Self.logName(of: error))"]))
        guard inline else {
            serializationQueue.async { [self] in runFinish(validated: outcome.validated, inline: false) }
            return
        }
        runFinish(validated: outcome.validated, inline: true)
    }

    private func runFinish(validated: Bool, inline: Bool) {
        if !inline { dispatchPrecondition(condition: .onQueue(serializationQueue)) }
        kind.cleanup?.run()
        if !validated { runValidators() }
        mutableState.write { $0.machine.beginHandlers() }
        // After the handlers began, as Alamofire does: a request with no handler is `.finished` when its monitors hear
        // of it; the event is still on its way before any handler runs.
        eventMonitor?.requestDidFinish(self)
        processResponseSerializers(inline: inline)
    }

    func runValidators() {
        let validators = mutableState.read { $0.validators }
        for validator in validators { validator() }
    }

    /// Runs queued handlers in order until none is left. Inline (off `serializationQueue`), it stops at the first
    /// handler that is not inline-safe and lets `serializationQueue` run the rest, still in order.
    func processResponseSerializers(inline: Bool) {
        if !inline {
            dispatchPrecondition(condition: .onQueue(serializationQueue))
            Confinement.assertOffEventLoop("A response serializer")
        }
        while true {
            switch mutableState.write({ $0.machine.nextHandler(inline: inline) }) {
            case let .run(handler): handler()
            case .hop: serializationQueue.async { self.processResponseSerializers(inline: false) }; return
            case .done: return
            }
        }
    }

    /// Queues a response handler: it runs after completion, in order; at once if the request already finished.
    ///
    /// - Parameters:
    ///   - inlineSafe: Whether the handler is cheap and never blocks, so it may run on any thread.
    ///   - closure:    The handler.
    func appendResponseSerializer(inlineSafe: Bool = false, _ closure: @escaping @Sendable () -> Void) {
        appendResponseHandler(RequestStateMachine.ResponseHandler(inlineSafe: inlineSafe, run: closure))
    }

    /// Queues a response handler whose serializer may fail: a failure is shown to the retrier first, as in Alamofire
    /// (`SerializingHandler`).
    ///
    /// - Parameters:
    ///   - inlineSafe: Whether the serializer is cheap and never blocks.
    ///   - serialize:  Makes the response from the finished request.
    ///   - failure:    The response's error, if it failed.
    ///   - replacing:  The response with another error (the retrier's).
    ///   - deliver:    Hands the response over.
    func appendSerializingHandler<Response>(
        inlineSafe: Bool, serialize: @escaping @Sendable () -> Response,
        failure: @escaping @Sendable (Response) -> AFError?,
        replacing: @escaping @Sendable (Response, AFError) -> Response,
        deliver: @escaping @Sendable (Response) -> Void
    ) {
        let handler = SerializingHandler(
            request: self, inlineSafe: inlineSafe, serialize: serialize, failure: failure, replacingError: replacing,
            deliver: deliver)
        appendResponseHandler(handler.handler)
    }

    private func appendResponseHandler(_ handler: RequestStateMachine.ResponseHandler) {
        let (action, resumeNow) = mutableState.write { $0.machine.appendHandler(handler) }
        perform(action)
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
            state.machine.recordFailure(error)
        }
    }

    /// What a response handler sees of the finished request: only what a response is made of, taken in one lock
    /// when the handler's turn comes, so later handlers cannot change it.
    struct Finished: @unchecked Sendable {
        // @unchecked: values copied under the lock; nothing mutates them afterwards (the response is immutable).
        let request: URLRequest?
        /// The response head; `HTTPURLResponse` is made from it only when something reads `response`.
        let head: ResponseHead?
        let data: Data?
        let error: AFError?
        let metrics: RequestTaskMetrics?
        let startTime: CFAbsoluteTime?
        let initialResponseTime: CFAbsoluteTime?
        let completedTime: CFAbsoluteTime?

        /// The response, made from the head.
        var response: HTTPURLResponse? { head?.httpResponse }

        /// The timeline as of `serializationCompletedTime`.
        func timeline(serializationCompletedAt end: CFAbsoluteTime) -> Timeline {
            let completed = completedTime ?? end
            let start = startTime ?? completed
            return Timeline(
                requestStartTime: start, initialResponseTime: initialResponseTime ?? completed,
                requestCompletedTime: completed, serializationCompletedTime: end)
        }
    }

    /// The finished request now, in one lock.
    func finished() -> Finished {
        mutableState.read { state in
            Finished(
                request: state.requests.last, head: state.head, data: state.data, error: state.error,
                metrics: state.metrics.last, startTime: state.startTime, initialResponseTime: state.initialResponseTime,
                completedTime: state.completedTime)
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
    /// `METHOD URL` (without the URL's user and password), with the status code once a response arrived.
    public var description: String {
        guard let request = lastRequest, let url = request.url, let method = request.httpMethod else {
            return "No request created yet."
        }
        let requestDescription = "\(method) \(url.absoluteStringWithoutUserInfo)"
        return response.map { "\(requestDescription) (\($0.statusCode))" } ?? requestDescription
    }
}

extension Request: CustomDebugStringConvertible {
    /// The request as a cURL command.
    public var debugDescription: String { cURLDescription() }
}
