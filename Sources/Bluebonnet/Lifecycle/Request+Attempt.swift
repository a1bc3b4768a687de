import Foundation
import Logging
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// An attempt: make the `URLRequest`, adapt it, send each hop (through the session's hop preparers), let the head
// steps see each response head, let the hop followers decide whether another hop follows, and ask the retrier about
// failures. Engine callbacks arrive on NIO event loops; they only update the state machine, and anything that runs
// user code (follower decisions, head steps' work, retriers, validators before a retry decision) hops to
// `underlyingQueue` first.

extension Request {
    // MARK: - Making the URLRequest

    /// Makes the `URLRequest` on `requestQueue`, unless the first resume already did.
    ///
    /// - Parameter owner: What must live until it is made: an `.eager` session, so that a request set up at once has
    ///   its `URLRequest` and its task when the session goes away, as Alamofire's does.
    func createURLRequestOnRequestQueue(keepingAlive owner: (any AnyObject & Sendable)? = nil) {
        context.requestQueue.async { [self] in
            withExtendedLifetime(owner) {
                perform(mutableState.write { $0.machine.claimCreation() })
            }
        }
    }

    /// Makes the `URLRequest` from the request's convertible, then starts it if it is resumed. The caller has moved
    /// the machine to `creatingURLRequest`.
    func createURLRequest() {
        Confinement.assertOffEventLoop("A URLRequestConvertible, RequestModifier or parameter encoder")
        do {
            let urlRequest = try makeURLRequest()
            try urlRequest.validate()
            didCreateInitialURLRequest(urlRequest)
        } catch {
            didFailToCreateURLRequest(with: error.asAFError(or: .createURLRequestFailed(error: error)))
        }
    }

    /// Called when the `URLRequest` could not be made.
    func didFailToCreateURLRequest(with error: AFError) {
        recordErrorBeforeTelling(error)
        eventMonitor?.request(self, didFailToCreateURLRequestWithError: error)
        failBeforeExecuting(with: error)
    }

    /// Makes the request's `error` the failure to make or adapt its `URLRequest` before monitors hear of it, so a
    /// monitor reads it there, as in Alamofire; a request that moved on (cancelled) keeps its own.
    private func recordErrorBeforeTelling(_ error: AFError) {
        mutableState.write { $0.machine.recordFailureBeforeTelling(error) }
    }

    /// The `URLRequest` (or the upload's body) could not be made, or the adapter failed: the retrier decides when
    /// there is one, else the request ends.
    func failBeforeExecuting(with error: AFError) {
        perform(mutableState.write { $0.machine.didFailBeforeExecuting(with: error) })
    }

    func notify(
        _ urlRequest: URLRequest,
        urlHandlers: [(queue: DispatchQueue, handler: @Sendable (URLRequest) -> Void)],
        cURLHandlers: [(queue: DispatchQueue, handler: @Sendable (String) -> Void)]
    ) {
        for (queue, handler) in urlHandlers { queue.async { handler(urlRequest) } }
        guard !cURLHandlers.isEmpty else { return }
        let curl = cURLDescription()
        for (queue, handler) in cURLHandlers { queue.async { handler(curl) } }
    }

    // MARK: - The executor

    /// Carries out what the machine decided, after the lock is released. The one place each kind of work starts:
    /// user code (followers, validators of a request with a retrier, retriers) is reached by a hop to
    /// `underlyingQueue`, since events arrive on any thread, NIO event loops included.
    ///
    /// - Parameters:
    ///   - action:        The machine's action.
    ///   - monitoredTask: The attempt's task, for the monitor's task events (when a monitor listens for them).
    func perform(_ action: RequestStateMachine.Action, monitoredTask: RequestTask? = nil) {
        switch action {
        case .none, .notTaken:
            return
        case let .createURLRequest(onRequestQueue):
            // Made inline on the caller's thread (no hop), unless that thread is an event loop: the user's
            // convertible, modifier, encoder and adapter then run on `requestQueue`, as in Alamofire.
            if onRequestQueue || Confinement.isOnEventLoop() {
                context.requestQueue.async { [self] in createURLRequest() }
            } else {
                createURLRequest()
            }
        case let .adapt(urlRequest):
            adapt(urlRequest)
        case let .execute(urlRequest):
            execute(urlRequest)
        case let .announceAttempt(urlRequest):
            announceAttempt(urlRequest)
        case let .resumeTask(task):
            if let monitoredTask { tellTask(.resume, monitoredTask) }
            task.resume()
        case let .suspendTask(task):
            if let monitoredTask { tellTask(.suspend, monitoredTask) }
            task.suspend()
        case let .cancelTask(task):
            // Told first: once the engine is told, the attempt may end at once.
            if let monitoredTask { tellTask(.cancel, monitoredTask) }
            task.cancel()
        case let .decideNextHop(decide):
            underlyingQueue.async { [self] in
                Confinement.assertOffEventLoop("A redirect handler or challenge answer")
                decide(self) { [self] decision in settle(decision) }
            }
        case let .validate(body):
            takeHeldBody(body)
            underlyingQueue.async { [self] in validateThenMaybeRetry() }
        case let .askRetrier(error):
            underlyingQueue.async { [self] in askRetrier(about: error) }
        case let .retry(delay):
            var metadata: Logger.Metadata = ["retry": "\(retryCount)"]
            if let delay { metadata["delay"] = "\(delay)" }
            context.logger?.debug("retrying", metadata: logMetadata(metadata))
            takeHeldBody(nil)
            eventMonitor?.requestIsRetrying(self)
            // Through the session, as Alamofire's `RequestDelegate` has it; by itself when the session is gone.
            if let delegate = lifecycleDelegate {
                delegate.retryRequest(self, withDelay: delay)
            } else {
                sendRetry(after: delay)
            }
        case let .finish(outcome, body):
            if !outcome.validated { takeHeldBody(body) }
            finish(outcome)
        case let .runHandlers(inline):
            if inline {
                processResponseSerializers(inline: true)
            } else {
                serializationQueue.async { self.processResponseSerializers(inline: false) }
            }
        }
    }

    // MARK: - Adapting

    private func adapt(_ urlRequest: URLRequest) {
        Confinement.assertOffEventLoop("A RequestAdapter")
        guard let adapter, let session else {
            failBeforeExecuting(with: .sessionDeinitialized)
            return
        }
        let choice: UploadBodyCodingChoice? =
            if case .inURLRequest = kind.body { nil } else { mutableState.write { $0.machine.makeCodingChoice() } }
        let state = RequestAdapterState(requestID: id, session: session, uploadBodyCoding: choice)
        adapter.adapt(urlRequest, using: state) { [self] result in
            let adapted: URLRequest
            do {
                adapted = try result.get()
                try adapted.validate()
            } catch {
                let failure = AFError.requestAdaptationFailed(error: error)
                recordErrorBeforeTelling(failure)
                eventMonitor?.request(self, didFailToAdaptURLRequest: urlRequest, withError: failure)
                failBeforeExecuting(with: failure)
                return
            }
            let action = mutableState.write { state -> RequestStateMachine.Action in
                let action = state.machine.didAdapt(adapted)
                if action.isTaken { state.requests.append(adapted) }
                return action
            }
            guard action.isTaken else { return }
            eventMonitor?.request(self, didAdaptInitialRequest: urlRequest, to: adapted)
            perform(action)
        }
    }

    // MARK: - Sending a hop

    /// Tells monitors of an attempt made and adapted before `resume()`, and of its task: `execute(_:)` then sends its
    /// first hop without telling them again.
    private func announceAttempt(_ urlRequest: URLRequest) {
        // The session went away while the request was being made: it will never be resumed through it.
        guard delegate != nil else { return abandonForSessionDeinit() }
        let monitored = !monitoredEvents.isDisjoint(with: .tasks)
        let (task, suspended) = mutableState.write { state -> (RequestTask?, Bool) in
            state.attemptAnnounced = true
            let suspended = state.machine.control == .suspended
            guard monitored || state.taskCreationHandler != nil, state.task == nil else { return (nil, suspended) }
            let task = RequestTask(attempt: state.machine.retryCount, originalRequest: urlRequest)
            state.task = task
            return (task, suspended)
        }
        tellMonitor(.other) { $0.request(self, didCreateURLRequest: urlRequest) }
        guard let task else { return }
        tellTask(.create, task)
        // Suspended before its task existed: the task is suspended as it is made, as Alamofire's is.
        if suspended { tellTask(.suspend, task) }
        tellTaskCreationHandler(task)
    }

    /// What a hop takes from the request's state as it goes out, in one lock.
    private struct HopStart {
        /// Whether monitors heard of the attempt before `resume()`, and its task then: they hear it resume.
        enum Announcement {
            case notAnnounced
            case announced(RequestTask?)
        }

        let deadline: Date?
        /// How many redirects came before the hop (0 for an attempt's first).
        let redirects: Int
        let firstURL: URL?
        /// The request's own limit on the body held in memory, when it set one.
        let ownLimit: Int64??
        /// The attempt's task, made now for a monitor or a creation handler, and whether it runs.
        let newTask: (task: RequestTask, running: Bool)?
        let announcement: Announcement
        let features: FeatureValues
        let serial: Int
    }

    /// Sends one hop. The machine is in `executing` with no task yet.
    func execute(_ urlRequest: URLRequest) {
        let now = Timeline.now()
        let monitored = !monitoredEvents.isDisjoint(with: .tasks)
        let start = mutableState.write { state -> HopStart in
            let announcement: HopStart.Announcement =
                state.attemptAnnounced ? .announced(state.task) : .notAnnounced
            state.attemptAnnounced = false
            if state.startTime == nil {
                state.startTime = now
                if let resource = context.resourceTimeout {
                    state.deadline = Date(timeIntervalSinceReferenceDate: now + resource)
                }
            }
            state.metrics.beginHop(urlRequest, at: now)
            var newTask: (task: RequestTask, running: Bool)?
            if monitored || state.taskCreationHandler != nil, state.task == nil {
                let task = RequestTask(attempt: state.machine.retryCount, originalRequest: urlRequest)
                state.task = task
                newTask = (task, state.machine.control == .resumed)
            }
            return HopStart(
                deadline: state.deadline, redirects: state.machine.redirectCount, firstURL: state.requests.first?.url,
                ownLimit: state.maximumResponseSize, newTask: newTask, announcement: announcement,
                features: state.features, serial: state.machine.hopSerial)
        }
        let (hop, serial, newTask) = (start.redirects, start.serial, start.newTask)
        switch start.announcement {
        case let .announced(task): if let task { tellTask(.resume, task) }
        case .notAnnounced: tellMonitor(.other) { $0.request(self, didCreateURLRequest: urlRequest) }
        }
        // Told before the engine has it, so no event of the task can reach a monitor ahead of its creation.
        if let (task, running) = newTask {
            tellTask(.create, task)
            if running { tellTask(.resume, task) }
            tellTaskCreationHandler(task)
        }
        context.logger?.debug(
            "sending",
            metadata: logMetadata([
                "hop": "\(hop)", "method": "\(urlRequest.httpMethod ?? "GET")",
                "url": "\(Self.redacted(urlRequest.url))",
            ]))
        let limit = start.ownLimit ?? context.maximumResponseSize
        if hop == 0, kind.loadsLocalFiles, LocalFileTransport.isLocalFile(urlRequest.url), let url = urlRequest.url {
            let task = LocalFileTransport.load(url, maximumBodySize: limit, sink: self)
            perform(mutableState.write { $0.machine.didCreateTask(task, serial: serial) }, monitoredTask: newTask?.task)
            return
        }
        var prepared: TransportRequest
        do {
            prepared = try context.transportRequest(
                for: urlRequest, deadline: start.deadline,
                sendsSessionCredentials: sendsSessionCredentials(
                    to: urlRequest.url, firstURL: start.firstURL, hop: hop),
                maximumBodySize: limit,
                of: self, features: start.features)
            prepared.body = try takeBody(for: urlRequest)
            if let body = prepared.body { didStartSendingBody(length: body.length) }
            observer?.hopWillSend(&prepared)
        } catch {
            hopDidComplete(.failure(error.asAFError(or: .createURLRequestFailed(error: error))), body: nil)
            return
        }
        let task = carry(prepared)
        perform(mutableState.write { $0.machine.didCreateTask(task, serial: serial) }, monitoredTask: newTask?.task)
    }

    /// The body the hop sends beside its `URLRequest`'s, counted as sent; a body that cannot be sent fails the hop.
    private func takeBody(for urlRequest: URLRequest) throws -> UploadBody? {
        if case .inURLRequest = kind.body { return nil }
        let taken = mutableState.write { state in
            state.machine.takeBody(for: urlRequest, firstMethod: state.requests.first?.httpMethod)
        }
        switch taken {
        case .none: return nil
        case let .send(body): return body
        case let .fail(error): throw error
        }
    }

    /// Hands a prepared hop to the engine that carries the request's kind, with the request as its sink.
    private func carry(_ hop: TransportRequest) -> any TransportTask {
        switch kind.route {
        case .http:
            return context.transport.execute(hop, sink: self)
        case let .webSocket(subprotocol, options):
            guard let transport = lifecycleDelegate?.webSocketTransport, let sink = self as? any WebSocketSink else {
                transportDidComplete(body: Data(), error: .sessionDeinitialized)
                return CompletedTransportTask()
            }
            var hop = hop
            if let subprotocol {
                hop.headers.removeAll { $0.name.lowercased() == "sec-websocket-protocol" }
                hop.headers.append((name: "Sec-WebSocket-Protocol", value: subprotocol))
            }
            return transport.connect(hop, options: options, sink: sink)
        }
    }

    /// Whether a hop to `url` carries the session's credentials (`Authorization`, `Proxy-Authorization` and `Cookie`
    /// headers): they were set for the origin the request starts on, so a redirect elsewhere goes without them, as
    /// the redirect rules already stripped the request's own. A resumed download's first URL may be another origin's
    /// than the one its credentials belong to.
    ///
    /// - Parameters:
    ///   - url:      The hop's URL.
    ///   - firstURL: The request's first URL.
    ///   - hop:      How many redirects came before the hop (0 for the first request).
    func sendsSessionCredentials(to url: URL?, firstURL: URL?, hop: Int) -> Bool {
        if case .recorded = kind.credentials {
            let owner = credentialOwner(firstURL: firstURL)
            return owner.flatMap { owner in url.map { Origin.same(owner, $0) } } ?? false
        }
        if hop == 0 { return true }
        guard let firstURL, let url else { return false }
        return Origin.same(firstURL, url)
    }

    /// Tells the session's monitor one of URLSession's own events (`urlSession(...)`), when it listens for `kind`.
    /// The attempt's `URLSessionTask`, and whatever else `event` makes (an `HTTPURLResponse`), is made on each
    /// monitor's queue when the event runs there: the caller may be an event loop, which does bookkeeping only.
    ///
    /// - Parameters:
    ///   - kind:  What kind of event it is.
    ///   - ended: The attempt's task, when the attempt has just ended (the request no longer holds it).
    ///   - event: Tells one monitor, given the session's `URLSession` and the attempt's task.
    func tellSessionMonitor(
        _ kind: EventKinds = .other, ended: RequestTask? = nil,
        _ event: @escaping @Sendable (any EventMonitor, URLSession, URLSessionTask) -> Void
    ) {
        guard sessionMonitoredEvents.contains(kind), let sessionMonitor,
            let task = ended ?? mutableState.read({ $0.task }), let urlSession = lifecycleDelegate?.eventURLSession
        else { return }
        if let composite = sessionMonitor as? CompositeEventMonitor {
            composite.performEvent(kind) { [self] monitor in event(monitor, urlSession, sessionTask(for: task)) }
        } else {
            event(sessionMonitor, urlSession, sessionTask(for: task))
        }
    }

    /// What a monitor is told once an attempt ended: a value rather than a closure, so ending an attempt allocates
    /// nothing for it.
    struct AttemptEnd {
        let monitor: any EventMonitor
        let task: RequestTask
        let metrics: RequestTaskMetrics?
        let error: AFError?
    }

    /// The attempt ended: its metrics are sealed and, for a monitor, its task completes. Runs inside the caller's
    /// lock; the monitor is told with `tell(_:)` once it is released.
    func endAttempt(_ state: inout MutableState, at time: CFAbsoluteTime, error: AFError?) -> AttemptEnd? {
        let metrics = state.metrics.endAttempt(
            at: time, error: error, hadTask: state.task != nil || state.attemptAnnounced)
        guard let eventMonitor, let task = state.task else { return nil }
        state.task = nil
        return AttemptEnd(monitor: eventMonitor, task: task, metrics: metrics, error: error)
    }

    /// Tells the monitor that an attempt ended: its metrics, then its task's completion.
    func tell(_ end: AttemptEnd?) {
        guard let end else { return }
        if let metrics = end.metrics { tellMonitor(.metrics) { $0.request(self, didGatherTaskMetrics: metrics) } }
        // URLSession's delegate hears of the task's end first, with the error as URLSession reports it.
        let error = end.error?.underlyingError ?? end.error
        tellSessionMonitor(ended: end.task) { $0.urlSession($1, task: $2, didCompleteWithError: error) }
        tellTask(.complete, end.task, error: end.error)
    }

    /// The request id, and `extra`, as log metadata.
    func logMetadata(_ extra: Logger.Metadata = [:]) -> Logger.Metadata {
        var metadata = extra
        metadata["bluebonnet-request-id"] = "\(id)"
        return metadata
    }

    /// An error fit for a log line: its case name only, since the descriptions of some carry URLs.
    static func logName(of error: AFError?) -> String {
        guard let error else { return "none" }
        return Mirror(reflecting: error).children.first?.label ?? "explicitlyCancelled"
    }

    /// A URL fit for a log line: no user, password, query or fragment, which may carry credentials.
    static func redacted(_ url: URL?) -> String {
        guard let url, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "?" }
        components.user = nil
        components.password = nil
        let hadQuery = components.query != nil
        components.query = nil
        components.fragment = nil
        return (components.string ?? "?") + (hadQuery ? "?…" : "")
    }

    // MARK: - A hop ended

    /// Weighs a finished hop. Runs on whatever thread the engine completes on: bookkeeping only, user code hops.
    func hopDidComplete(_ outcome: RequestStateMachine.HopOutcome, body: Data?) {
        let now = Timeline.now()
        var failure: AFError?
        if case let .failure(error) = outcome { failure = error }
        let (action, ended) = mutableState.write { state -> (RequestStateMachine.Action, AttemptEnd?) in
            let action = state.machine.hopDidComplete(outcome, body: body)
            if case .decideNextHop = action { return (action, nil) }
            return (action, endAttempt(&state, at: now, error: failure))
        }
        // The body a request holds in memory reaches a monitor whole, before its task completes.
        if sessionMonitoredEvents.contains(.bodyData), let ended {
            switch action {
            case let .validate(body?), let .finish(_, body?):
                if !body.isEmpty { tellDidReceiveData(body, ended: ended.task) }
            default: break
            }
        }
        tell(ended)
        observer?.hopDidEnd(error: failure)
        if let logger = context.logger {
            let status = mutableState.read { $0.head?.statusCode }
            logger.debug(
                "hop ended",
                metadata: logMetadata([
                    "status": "\(status.map(String.init) ?? "none")",
                    "error": "\(Self.logName(of: failure))",
                ]))
        }
        perform(action)
    }

    /// Carries out a follower's decision: send another hop, the same hop again, or deliver the response. A decision
    /// may come back on any thread, an event loop included; delivering hands the body to the request (a download
    /// writes it to its file) and may finish it, so a delivery is made on `underlyingQueue`.
    private func settle(_ decision: HopDecision, onUnderlyingQueue: Bool = false) {
        if case .deliver = decision, !onUnderlyingQueue {
            underlyingQueue.async { [self] in settle(decision, onUnderlyingQueue: true) }
            return
        }
        typealias URLHandlers = [(queue: DispatchQueue, handler: @Sendable (URLRequest) -> Void)]
        typealias Followed = (
            handlers: [(queue: DispatchQueue, handler: FollowedResponseHandler)], request: URLRequest,
            head: ResponseHead, body: Data?
        )
        let (action, urlHandlers, followed) = mutableState.write {
            state -> (RequestStateMachine.Action, URLHandlers, Followed?) in
            let body = state.machine.bodyAwaitingDecision
            let action = state.machine.didDecideNextHop(decision)
            guard case .execute = action else { return (action, [], nil) }
            var followed: Followed?
            if !state.followedResponseHandlers.isEmpty, let head = state.head,
                let request = state.metrics.latestHopRequest
            {
                followed = (state.followedResponseHandlers, request, head, body)
            }
            state.head = nil
            guard case let .newHop(next) = decision else { return (action, [], followed) }
            state.metrics.noteRedirect()
            state.requests.append(next)
            return (action, state.urlRequestHandlers, followed)
        }
        guard action.isTaken else { return }
        if let followed {
            // The response is made on the handler's queue: a decision may come back on an event loop.
            for (queue, handler) in followed.handlers {
                queue.async { handler(followed.request, followed.head.httpResponse, followed.body) }
            }
        }
        if case let .newHop(next) = decision { notify(next, urlHandlers: urlHandlers, cURLHandlers: []) }
        perform(action)
    }

    // MARK: - Retrying

    /// Runs the validators of a successful hop on `underlyingQueue`, then lets the retrier judge a failure.
    private func validateThenMaybeRetry() {
        runValidators()
        perform(mutableState.write { state in state.machine.didValidate(error: state.error) })
    }

    /// Asks the retriers about `error`, through the session (`RequestDelegate.retryResult(for:dueTo:completion:)`);
    /// runs on `underlyingQueue`.
    func askRetrier(about error: AFError) {
        guard let delegate = lifecycleDelegate, retrier != nil else {
            settleRetry(.doNotRetry)
            return
        }
        delegate.retryResult(for: self, dueTo: error) { [self] result in settleRetry(result) }
    }

    /// Sends the request again once its machine decided so: after `delay`, or at once. A timer, not a blocked thread:
    /// cancelling meanwhile completes the request at once, and this finds the machine moved on. A request whose
    /// machine is not waiting to retry is left as it is.
    func sendRetry(after delay: TimeInterval?) {
        guard let delay else {
            underlyingQueue.async { [self] in
                perform(mutableState.write { $0.machine.takeRetrySend() })
            }
            return
        }
        underlyingQueue.asyncAfter(deadline: .now() + max(0, delay)) { [self] in
            perform(
                mutableState.write { state in
                    state.machine.awaitsRetryDelay ? state.machine.retryDelayDidElapse() : .notTaken
                })
        }
    }

    private func settleRetry(_ result: RetryResult) {
        let action = mutableState.write { state -> RequestStateMachine.Action in
            let action = state.machine.didDecideRetry(result)
            switch action {
            case .retry:
                state.forgetAttempt()
            default:
                break
            }
            return action
        }
        perform(action)
    }
}

// MARK: - Transport events

@_spi(Transport) extension Request: TransportSink {
    @_spi(Transport) public func transportWillServeFromCache() {
        mutableState.write { $0.metrics.updateHop { $0.fetchType = .localCache } }
    }

    @_spi(Transport) public func transportDidSendRequestHead() {
        let now = Timeline.now()
        mutableState.write { $0.metrics.updateHop { $0.requestStartTime = now } }
    }

    @_spi(Transport) public func transportDidReceiveResponse(
        _ response: ResponseHead, expectedBodyLength expected: Int64, encodedBodyLength: Int64??,
        protocolName: String, setCookieFields: [String]
    ) -> TransportHeadReply {
        let now = Timeline.now()
        observer?.hopDidReceive(response)
        let consumer = bodyConsumer
        let headSteps = context.headSteps
        // A monitor hears of the response the request delivers, not of one it follows, as with URLSession.
        let monitorsHead = sessionMonitoredEvents.contains(.other)
        let (streams, head, ownStep, final) = mutableState.write {
            state -> (Bool, ResponseHeadFacts?, (any ResponseHeadStep)?, Bool) in
            state.head = response
            state.initialResponseTime = now
            state.progress.download.completed = 0
            state.progress.download.total = expected
            state.metrics.updateHop { hop in
                hop.responseStartTime = now
                hop.head = response
                hop.protocolName = protocolName
                hop.responseBodyBytesEncoded = encodedBodyLength
            }
            // A response that will be followed (a redirect, a challenge) keeps its body in memory: only the final
            // response's body reaches a file or a stream, and only the final response is shown to
            // `onHTTPResponse`, as URLSession shows Alamofire's only the response it does not follow itself.
            var final = true
            if consumer != nil || state.headStep != nil || monitorsHead { final = !mayFollow(response, state: state) }
            let streams = consumer != nil && final
            state.machine.hopWillReceiveBody(streaming: streams)
            guard !headSteps.isEmpty || state.headStep != nil else { return (streams, nil, nil, final) }
            let head = ResponseHeadFacts(
                head: response, hopRequest: state.machine.hop?.request,
                firstURL: state.requests.first?.url, setCookieFields: setCookieFields,
                features: state.features)
            // The request's own step (`onHTTPResponse`) sees final responses only.
            return (streams, head, final ? state.headStep : nil, final)
        }
        if monitorsHead { tellHeadEvents(response, final: final) }
        if streams, let consumer { consumer.responseBodyWillBegin(response) }
        guard let head else { return .proceed(streamingBody: streams) }
        // Each step looks at the head here, on the engine's thread; what must happen before the body is read runs
        // in order off the event loop.
        var works: [HeadWork] = []
        for step in headSteps { if let work = step.work(for: head) { works.append(work) } }
        if let work = ownStep?.work(for: head) { works.append(work) }
        guard !works.isEmpty else { return .proceed(streamingBody: streams) }
        return TransportHeadReply(streamsBody: streams) { [self, works] readiness in
            underlyingQueue.async { [self] in
                Confinement.assertOffEventLoop("A response head step (stored cookies, onHTTPResponse)")
                runHeadWork(works[...], readiness: readiness)
            }
        }
    }

    /// Runs the head steps' work in order; the body is read once all of it is done, and the first error ends the hop.
    private func runHeadWork(_ works: ArraySlice<HeadWork>, readiness: TransportReadiness) {
        guard let work = works.first else {
            readiness.ready()
            return
        }
        work(self) { [self] error in
            if let error {
                readiness.fail(error)
            } else {
                runHeadWork(works.dropFirst(), readiness: readiness)
            }
        }
    }

    /// Tells a monitor what URLSession tells Alamofire's delegate of a head: the followers' events (a 401's
    /// challenge), then, for the response the request delivers, the response itself.
    private func tellHeadEvents(_ response: ResponseHead, final: Bool) {
        let followers = context.followers
        if followers.contains(where: { $0.considers(status: response.statusCode) }) {
            let events = mutableState.read { state -> [SessionMonitorEvent] in
                guard let facts = hopFacts(response, state: state) else { return [] }
                return followers.compactMap {
                    $0.considers(status: response.statusCode) ? $0.monitorEvent(for: facts) : nil
                }
            }
            for event in events { tellSessionMonitor(.other, event) }
        }
        if final { tellDidReceiveResponse(response) }
    }

    /// What a follower sees of the current hop, given its response; read inside the caller's lock.
    private func hopFacts(_ response: ResponseHead, state: borrowing MutableState) -> HopFacts? {
        guard let last = state.requests.last, let hop = state.machine.hop else { return nil }
        return HopFacts(
            head: response, hopRequest: hop.request, lastRequest: last,
            credentialOwner: credentialOwner(firstURL: state.requests.first?.url),
            followedHops: state.machine.redirectCount, features: state.features, notes: hop.notes)
    }

    /// Whether some follower may send another hop for `response`; read inside the caller's lock.
    private func mayFollow(_ response: ResponseHead, state: borrowing MutableState) -> Bool {
        let status = response.statusCode
        guard context.followers.contains(where: { $0.considers(status: status) }),
            let facts = hopFacts(response, state: state)
        else { return false }
        return context.followers.contains { $0.considers(status: status) && $0.mayFollow(facts) }
    }

    @_spi(Transport) public func transportDidSendBodyBytes(_ count: Int) {
        updateProgress(.upload) { state in
            state.progress.upload.completed += Int64(count)
            state.metrics.updateHop { $0.requestBodyBytesSent += Int64(count) }
        }
        tellDidSendBodyData(count)
    }

    @_spi(Transport) public func transportDidSendRequest(hadBody: Bool) {
        let now = Timeline.now()
        // The total of a body of unknown length is known now, for `uploadProgress`; the handlers are not called for
        // it, as Alamofire reports progress per chunk sent only.
        mutableState.write { state in
            state.metrics.updateHop { $0.requestEndTime = now }
            if hadBody, state.progress.upload.total < 0 {
                state.progress.upload.total = state.progress.upload.completed
            }
        }
    }

    @_spi(Transport) public func transportDidReceiveBodyBytes(_ count: Int) {
        updateProgress(.download) { state in
            state.progress.download.completed += Int64(count)
            state.metrics.updateHop { $0.responseBodyBytesDecoded += Int64(count) }
        }
    }

    @_spi(Transport) public func transportDidReceiveBodyChunk(_ chunk: Data, readiness: TransportReadiness) {
        guard let consumer = bodyConsumer else {
            readiness.fail(.explicitlyCancelled)
            return
        }
        consumer.consume(chunk, readiness: readiness)
    }

    @_spi(Transport) public func transportDidComplete(body: Data, error: AFError?) {
        // Only a request with a consumer can have streamed, so a `DataRequest` takes no lock here.
        if let consumer = bodyConsumer, mutableState.write({ $0.machine.hopBodyDidEnd() }) {
            // The consumer finishes what it holds (writes, moves the file) before the hop is weighed.
            consumer.responseBodyDidEnd(error: error) { [self] endError in
                if let error {
                    hopDidComplete(.failure(delegate == nil ? .sessionDeinitialized : error), body: nil)
                } else if let endError {
                    hopDidComplete(.failure(endError), body: nil)
                } else {
                    hopDidComplete(.success, body: nil)
                }
            }
            return
        }
        if let error {
            let sessionGone = delegate == nil
            hopDidComplete(.failure(sessionGone ? .sessionDeinitialized : error), body: nil)
            return
        }
        // An ordinary response costs one comparison per follower; facts are gathered only for one that may follow.
        let followers = context.followers
        let facts = mutableState.read { state -> HopFacts? in
            guard let response = state.head,
                followers.contains(where: { $0.considers(status: response.statusCode) })
            else { return nil }
            return hopFacts(response, state: state)
        }
        guard let facts else {
            hopDidComplete(.success, body: body)
            return
        }
        for follower in followers where follower.considers(status: facts.head.statusCode) {
            switch follower.examine(facts) {
            case nil: continue
            case let .failure(error): hopDidComplete(.failure(error), body: nil)
            case let .decide(decide): hopDidComplete(.mayFollow(decide), body: body)
            }
            return
        }
        hopDidComplete(.success, body: body)
    }
}
