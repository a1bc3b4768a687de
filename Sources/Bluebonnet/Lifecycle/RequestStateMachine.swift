import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The whole lifecycle of one `Request` as a value: where it is and with what (`Phase`), what the user asked for
/// (`Control`), how the request was set up (`Policy`) and the queue of response handlers. Each event is a
/// `mutating func` that returns the one `Action` the request must carry out next; the request's executor
/// (`Request.perform(_:)`) does it after leaving its lock, so no user code and no engine call ever runs under the lock.
///
/// Phases, in the order a request moves through them:
///
///     initialized ─▶ creatingURLRequest ─▶ (ready) ─▶ (adapting) ─▶ executing ─▶ awaitingHopDecision ─▶ executing
///                          ▲                                           │ ├─▶ validating ─┐
///                          │                                           │ └───────────────┴─▶ awaitingRetryDecision
///                          └────── (retry, now or after waitingRetryDelay) ◀─────────────────────────────┘
///     any phase before completed ─▶ completed ─▶ finishing ─▶ runningHandlers ◀─▶ finished
///                                                                  ▲      │
///                                                                  │      ▼ (a serializer failed: the retrier asked)
///                  creatingURLRequest or waitingRetryDelay ◀─ awaitingHandlerRetryDecision
///
/// `Control` is orthogonal: a request is resumed, suspended or cancelled in any phase before `completed`. A cancel
/// that finds no transport task running completes the request at once; late results of the adapter, a hop
/// follower, the retrier or the retry timer then find the phase moved on and are dropped as named late arrivals
/// (`LateArrival`). Any other event out of its phase is a bug, and traps (`disposition(of:serial:)`).
struct RequestStateMachine {
    /// Where the request is in its lifecycle, with what that phase needs.
    enum Phase {
        /// Nothing has begun.
        case initialized
        /// The `URLRequest` is being made from the convertible (the first time, or again for a retry).
        case creatingURLRequest
        /// The `URLRequest` is made, and adapted when `adapted` (an `.eager` request is adapted before it is resumed,
        /// as Alamofire creates its task then); the request waits for `resume()`.
        case ready(URLRequest, adapted: Bool)
        /// The interceptor adapts the attempt's `URLRequest`.
        case adapting
        /// A hop is on the wire.
        case executing(Hop)
        /// A hop follower (the redirect handler, a challenge's answer) decides whether another hop follows; the
        /// response's body waits here, delivered if none does.
        case awaitingHopDecision(body: Data?)
        /// Validators check a successful hop before the retrier may be asked about their verdict.
        case validating
        /// The retrier decides about a failed attempt.
        case awaitingRetryDecision(error: AFError)
        /// A retry waits out its delay.
        case waitingRetryDelay
        /// The outcome is settled; the finishing work is due.
        case completed(Outcome)
        /// Cleanup, validators (unless they ran already) and the monitors' finish event run.
        case finishing(Outcome)
        /// Response handlers run, one at a time, in order.
        case runningHandlers
        /// A response handler's serializer failed and the retrier decides whether the request is sent again; the
        /// handler waits at the head of the queue to serialize the next response (Alamofire's serializer retry).
        case awaitingHandlerRetryDecision
        /// Every handler has run. A handler added later runs at once.
        case finished
    }

    /// One hop on the wire: the first request of an attempt, a redirect, or a challenge's answer.
    struct Hop {
        /// Counts the hops handed to the engine, so a task the engine returns late is never taken for a later hop's.
        let serial: Int
        /// The request as this hop sends it (the last of `requests`, or a challenge's answer).
        let request: URLRequest
        /// The engine's task; `nil` until the engine has returned it.
        var task: (any TransportTask)?
        /// What followers left on this hop (the challenges it answers).
        let notes: FeatureValues
        /// Where the response's body goes, and how far it got.
        var delivery = Delivery.awaitingHead

        /// Whether the body streams to the request's consumer (a final response, not one to follow).
        var streamsBody: Bool {
            switch delivery {
            case .streaming, .endingStream: true
            case .awaitingHead, .held, .ended: false
            }
        }
    }

    /// Where a hop's response body goes (the consumer's sub-state): held in memory (a response that may be followed,
    /// or a request that keeps its body), or streamed to the request's consumer (`RequestKind.Consumer.streamed`),
    /// which finishes what it holds (writes, moves a file) before the hop is weighed.
    enum Delivery: Sendable, Equatable {
        /// No head yet.
        case awaitingHead
        /// The body gathers in memory.
        case held
        /// The body streams to the consumer.
        case streaming
        /// The body ended and the consumer is finishing what it holds; the hop completes when it is done.
        case endingStream
        /// The body ended with nothing left to finish.
        case ended
    }

    /// The request's own body (`RequestKind.Body`), beside its `URLRequest`'s `httpBody`: the machine holds it and
    /// counts its sends, so a body that can be read once is never sent twice.
    enum BodyState: Sendable {
        /// The kind sends none.
        case none
        /// The request makes it with its first `URLRequest` (`RequestBodyMaking`).
        case toBeMade
        /// Sent `sends` times so far, redirects, challenges and retries included; `coding` is what this attempt's
        /// adapters chose for it.
        case made(BodySupply, sends: Int, coding: UploadBodyCodingChoice?)
        /// It cannot be read: each send fails with the error, as URLSession's task fails once it runs.
        case unreadable(URLError)
    }

    /// What a hop sends as its body (`takeBody(for:firstMethod:)`).
    enum HopBody {
        /// Nothing beyond the `URLRequest`'s `httpBody`.
        case none
        case send(UploadBody)
        /// The hop fails with the error before it is sent.
        case fail(AFError)
    }

    /// How the request ended.
    struct Outcome {
        /// The error that ended it; `nil` for a response (which validators may still find wanting).
        let error: AFError?
        /// Whether the validators already ran for this outcome (a request with a retrier validates before asking it).
        let validated: Bool
    }

    /// How the request was set up: fixed when it is made (interceptors may still be chained on before it starts).
    struct Policy {
        /// How the first `URLRequest` is made.
        enum Creation {
            /// By the first `resume()`, inline.
            case onResume
            /// By the first `resume()`, sent to `requestQueue` (`.lazy` setup with a queue of its own, or an upload,
            /// whose body may take a while to encode).
            case onResumeOnRequestQueue
            /// By the session, as it made the request (`.eager` setup).
            case bySession
        }

        var creation: Creation
        /// Whether an interceptor adapts each attempt.
        var adapts: Bool
        /// Whether a retrier is asked about failures.
        var retries: Bool
        /// Whether the first response handler resumes a request never resumed.
        var startsImmediately: Bool
    }

    /// What the user asked for.
    enum Control {
        case initialized, resumed, suspended, cancelled
    }

    /// What the request does next. Every event and control returns one; `Request.perform(_:)` runs it.
    enum Action {
        /// Whether the event was taken.
        var isTaken: Bool {
            if case .notTaken = self { return false }
            return true
        }

        /// Nothing more to do.
        case none
        /// The event was not taken: a named late arrival (`LateArrival`), or a control with nothing to change
        /// (a second `cancel()`, `resume()` while running). Nothing changed, and the caller does none of the work that
        /// goes with the event (no monitor hears of it).
        case notTaken
        /// Make the `URLRequest` from the convertible: inline, or on `requestQueue`.
        case createURLRequest(onRequestQueue: Bool)
        /// Hand the `URLRequest` to the adapter.
        case adapt(URLRequest)
        /// Send a hop (the machine is in `executing` with no task yet).
        case execute(URLRequest)
        /// The attempt is made and adapted before `resume()`: monitors hear of it and of its task now (Alamofire's
        /// `.eager` setup creates its task suspended), and its first hop goes out when the request is resumed.
        case announceAttempt(URLRequest)
        /// The running task reads again.
        case resumeTask(any TransportTask)
        /// The running task stops reading.
        case suspendTask(any TransportTask)
        /// The running task stops; its completion ends the request.
        case cancelTask(any TransportTask)
        /// A follower decides, off the event loop, whether another hop follows.
        case decideNextHop(@Sendable (Request, _ completion: @escaping @Sendable (HopDecision) -> Void) -> Void)
        /// Deliver the body, then validate off the event loop and let the retrier judge a failure.
        case validate(body: Data?)
        /// Ask the retrier, off the event loop.
        case askRetrier(AFError)
        /// Forget the attempt's body and make the `URLRequest` again, now or after a delay.
        case retry(after: TimeInterval?)
        /// Deliver the body (unless the validators already saw it), then finish: cleanup, validators, monitors,
        /// handlers.
        case finish(Outcome, body: Data?)
        /// A handler was added to a finished request: run the handlers, inline or on `serializationQueue`.
        case runHandlers(inline: Bool)
    }

    private(set) var phase: Phase = .initialized
    /// The request's own body.
    private(set) var body: BodyState

    /// The request's error as it stands (`Request.error`): set by the events that fail the request, cleared when a
    /// retry begins, carried by `.finish`. The machine is its only writer.
    private(set) var error: AFError?

    /// A failure found beside the machine's own events (a validator's, a download's file): it becomes the request's
    /// error unless an earlier one is.
    mutating func recordFailure(_ failure: AFError) {
        if error == nil { error = failure }
    }

    /// Making or adapting the `URLRequest` failed: the request's error before monitors hear of it, as in Alamofire,
    /// unless the request moved on (cancelled), which keeps its own.
    mutating func recordFailureBeforeTelling(_ failure: AFError) {
        switch phaseKind {
        case .creatingURLRequest, .adapting: error = failure
        default: break
        }
    }
    private(set) var control: Control = .initialized
    /// What a cancelled request ends with: `explicitlyCancelled`, or the reason its session cancelled it.
    private(set) var cancellationError: AFError = .explicitlyCancelled
    private(set) var policy: Policy
    private(set) var handlers = HandlerQueue()
    /// How many retries have begun.
    private(set) var retryCount = 0
    /// How many new hops (redirects) the attempt followed.
    private(set) var redirectCount = 0
    /// Whether a loop is running the handlers. It is the loop's state, not the phase's: the last handler may be
    /// running while the phase is `finished`, and the loop that ran a failed handler steps once more after the phase
    /// moved on (to `awaitingHandlerRetryDecision`, or to a retry the retrier already began).
    private(set) var processingHandlers = false
    /// The serial of the latest hop.
    private(set) var hopSerial = 0

    init(policy: Policy, body: BodyState = .none) {
        self.policy = policy
        self.body = body
    }

    /// A queued response handler. `inlineSafe` handlers are cheap and never block (they snapshot the request for an
    /// awaiting task, or hand an unparsed body to the caller's queue), so they may run on the thread that completed
    /// the request.
    struct ResponseHandler: Sendable {
        let inlineSafe: Bool
        let run: @Sendable () -> Void
    }

    /// The response handlers waiting, in order. Most requests have one: it is kept inline, so queueing it allocates
    /// nothing; the others go to an array.
    struct HandlerQueue: Sendable {
        private var head: ResponseHandler?
        private var rest: [ResponseHandler] = []

        var isEmpty: Bool { head == nil }
        var count: Int { head == nil ? 0 : 1 + rest.count }
        var first: ResponseHandler? { head }

        func allSatisfy(_ predicate: (ResponseHandler) -> Bool) -> Bool {
            guard let head else { return true }
            return predicate(head) && rest.allSatisfy(predicate)
        }

        mutating func append(_ handler: ResponseHandler) {
            if head == nil { head = handler } else { rest.append(handler) }
        }

        /// Puts `handler` before every other.
        mutating func prepend(_ handler: ResponseHandler) {
            if let head { rest.insert(head, at: 0) }
            head = handler
        }

        mutating func removeFirst() {
            head = rest.isEmpty ? nil : rest.removeFirst()
        }
    }

    // MARK: - Which events the machine takes where

    /// A phase without its data, to name (phase, event) pairs.
    enum PhaseKind: CaseIterable, Sendable {
        case initialized, creatingURLRequest, ready, adapting, executing, awaitingHopDecision, validating
        case awaitingRetryDecision, waitingRetryDelay, completed, finishing, runningHandlers, finished
        case awaitingHandlerRetryDecision
    }

    var phaseKind: PhaseKind {
        switch phase {
        case .initialized: .initialized
        case .creatingURLRequest: .creatingURLRequest
        case .ready: .ready
        case .adapting: .adapting
        case .executing: .executing
        case .awaitingHopDecision: .awaitingHopDecision
        case .validating: .validating
        case .awaitingRetryDecision: .awaitingRetryDecision
        case .waitingRetryDelay: .waitingRetryDelay
        case .completed: .completed
        case .finishing: .finishing
        case .runningHandlers: .runningHandlers
        case .finished: .finished
        case .awaitingHandlerRetryDecision: .awaitingHandlerRetryDecision
        }
    }

    /// The events of the work the request does (the controls, `resume`, `suspend`, `cancel` and adding a handler,
    /// are allowed anywhere: a second call changes nothing, as in Alamofire).
    enum Event: CaseIterable, Sendable {
        case claimCreation, urlRequestCreated, failedBeforeExecuting, adapted, taskCreated, hopCompleted, hopDecided
        case validated, retryDecided, retryDelayElapsed, finishBegan, handlersBegan, handlerRetryDecided
        /// The body's and the consumer's sub-states: the request's own body made, a hop's body taken, a response head
        /// arrived, a response body ended.
        case bodyMade, bodyTaken, headArrived, bodyEnded
    }

    /// Why an event that finds the machine elsewhere is dropped rather than a bug.
    enum LateArrival: Sendable, Equatable {
        /// The request was cancelled while the work behind the event was under way; cancelling completed it.
        case afterCancel
        /// The engine returned a hop's task after the hop had already ended (an engine that completes at once).
        case taskAfterItsHopEnded
        /// `requestQueue` came to make the first `URLRequest` after the first `resume()` made it inline.
        case creationAlreadyClaimed
    }

    /// How the machine takes an event where it is.
    enum Disposition: Sendable, Equatable {
        case acts
        case late(LateArrival)
        /// No path of the request can bring this event here: a bug, which traps.
        case impossible
    }

    /// The one phase where each event acts (`taskCreated` also needs its own hop; `claimCreation` an uncancelled
    /// request).
    static func phase(where event: Event) -> PhaseKind {
        switch event {
        case .claimCreation: .initialized
        case .urlRequestCreated: .creatingURLRequest
        case .failedBeforeExecuting: .creatingURLRequest
        case .adapted: .adapting
        case .taskCreated, .hopCompleted: .executing
        case .hopDecided: .awaitingHopDecision
        case .validated: .validating
        case .retryDecided: .awaitingRetryDecision
        case .retryDelayElapsed: .waitingRetryDelay
        case .finishBegan: .completed
        case .handlersBegan: .finishing
        case .handlerRetryDecided: .awaitingHandlerRetryDecision
        case .bodyMade: .creatingURLRequest
        case .bodyTaken, .headArrived, .bodyEnded: .executing
        }
    }

    /// How the machine takes `event` now.
    ///
    /// - Parameter serial: For `taskCreated`, the hop the task belongs to.
    func disposition(of event: Event, serial: Int? = nil) -> Disposition {
        let kind = phaseKind
        switch event {
        case .claimCreation:
            // The first resume may have made the URLRequest inline, or cancelled the request, meanwhile.
            return kind == .initialized ? .acts : .late(.creationAlreadyClaimed)
        case .taskCreated:
            guard case let .executing(hop) = phase, serial == hop.serial else { return .late(.taskAfterItsHopEnded) }
            return hop.task == nil ? .acts : .impossible
        case .failedBeforeExecuting where kind == .adapting:
            return .acts
        case .bodyMade where kind == .creatingURLRequest:
            // Made once, for the first attempt; a retry sends the body made then.
            if case .toBeMade = body { return .acts }
            return .impossible
        case .bodyTaken, .headArrived, .bodyEnded:
            // A hop takes its body before the engine has it; its head arrives once, and its body ends once.
            guard case let .executing(hop) = phase else { return .impossible }
            switch event {
            case .bodyTaken: return hop.task == nil ? .acts : .impossible
            case .headArrived: return hop.delivery == .awaitingHead ? .acts : .impossible
            default: return hop.delivery == .endingStream || hop.delivery == .ended ? .impossible : .acts
            }
        case .hopCompleted, .finishBegan, .handlersBegan:
            // The engine completes each hop once; the finishing work and the handlers begin once per completion.
            return kind == Self.phase(where: event) ? .acts : .impossible
        default:
            if kind == Self.phase(where: event) { return .acts }
            return control == .cancelled && isComplete ? .late(.afterCancel) : .impossible
        }
    }

    /// Whether the machine acts on `event`: `false` for a named late arrival; a trap for an impossible pair.
    private func takes(_ event: Event, serial: Int? = nil) -> Bool {
        switch disposition(of: event, serial: serial) {
        case .acts: return true
        case .late: return false
        case .impossible: preconditionFailure("The request's machine got \(event) in \(phaseKind) (\(control))")
        }
    }

    // MARK: - Projections

    /// The public state: what the user asked for, `.finished` once every handler has run (unless cancelled).
    var state: Request.State {
        switch control {
        case .cancelled: .cancelled
        case .initialized: isFinished ? .finished : .initialized
        case .resumed: isFinished ? .finished : .resumed
        case .suspended: isFinished ? .finished : .suspended
        }
    }

    /// Whether `resume()` would start the request for the first time.
    var startsOnResume: Bool { control == .initialized && !isFinished }

    private var isFinished: Bool {
        if case .finished = phase { return true }
        return false
    }

    /// Whether the outcome is settled (completed, finishing, handlers running or done).
    var isComplete: Bool {
        switch phase {
        case .completed, .finishing, .runningHandlers, .finished, .awaitingHandlerRetryDecision: true
        default: false
        }
    }

    /// The body of the hop a follower is deciding about.
    var bodyAwaitingDecision: Data? {
        if case let .awaitingHopDecision(body) = phase { return body }
        return nil
    }

    /// The hop on the wire, if there is one.
    var hop: Hop? {
        if case let .executing(hop) = phase { return hop }
        return nil
    }

    /// The running transport task, if a hop is on the wire.
    var transportTask: (any TransportTask)? { hop?.task }

    /// Whether nothing has begun making the `URLRequest` yet.
    var awaitsCreation: Bool {
        if case .initialized = phase { return control != .cancelled }
        return false
    }

    /// Whether every queued handler may run on the thread that completes the request.
    var handlersAreInlineSafe: Bool { handlers.allSatisfy(\.inlineSafe) }

    // MARK: - Controls (`nil`: nothing changed, and no monitor hears of it)

    /// An interceptor was chained on; it adapts (`adapts`) and retries from the next attempt on.
    mutating func addInterceptor(adapts: Bool) {
        policy.adapts = policy.adapts || adapts
        policy.retries = true
    }

    /// `resume()`.
    mutating func resume() -> Action {
        switch control {
        case .initialized, .suspended: break
        case .resumed, .cancelled: return .notTaken
        }
        if isFinished { return .notTaken }
        control = .resumed
        switch phase {
        case .initialized where policy.creation == .onResume:
            phase = .creatingURLRequest
            return .createURLRequest(onRequestQueue: false)
        case .initialized where policy.creation == .onResumeOnRequestQueue:
            phase = .creatingURLRequest
            return .createURLRequest(onRequestQueue: true)
        case let .ready(urlRequest, adapted):
            return adapted ? enterExecuting(urlRequest, notes: FeatureValues()) : beginAttempt(with: urlRequest)
        case let .executing(hop):
            return hop.task.map { .resumeTask($0) } ?? .none
        default:
            return .none
        }
    }

    /// `suspend()`: allowed until the outcome is settled.
    mutating func suspend() -> Action {
        switch control {
        case .initialized, .resumed: break
        case .suspended, .cancelled: return .notTaken
        }
        if isComplete { return .notTaken }
        control = .suspended
        return transportTask.map { .suspendTask($0) } ?? .none
    }

    /// `cancel()`: allowed until the outcome is settled. With a task running, it is stopped and its completion ends
    /// the request; while the engine is being handed the hop, the task is stopped when it arrives; with nothing on
    /// the wire, the request completes now with `cancellationError` (`explicitlyCancelled` unless its session
    /// cancelled it).
    mutating func cancel() -> Action {
        guard control != .cancelled, !isComplete else { return .notTaken }
        control = .cancelled
        error = cancellationError
        if case let .executing(hop) = phase {
            return hop.task.map { .cancelTask($0) } ?? .none
        }
        return complete(error: cancellationError, body: nil)
    }

    /// What the next `cancel()` ends the request with, instead of `explicitlyCancelled`: its session cancelled it.
    /// Ignored once the request is cancelled.
    mutating func setCancellationError(_ error: AFError) {
        guard control != .cancelled else { return }
        cancellationError = error
    }

    /// The session went away while the request waited to start (made, perhaps adapted, never resumed): it completes
    /// with `error`, as Alamofire finishes such requests with `sessionDeinitialized`. Not taken anywhere else: a hop on
    /// the wire ends with the engine, and work under way finds the session gone.
    mutating func abandon(with error: AFError) -> Action {
        switch phase {
        case .initialized, .ready: return complete(error: error, body: nil)
        default: return .notTaken
        }
    }

    // MARK: - Making the URLRequest

    /// Claims the making of the first `URLRequest`, on `requestQueue`; not taken when it has begun or cannot.
    mutating func claimCreation() -> Action {
        guard takes(.claimCreation) else { return .notTaken }
        phase = .creatingURLRequest
        return .createURLRequest(onRequestQueue: false)
    }

    /// The `URLRequest` was made; not taken when the request moved on (cancelled), and the `URLRequest` is dropped. A
    /// request not resumed waits in `ready`; one the session set up (`.eager`) is adapted first.
    mutating func didCreateURLRequest(_ urlRequest: URLRequest) -> Action {
        guard takes(.urlRequestCreated) else { return .notTaken }
        guard control == .resumed || policy.creation == .bySession else {
            phase = .ready(urlRequest, adapted: false)
            return .none
        }
        return beginAttempt(with: urlRequest)
    }

    private mutating func beginAttempt(with urlRequest: URLRequest) -> Action {
        if policy.adapts {
            phase = .adapting
            return .adapt(urlRequest)
        }
        return attemptIsReady(urlRequest)
    }

    /// The attempt's `URLRequest` is final: its first hop goes out, or waits for `resume()`.
    private mutating func attemptIsReady(_ urlRequest: URLRequest) -> Action {
        guard control == .resumed else {
            phase = .ready(urlRequest, adapted: true)
            return .announceAttempt(urlRequest)
        }
        return enterExecuting(urlRequest, notes: FeatureValues())
    }

    private mutating func enterExecuting(_ urlRequest: URLRequest, notes: FeatureValues) -> Action {
        hopSerial += 1
        phase = .executing(Hop(serial: hopSerial, request: urlRequest, notes: notes))
        return .execute(urlRequest)
    }

    /// Making the `URLRequest` failed, or the adapter failed: the retrier decides, when there is one. Not taken when the
    /// request moved on.
    mutating func didFailBeforeExecuting(with error: AFError) -> Action {
        guard takes(.failedBeforeExecuting) else { return .notTaken }
        return settleFailure(error)
    }

    private mutating func settleFailure(_ error: AFError) -> Action {
        if policy.retries, control != .cancelled {
            self.error = error
            phase = .awaitingRetryDecision(error: error)
            return .askRetrier(error)
        }
        return complete(error: error, body: nil)
    }

    private mutating func complete(error: AFError?, body: Data?, validated: Bool = false) -> Action {
        let outcome = Outcome(error: error, validated: validated)
        if let error { self.error = error }
        phase = .completed(outcome)
        return .finish(outcome, body: body)
    }

    /// The adapter returned the `URLRequest` to send; not taken when the request moved on meanwhile.
    mutating func didAdapt(_ adapted: URLRequest) -> Action {
        guard takes(.adapted) else { return .notTaken }
        return attemptIsReady(adapted)
    }

    // MARK: - Transport

    /// The engine returned the task of hop `serial`. An engine that completes at once has moved the phase on already.
    mutating func didCreateTask(_ task: any TransportTask, serial: Int) -> Action {
        guard takes(.taskCreated, serial: serial), case var .executing(hop) = phase else { return .none }
        hop.task = task
        phase = .executing(hop)
        switch control {
        case .cancelled: return .cancelTask(task)
        case .suspended: return .suspendTask(task)
        case .initialized, .resumed: return .none
        }
    }

    /// The head of the hop's response arrived: its body streams to the request's consumer or not.
    mutating func hopWillReceiveBody(streaming: Bool) {
        _ = takes(.headArrived)
        guard case var .executing(hop) = phase else { return }
        hop.delivery = streaming ? .streaming : .held
        phase = .executing(hop)
    }

    /// The hop's response body ended, or the hop ended before one began: `true` when it streamed to the consumer,
    /// which finishes what it holds before the hop completes; `false` when nothing is left to finish.
    mutating func hopBodyDidEnd() -> Bool {
        _ = takes(.bodyEnded)
        guard case var .executing(hop) = phase else { return false }
        let streamed = hop.delivery == .streaming
        hop.delivery = streamed ? .endingStream : .ended
        phase = .executing(hop)
        return streamed
    }

    // MARK: - The request's own body

    /// The request made its body, with its first `URLRequest`. Returns whether the request ended meanwhile (cancelled
    /// while a form was encoded): the body is kept, never sent, and whatever it holds on disk is the caller's to
    /// release, as the request's cleanup ran before it existed.
    mutating func didMakeBody(_ made: MadeBody) -> Bool {
        guard takes(.bodyMade) else { return true }
        switch made {
        case let .body(supply): body = .made(supply, sends: 0, coding: nil)
        case let .unreadable(error): body = .unreadable(error)
        }
        return false
    }

    /// Whether the request's body is yet to be made, with its first `URLRequest`.
    var awaitsBody: Bool {
        if case .toBeMade = body { return true }
        return false
    }

    /// Whether the request sends a body of its own beside its `URLRequest`'s.
    var sendsBody: Bool {
        switch body {
        case .none, .toBeMade: false
        case .made, .unreadable: true
        }
    }

    /// Whether the request's body can be sent again, to answer a challenge: not a stream read once.
    var canResendBody: Bool {
        if case let .made(supply, _, _) = body { return supply.isReplayable }
        return true
    }

    /// Where this attempt's adapters may choose a coding for the body (`RequestAdapterState`); `nil` when the request
    /// has no body made once, in memory or on disk, to code.
    mutating func makeCodingChoice() -> UploadBodyCodingChoice? {
        guard case let .made(supply, sends, _) = body, case let .fixed(fixed) = supply else { return nil }
        let bytes: Data? = if case let .data(data) = fixed.source { data } else { nil }
        let choice = UploadBodyCodingChoice(bytesInMemory: bytes)
        body = .made(supply, sends: sends, coding: choice)
        return choice
    }

    /// The body the current hop sends, taken as the hop goes out. A redirect that turned the request into a `GET`
    /// drops it (307 and 308 keep method and body); a body read once that a redirect, a challenge or a retry needs
    /// again fails the hop clearly rather than sending nothing.
    ///
    /// - Parameters:
    ///   - urlRequest:  The hop's request.
    ///   - firstMethod: The method of the request's first `URLRequest`.
    mutating func takeBody(for urlRequest: URLRequest, firstMethod: String?) -> HopBody {
        guard takes(.bodyTaken) else { return .none }
        switch body {
        case .none, .toBeMade:
            return .none
        case let .unreadable(error):
            return .fail(.sessionTaskFailed(error: error))
        case let .made(supply, sends, coding):
            if redirectCount > 0 {
                let first = firstMethod?.uppercased() ?? "GET"
                guard urlRequest.httpMethod?.uppercased() ?? "GET" == first, first != "GET" else { return .none }
            }
            body = .made(supply, sends: sends + 1, coding: coding)
            guard sends == 0 || supply.isReplayable else {
                return .fail(.sessionTaskFailed(error: URLError(.requestBodyStreamExhausted)))
            }
            let plain = supply.bodyForSend()
            return .send(coding?.chosen.map(plain.coded(with:)) ?? plain)
        }
    }

    /// What the request makes of a finished hop, before the machine weighs cancellation.
    enum HopOutcome {
        case success
        /// A follower (a redirect, a challenge) decides whether another hop follows.
        case mayFollow(@Sendable (Request, _ completion: @escaping @Sendable (HopDecision) -> Void) -> Void)
        case failure(AFError)
    }

    /// The hop ended with `body` (`nil` when it streamed to the consumer).
    mutating func hopDidComplete(_ outcome: HopOutcome, body: Data?) -> Action {
        _ = takes(.hopCompleted)
        if control == .cancelled { return complete(error: cancellationError, body: nil) }
        switch outcome {
        case let .mayFollow(decide):
            phase = .awaitingHopDecision(body: body)
            return .decideNextHop(decide)
        case .success:
            return deliver(body)
        case let .failure(error):
            return settleFailure(error)
        }
    }

    /// A response is the attempt's answer: with a retrier, validation may fail and the retrier then decides, so the
    /// outcome is not settled yet.
    private mutating func deliver(_ body: Data?) -> Action {
        guard policy.retries else { return complete(error: nil, body: body) }
        phase = .validating
        return .validate(body: body)
    }

    /// A follower decided: another hop, the same hop again (a challenge's answer), or the response is delivered.
    /// Not taken when the request moved on.
    mutating func didDecideNextHop(_ decision: HopDecision) -> Action {
        guard takes(.hopDecided), case let .awaitingHopDecision(body) = phase else { return .notTaken }
        switch decision {
        case let .newHop(next):
            redirectCount += 1
            return enterExecuting(next, notes: FeatureValues())
        case let .sameHopAgain(again, notes):
            return enterExecuting(again, notes: notes)
        case .deliver:
            return deliver(body)
        }
    }

    /// Validation after a successful hop ended; with `error`, the retrier decides. Not taken when the request moved on.
    mutating func didValidate(error: AFError?) -> Action {
        guard takes(.validated) else { return .notTaken }
        guard let error else { return complete(error: nil, body: nil, validated: true) }
        self.error = error
        phase = .awaitingRetryDecision(error: error)
        return .askRetrier(error)
    }

    /// The retrier decided; not taken when the request moved on.
    mutating func didDecideRetry(_ result: RetryResult) -> Action {
        guard takes(.retryDecided), case let .awaitingRetryDecision(original) = phase else { return .notTaken }
        switch result {
        case .retry, .retryWithDelay:
            return beginRetry(for: result)
        case .doNotRetry:
            return complete(error: original, body: nil, validated: true)
        case let .doNotRetryWithError(error):
            // The session's `retryResult(for:dueTo:completion:)` reports a retrier's failure already wrapped.
            if case .requestRetryFailed? = error as? AFError {
                return complete(error: error as? AFError, body: nil, validated: true)
            }
            return complete(
                error: .requestRetryFailed(retryError: error, originalError: original), body: nil, validated: true)
        }
    }

    /// Begins the next attempt, now or after the delay `result` asks for; `.notTaken` when it does not retry.
    private mutating func beginRetry(for result: RetryResult) -> Action {
        let delay: TimeInterval?
        switch result {
        case .retry: delay = nil
        case let .retryWithDelay(after): delay = after
        case .doNotRetry, .doNotRetryWithError: return .notTaken
        }
        retryCount += 1
        redirectCount = 0
        // A new attempt: the last one's failure is forgotten, as in Alamofire's `prepareForRetry`.
        error = nil
        phase = delay == nil ? .creatingURLRequest : .waitingRetryDelay
        retrySendPending = delay == nil
        return .retry(after: delay)
    }

    /// Whether a retry decided to send at once has yet to make its `URLRequest`.
    private var retrySendPending = false

    /// Takes the retry decided to send at once: its `URLRequest` is made, once, while the request waits for it (not
    /// after a cancel, and not for a second call).
    mutating func takeRetrySend() -> Action {
        guard retrySendPending, case .creatingURLRequest = phase else { return .notTaken }
        retrySendPending = false
        return .createURLRequest(onRequestQueue: false)
    }

    /// Whether the request waits out a retry delay.
    var awaitsRetryDelay: Bool {
        if case .waitingRetryDelay = phase { return true }
        return false
    }

    /// The retry delay elapsed: the next attempt's `URLRequest` is made; not taken when the request moved on
    /// (cancelled meanwhile).
    mutating func retryDelayDidElapse() -> Action {
        guard takes(.retryDelayElapsed) else { return .notTaken }
        phase = .creatingURLRequest
        return .createURLRequest(onRequestQueue: false)
    }

    // MARK: - Finishing and response handlers

    /// The finishing work begins (cleanup, validators, the monitors' finish event).
    mutating func beginFinishing() {
        _ = takes(.finishBegan)
        guard case let .completed(outcome) = phase else { return }
        phase = .finishing(outcome)
    }

    /// The finishing work is done: the handlers run, starting with the caller's loop.
    mutating func beginHandlers() {
        _ = takes(.handlersBegan)
        phase = handlers.isEmpty ? .finished : .runningHandlers
        processingHandlers = true
    }

    enum HandlerStep {
        case run(@Sendable () -> Void)
        /// The next handler must run on `serializationQueue`.
        case hop
        case done
    }

    /// Takes the next handler for the one loop that runs them. The phase turns `finished` as the last one is taken,
    /// so whoever receives its result sees the request finished; a handler added meanwhile reopens it and joins the
    /// same loop.
    mutating func nextHandler(inline: Bool) -> HandlerStep {
        precondition(processingHandlers, "A handler was taken with no handler loop running: \(phaseKind)")
        switch phase {
        case .runningHandlers, .finished:
            break
        default:
            // The loop stops: a handler's failure waits for the retrier, whose decision starts the next loop, or the
            // retrier already began a retry, whose completion runs the handlers on its response.
            processingHandlers = false
            return .done
        }
        guard let first = handlers.first else {
            processingHandlers = false
            phase = .finished
            return .done
        }
        if inline && !first.inlineSafe { return .hop }
        handlers.removeFirst()
        phase = handlers.isEmpty ? .finished : .runningHandlers
        return .run(first.run)
    }

    /// A response handler was added.
    ///
    /// - Returns: What to do (run the handlers of a finished request), and whether the request should be resumed (it
    ///   was never resumed and starts requests immediately).
    mutating func appendHandler(_ handler: ResponseHandler) -> (Action, resume: Bool) {
        handlers.append(handler)
        switch phase {
        case .finished:
            // Alamofire moves a finished request back to running while the new handler runs.
            phase = .runningHandlers
            if control == .initialized { control = .resumed }
            if processingHandlers { return (.none, false) }
            processingHandlers = true
            return (.runHandlers(inline: handler.inlineSafe), false)
        case .runningHandlers, .completed, .finishing, .awaitingHandlerRetryDecision:
            return (.none, false)
        default:
            return (.none, control == .initialized && policy.startsImmediately)
        }
    }
    /// A response handler's serializer failed: the retrier decides whether the request is sent again, `rerun` waiting
    /// at the head of the queue to serialize the next response, as in Alamofire. `false` (the handler delivers its
    /// failure) when there is no retrier, the request was cancelled, or no handler loop runs.
    mutating func handlerFailed(rerun: ResponseHandler) -> Bool {
        guard policy.retries, control != .cancelled, processingHandlers else { return false }
        switch phase {
        case .runningHandlers, .finished: break
        default: return false
        }
        handlers.prepend(rerun)
        phase = .awaitingHandlerRetryDecision
        return true
    }

    /// The retrier decided about a handler's failure: the request is sent again (that handler and those after it
    /// serialize the new response), or the handlers go on after the failed one, which delivers its failure. Not
    /// taken when nothing waits for the decision.
    mutating func didDecideHandlerRetry(_ result: RetryResult) -> Action {
        guard takes(.handlerRetryDecided) else { return .notTaken }
        switch result {
        case .retry, .retryWithDelay: return beginRetry(for: result)
        case .doNotRetry, .doNotRetryWithError: break
        }
        handlers.removeFirst()
        phase = handlers.isEmpty ? .finished : .runningHandlers
        // The loop that ran the failed handler may not have stepped since: it goes on with the rest, and no second
        // loop runs beside it.
        guard !handlers.isEmpty, !processingHandlers else { return .none }
        processingHandlers = true
        return .runHandlers(inline: false)
    }
}
