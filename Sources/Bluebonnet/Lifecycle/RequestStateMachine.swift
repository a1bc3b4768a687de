import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The whole lifecycle of one `Request` as a value: where it is (`Phase`), what the user asked for (`Control`),
/// and the queue of response handlers. Each event is a `mutating func` that returns what the request must do
/// next; the request does it after leaving its lock, so no user code and no engine call ever runs under the lock.
///
/// Phases, in the order a request moves through them:
///
///     initialized ─▶ creatingURLRequest ─▶ (ready) ─▶ (adapting) ─▶ executing ─▶ awaitingHopDecision ─▶ executing
///                          ▲                                           │ ├─▶ validating ─┐
///                          │                                           │ └───────────────┴─▶ awaitingRetryDecision
///                          └────── (retry, now or after waitingRetryDelay) ◀─────────────────────────────┘
///     any phase before completed ─▶ completed ─▶ runningHandlers ◀─▶ finished
///
/// `Control` is orthogonal: a request is resumed, suspended or cancelled in any phase before `completed`. A cancel
/// that finds no transport task running completes the request at once; late results of the adapter, a hop
/// follower, the retrier or the retry timer then find the phase moved on and are dropped as named late arrivals
/// (`LateArrival`). Any other event out of its phase is a bug, and traps (`disposition(of:serial:)`).
struct RequestStateMachine {
    /// Where the request is in its lifecycle.
    enum Phase {
        /// Nothing has begun.
        case initialized
        /// The `URLRequest` is being made from the convertible (the first time, or again for a retry).
        case creatingURLRequest
        /// The `URLRequest` is made; the request waits for `resume()`.
        case ready
        /// The interceptor adapts the attempt's `URLRequest`.
        case adapting
        /// A hop is on the wire. The task is `nil` until the engine has returned it.
        case executing(task: (any TransportTask)?)
        /// A hop follower (the redirect handler, a challenge's answer) decides whether another hop follows.
        case awaitingHopDecision
        /// Validators check a successful hop before the retrier may be asked about their verdict.
        case validating
        /// The retrier decides about a failed attempt.
        case awaitingRetryDecision(error: AFError)
        /// A retry waits out its delay.
        case waitingRetryDelay
        /// The outcome is settled; validators and the finish event are due, then the handlers.
        case completed
        /// Response handlers run, one at a time, in order.
        case runningHandlers
        /// Every handler has run. A handler added later runs at once.
        case finished
    }

    /// What the user asked for.
    enum Control {
        case initialized, resumed, suspended, cancelled
    }

    private(set) var phase: Phase = .initialized
    private(set) var control: Control = .initialized
    private(set) var handlers: [ResponseHandler] = []
    /// How many retries have begun.
    private(set) var retryCount = 0
    /// Whether a loop is running the handlers (the last one may be running while the phase is `finished`).
    private(set) var processingHandlers = false

    /// Whether the session or the request has an interceptor that adapts; fixed before the first resume.
    var adapts = false

    /// A queued response handler. `inlineSafe` handlers are cheap and never block (they snapshot the request for an
    /// awaiting task, or hand an unparsed body to the caller's queue), so they may run on the thread that completed
    /// the request.
    struct ResponseHandler: Sendable {
        let inlineSafe: Bool
        let run: @Sendable () -> Void
    }

    /// Counts the hops handed to the engine, so a task the engine returns late is never taken for a later hop's.
    private(set) var hopSerial = 0

    // MARK: - Which events the machine takes where

    /// A phase without its data, to name (phase, event) pairs.
    enum PhaseKind: CaseIterable, Sendable {
        case initialized, creatingURLRequest, ready, adapting, executing, awaitingHopDecision, validating
        case awaitingRetryDecision, waitingRetryDelay, completed, runningHandlers, finished
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
        case .runningHandlers: .runningHandlers
        case .finished: .finished
        }
    }

    /// The events of the work the request does (the controls, `resume`, `suspend`, `cancel` and adding a handler,
    /// are allowed anywhere: a second call changes nothing, as in Alamofire).
    enum Event: CaseIterable, Sendable {
        case claimCreation, urlRequestCreated, failedBeforeExecuting, adapted, taskCreated, hopCompleted, hopDecided
        case validated, retryDecided, retryDelayElapsed, handlersBegan
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
        case .handlersBegan: .completed
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
            guard case let .executing(task) = phase, serial == hopSerial else { return .late(.taskAfterItsHopEnded) }
            return task == nil ? .acts : .impossible
        case .failedBeforeExecuting where kind == .adapting:
            return .acts
        case .hopCompleted, .handlersBegan:
            // The engine completes each hop once; handlers begin once per completion.
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
        case .impossible: preconditionFailure("The request's machine got \(event) in \(phase) (\(control))")
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

    private var isFinished: Bool {
        if case .finished = phase { return true }
        return false
    }

    /// Whether the outcome is settled (completed, handlers running or done).
    var isComplete: Bool {
        switch phase {
        case .completed, .runningHandlers, .finished: true
        default: false
        }
    }

    /// The running transport task, if a hop is on the wire.
    var transportTask: (any TransportTask)? {
        if case let .executing(task) = phase { return task }
        return nil
    }

    // MARK: - Controls

    enum ResumeAction {
        /// Nothing changes (already resumed, cancelled or finished).
        case ignore
        /// Resumed; tell the monitor.
        case resumed
        /// Resumed; make the `URLRequest` inline now.
        case createURLRequest
        /// Resumed; make the `URLRequest` on `requestQueue` (a lazy request whose session has its own queue, or an
        /// upload, whose body may take a while to encode).
        case createURLRequestOnRequestQueue
        /// Resumed; start the first attempt with this `URLRequest`.
        case start(AttemptStart)
        /// Resumed; the running task reads again.
        case resumeTask(any TransportTask)
    }

    /// How an attempt begins: through the adapter, or straight to the engine.
    enum AttemptStart {
        case adapt
        case execute
    }

    /// `resume()`.
    ///
    /// - Parameters:
    ///   - createsInline:   Whether the first resume makes the `URLRequest` itself (default queues).
    ///   - queuesCreation:  Whether the first resume sends the making of the `URLRequest` to `requestQueue`
    ///                      (`.lazy` setup); otherwise the session already did when it made the request.
    mutating func resume(createsInline: Bool, queuesCreation: Bool = false) -> ResumeAction {
        switch control {
        case .initialized, .suspended: break
        case .resumed, .cancelled: return .ignore
        }
        if isFinished { return .ignore }
        control = .resumed
        switch phase {
        case .initialized where createsInline:
            phase = .creatingURLRequest
            return .createURLRequest
        case .initialized where queuesCreation:
            phase = .creatingURLRequest
            return .createURLRequestOnRequestQueue
        case .ready:
            return .start(beginAttempt())
        case let .executing(task?):
            return .resumeTask(task)
        default:
            return .resumed
        }
    }

    enum SuspendAction {
        case ignore
        case suspended
        case suspendTask(any TransportTask)
    }

    /// `suspend()`: allowed until the outcome is settled.
    mutating func suspend() -> SuspendAction {
        switch control {
        case .initialized, .resumed: break
        case .suspended, .cancelled: return .ignore
        }
        if isComplete { return .ignore }
        control = .suspended
        if case let .executing(task?) = phase { return .suspendTask(task) }
        return .suspended
    }

    enum CancelAction {
        case ignore
        /// Cancelled while a task runs: it is stopped, and its completion ends the request.
        case cancelTask(any TransportTask)
        /// Cancelled while the engine is being handed the hop: the task is stopped when it arrives.
        case cancelledAwaitingTask
        /// Cancelled with nothing on the wire: the request completes now with `explicitlyCancelled`.
        case complete
    }

    /// `cancel()`: allowed until the outcome is settled.
    mutating func cancel() -> CancelAction {
        guard control != .cancelled, !isComplete else { return .ignore }
        control = .cancelled
        switch phase {
        case let .executing(task?):
            return .cancelTask(task)
        case .executing(nil):
            return .cancelledAwaitingTask
        default:
            phase = .completed
            return .complete
        }
    }

    // MARK: - Making the URLRequest

    /// Claims the making of the first `URLRequest` (for `requestQueue`); `false` when it has begun or cannot.
    mutating func claimCreation() -> Bool {
        guard takes(.claimCreation) else { return false }
        phase = .creatingURLRequest
        return true
    }

    /// Whether nothing has begun making the `URLRequest` yet.
    var awaitsCreation: Bool {
        if case .initialized = phase { return control != .cancelled }
        return false
    }

    enum CreatedAction {
        /// The request moved on (cancelled): drop the `URLRequest`.
        case ignore
        /// Made; the request waits for `resume()`.
        case wait
        /// Made; start the attempt.
        case start(AttemptStart)
    }

    /// The `URLRequest` was made.
    mutating func didCreateURLRequest() -> CreatedAction {
        guard takes(.urlRequestCreated) else { return .ignore }
        guard control == .resumed else {
            phase = .ready
            return .wait
        }
        return .start(beginAttempt())
    }

    private mutating func beginAttempt() -> AttemptStart {
        if adapts {
            phase = .adapting
            return .adapt
        }
        enterExecuting()
        return .execute
    }

    private mutating func enterExecuting() {
        hopSerial += 1
        phase = .executing(task: nil)
    }

    enum FailureAction {
        /// The request moved on: drop the error.
        case ignore
        /// Ask the retrier about `error`.
        case askRetrier
        /// Complete with the error.
        case complete
    }

    /// Making the `URLRequest` failed, or the adapter failed: the retrier decides, when there is one.
    mutating func didFailBeforeExecuting(with error: AFError, hasRetrier: Bool) -> FailureAction {
        guard takes(.failedBeforeExecuting) else { return .ignore }
        return settleFailure(error, hasRetrier: hasRetrier)
    }

    private mutating func settleFailure(_ error: AFError, hasRetrier: Bool) -> FailureAction {
        if hasRetrier, control != .cancelled {
            phase = .awaitingRetryDecision(error: error)
            return .askRetrier
        }
        phase = .completed
        return .complete
    }

    /// The adapter returned the `URLRequest` to send; `false` when the request moved on meanwhile.
    mutating func didAdapt() -> Bool {
        guard takes(.adapted) else { return false }
        enterExecuting()
        return true
    }

    // MARK: - Transport

    enum TaskAction {
        case none
        case cancel(any TransportTask)
        case suspend(any TransportTask)
    }

    /// The engine returned the task of hop `serial`. An engine that completes at once has moved the phase on already.
    mutating func didCreateTask(_ task: any TransportTask, serial: Int) -> TaskAction {
        guard takes(.taskCreated, serial: serial) else { return .none }
        phase = .executing(task: task)
        switch control {
        case .cancelled: return .cancel(task)
        case .suspended: return .suspend(task)
        case .initialized, .resumed: return .none
        }
    }

    /// What the request makes of a finished hop, before the machine weighs cancellation.
    enum HopOutcome {
        case success
        /// A follower (a redirect, a challenge) decides whether another hop follows.
        case mayFollow
        case failure(AFError)
    }

    enum HopAction {
        /// Complete with the hop's body (success) or `explicitlyCancelled` (`wasCancelled`).
        case complete(wasCancelled: Bool)
        case decideNextHop
        /// Validate (when there are validators), then ask the retrier if that failed.
        case validateThenMaybeRetry
        case askRetrier
        case fail
    }

    /// The hop ended.
    ///
    /// - Parameters:
    ///   - outcome:    What the hop produced.
    ///   - hasRetrier: Whether a retrier will be asked about failures.
    mutating func hopDidComplete(_ outcome: HopOutcome, hasRetrier: Bool) -> HopAction {
        _ = takes(.hopCompleted)
        if control == .cancelled {
            phase = .completed
            return .complete(wasCancelled: true)
        }
        switch outcome {
        case .mayFollow:
            phase = .awaitingHopDecision
            return .decideNextHop
        case .success where hasRetrier:
            // Validation may fail and the retrier then decides, so the outcome is not settled yet.
            phase = .validating
            return .validateThenMaybeRetry
        case .success:
            phase = .completed
            return .complete(wasCancelled: false)
        case let .failure(error):
            switch settleFailure(error, hasRetrier: hasRetrier) {
            case .askRetrier: return .askRetrier
            default: return .fail
            }
        }
    }

    enum DecisionAction {
        case ignore
        case follow
        case complete
        /// Deliver the response as a successful hop would be: validate, then ask the retrier if that failed.
        case validateThenMaybeRetry
    }

    /// The decision about another hop (a redirect to follow, a challenge to answer) was made: send it (`true`) or
    /// deliver the response that asked for it.
    ///
    /// - Parameters:
    ///   - follow:     Whether another hop is sent.
    ///   - hasRetrier: Whether a retrier judges the delivered response once validators have run.
    mutating func didDecideNextHop(follow: Bool, hasRetrier: Bool = false) -> DecisionAction {
        guard takes(.hopDecided) else { return .ignore }
        if follow {
            enterExecuting()
            return .follow
        }
        if hasRetrier {
            phase = .validating
            return .validateThenMaybeRetry
        }
        phase = .completed
        return .complete
    }

    /// Validation after a successful hop ended; with `error`, the retrier decides.
    mutating func didValidate(error: AFError?) -> FailureAction {
        guard takes(.validated) else { return .ignore }
        guard let error else {
            phase = .completed
            return .complete
        }
        phase = .awaitingRetryDecision(error: error)
        return .askRetrier
    }

    enum RetryAction {
        case ignore
        /// Make the `URLRequest` again now.
        case retryNow
        /// Wait, then retry.
        case retryAfter(TimeInterval)
        /// Complete with this error.
        case complete(AFError)
    }

    /// The retrier decided.
    mutating func didDecideRetry(_ result: RetryResult) -> RetryAction {
        guard takes(.retryDecided), case let .awaitingRetryDecision(original) = phase else { return .ignore }
        switch result {
        case .retry:
            retryCount += 1
            phase = .creatingURLRequest
            return .retryNow
        case let .retryWithDelay(delay):
            retryCount += 1
            phase = .waitingRetryDelay
            return .retryAfter(delay)
        case .doNotRetry:
            phase = .completed
            return .complete(original)
        case let .doNotRetryWithError(error):
            phase = .completed
            return .complete(.requestRetryFailed(retryError: error, originalError: original))
        }
    }

    /// The retry delay elapsed; `false` when the request moved on (cancelled meanwhile).
    mutating func retryDelayDidElapse() -> Bool {
        guard takes(.retryDelayElapsed) else { return false }
        phase = .creatingURLRequest
        return true
    }

    // MARK: - Response handlers

    /// The finish work is done (validators, monitor): the handlers run, starting with the caller's loop.
    mutating func beginHandlers() {
        _ = takes(.handlersBegan)
        phase = handlers.isEmpty ? .finished : .runningHandlers
        processingHandlers = true
    }

    /// Whether every queued handler may run on the thread that completes the request.
    var handlersAreInlineSafe: Bool { handlers.allSatisfy(\.inlineSafe) }

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
        precondition(processingHandlers, "A handler was taken with no handler loop running: \(phase)")
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

    enum AppendAction {
        /// Queued behind a request still running, or behind handlers already running.
        case queued
        /// The request is finished: run the handlers now.
        case process
    }

    /// A response handler was added.
    ///
    /// - Returns: What to do, and whether the request should be resumed (it was never resumed and the session starts
    ///   requests immediately).
    mutating func appendHandler(_ handler: ResponseHandler, startsImmediately: Bool) -> (AppendAction, resume: Bool) {
        handlers.append(handler)
        switch phase {
        case .finished:
            // Alamofire moves a finished request back to running while the new handler runs.
            phase = .runningHandlers
            if control == .initialized { control = .resumed }
            if processingHandlers { return (.queued, false) }
            processingHandlers = true
            return (.process, false)
        case .runningHandlers, .completed:
            return (.queued, false)
        default:
            return (.queued, control == .initialized && startsImmediately)
        }
    }
}
