@testable import Bluebonnet
import Foundation
import XCTest

/// The lifecycle machine on its own, no socket: each phase meets each event.
final class RequestStateMachineTests: XCTestCase {
    typealias Machine = RequestStateMachine

    struct NoTask: TransportTask {
        func cancel() {}
        func suspend() {}
        func resume() {}
    }

    static let handler = Machine.ResponseHandler(inlineSafe: true, run: {})

    // MARK: - Bringing a machine to each phase

    enum Stage: String, CaseIterable {
        case initialized, creating, ready, adapting, executingNoTask, executing, hopDecision, validating
        case retryDecision, retryDelay, completed, runningHandlers, finished
    }

    static func machine(at stage: Stage) -> Machine {
        var machine = Machine()
        machine.adapts = stage == .adapting
        if stage == .initialized { return machine }
        if stage == .ready {
            XCTAssertTrue(machine.claimCreation())
            guard case .wait = machine.didCreateURLRequest() else { XCTFail("ready"); return machine }
            return machine
        }
        guard case .createURLRequest = machine.resume(createsInline: true) else { XCTFail("resume"); return machine }
        if stage == .creating { return machine }
        _ = machine.didCreateURLRequest()
        if stage == .adapting || stage == .executingNoTask { return machine }
        _ = machine.didCreateTask(NoTask(), serial: machine.hopSerial)
        switch stage {
        case .executing:
            return machine
        case .hopDecision:
            _ = machine.hopDidComplete(.mayFollow, hasRetrier: false)
        case .validating:
            _ = machine.hopDidComplete(.success, hasRetrier: true)
        case .retryDecision:
            _ = machine.hopDidComplete(.failure(.explicitlyCancelled), hasRetrier: true)
        case .retryDelay:
            _ = machine.hopDidComplete(.failure(.explicitlyCancelled), hasRetrier: true)
            _ = machine.didDecideRetry(.retryWithDelay(1))
        case .completed, .runningHandlers, .finished:
            _ = machine.hopDidComplete(.success, hasRetrier: false)
            if stage == .runningHandlers { _ = machine.appendHandler(handler, startsImmediately: true) }
            if stage != .completed { machine.beginHandlers() }
        default:
            break
        }
        return machine
    }

    static let preCompletion: [Stage] = [.initialized, .creating, .ready, .adapting, .executingNoTask, .executing,
                                         .hopDecision, .validating, .retryDecision, .retryDelay]

    // MARK: - Cancel

    func testCancelCompletesAtOnceWhereverNoTaskRuns() {
        for stage in Self.preCompletion where stage != .executing && stage != .executingNoTask {
            var machine = Self.machine(at: stage)
            guard case .complete = machine.cancel() else { XCTFail("\(stage)"); continue }
            XCTAssertEqual(machine.state, .cancelled, "\(stage)")
            XCTAssertTrue(machine.isComplete, "\(stage)")
        }
    }

    func testCancelDuringAHopStopsTheTaskAndWaitsForItsCompletion() {
        var machine = Self.machine(at: .executing)
        guard case .cancelTask = machine.cancel() else { return XCTFail() }
        XCTAssertFalse(machine.isComplete)
        guard case .complete(wasCancelled: true) = machine.hopDidComplete(.success, hasRetrier: true) else { return XCTFail() }
        XCTAssertEqual(machine.state, .cancelled)
    }

    func testCancelWhileTheEngineIsHandedTheHopCancelsTheTaskWhenItArrives() {
        var machine = Self.machine(at: .executingNoTask)
        guard case .cancelledAwaitingTask = machine.cancel() else { return XCTFail() }
        guard case .cancel = machine.didCreateTask(NoTask(), serial: machine.hopSerial) else { return XCTFail() }
    }

    func testCancelAfterCompletionChangesNothing() {
        for stage in [Stage.completed, .runningHandlers, .finished] {
            var machine = Self.machine(at: stage)
            let before = machine.state
            guard case .ignore = machine.cancel() else { XCTFail("\(stage)"); continue }
            XCTAssertEqual(machine.state, before, "\(stage)")
        }
    }

    func testCancelTwiceIsIgnoredTheSecondTime() {
        var machine = Self.machine(at: .executing)
        _ = machine.cancel()
        guard case .ignore = machine.cancel() else { return XCTFail() }
    }

    // MARK: - Late results after a cancel

    func testResultsArrivingAfterACancelAreDropped() {
        var creating = Self.machine(at: .creating)
        _ = creating.cancel()
        guard case .ignore = creating.didCreateURLRequest() else { return XCTFail("created") }
        guard case .ignore = creating.didFailBeforeExecuting(with: .explicitlyCancelled, hasRetrier: true) else { return XCTFail("failed") }

        var adapting = Self.machine(at: .adapting)
        _ = adapting.cancel()
        XCTAssertFalse(adapting.didAdapt())

        var redirect = Self.machine(at: .hopDecision)
        _ = redirect.cancel()
        guard case .ignore = redirect.didDecideNextHop(follow: true) else { return XCTFail("redirect") }

        var validating = Self.machine(at: .validating)
        _ = validating.cancel()
        guard case .ignore = validating.didValidate(error: nil) else { return XCTFail("validate") }

        var retry = Self.machine(at: .retryDecision)
        _ = retry.cancel()
        guard case .ignore = retry.didDecideRetry(.retry) else { return XCTFail("retry") }

        var delay = Self.machine(at: .retryDelay)
        _ = delay.cancel()
        XCTAssertFalse(delay.retryDelayDidElapse())
    }

    /// Sends `event` with plausible arguments.
    static func perform(_ event: Machine.Event, on machine: inout Machine) {
        switch event {
        case .claimCreation: _ = machine.claimCreation()
        case .urlRequestCreated: _ = machine.didCreateURLRequest()
        case .failedBeforeExecuting: _ = machine.didFailBeforeExecuting(with: .explicitlyCancelled, hasRetrier: true)
        case .adapted: _ = machine.didAdapt()
        case .taskCreated: _ = machine.didCreateTask(NoTask(), serial: machine.hopSerial)
        case .hopCompleted: _ = machine.hopDidComplete(.success, hasRetrier: false)
        case .hopDecided: _ = machine.didDecideNextHop(follow: true)
        case .validated: _ = machine.didValidate(error: nil)
        case .retryDecided: _ = machine.didDecideRetry(.retry)
        case .retryDelayElapsed: _ = machine.retryDelayDidElapse()
        case .handlersBegan: machine.beginHandlers()
        }
    }

    /// What an event may change of a machine.
    static func snapshot(_ machine: Machine) -> String {
        "\(machine.phaseKind) \(machine.control) \(machine.hopSerial) \(machine.retryCount) \(machine.transportTask != nil)"
    }

    func testEveryPhaseAndEventEitherActsOrIsANamedLateArrival() {
        var impossible = 0
        for stage in Stage.allCases {
            for cancelled in [false, true] {
                var machine = Self.machine(at: stage)
                if cancelled { _ = machine.cancel() }
                let settledByCancel = machine.control == .cancelled && machine.isComplete
                for event in Machine.Event.allCases {
                    let pair = "\(event) at \(stage)\(cancelled ? " (cancelled)" : "")"
                    switch machine.disposition(of: event, serial: machine.hopSerial) {
                    case .acts:
                        var copy = machine
                        Self.perform(event, on: &copy)
                        XCTAssertNotEqual(Self.snapshot(copy), Self.snapshot(machine), "\(pair) acts but changed nothing")
                    case let .late(reason):
                        var copy = machine
                        Self.perform(event, on: &copy)
                        XCTAssertEqual(Self.snapshot(copy), Self.snapshot(machine), "\(pair) is late but changed the machine")
                        switch reason {
                        case .afterCancel: XCTAssertTrue(settledByCancel, pair)
                        case .taskAfterItsHopEnded: XCTAssertEqual(event, .taskCreated, pair)
                        case .creationAlreadyClaimed: XCTAssertEqual(event, .claimCreation, pair)
                        }
                    case .impossible:
                        // Never sent: it would trap. Only the work of a request that was not cancelled is impossible
                        // out of its phase (and a hop's completion or the handlers' start, which come once).
                        impossible += 1
                        XCTAssertFalse(settledByCancel && event != .hopCompleted && event != .handlersBegan, pair)
                    }
                }
            }
        }
        XCTAssertGreaterThan(impossible, 0)
    }

    func testTheResultOfEveryPieceOfWorkInFlightWhenCancelledIsALateArrival() {
        let inFlight: [(Stage, Machine.Event)] = [
            (.creating, .urlRequestCreated), (.creating, .failedBeforeExecuting), (.adapting, .adapted),
            (.adapting, .failedBeforeExecuting), (.hopDecision, .hopDecided), (.validating, .validated),
            (.retryDecision, .retryDecided), (.retryDelay, .retryDelayElapsed),
        ]
        for (stage, event) in inFlight {
            var machine = Self.machine(at: stage)
            XCTAssertEqual(machine.disposition(of: event), .acts, "\(event) at \(stage)")
            _ = machine.cancel()
            XCTAssertEqual(machine.disposition(of: event), .late(.afterCancel), "\(event) at \(stage)")
        }
    }

    func testATaskTheEngineReturnsAfterItsHopIsNeverTakenForALaterHop() {
        var machine = Self.machine(at: .executingNoTask)
        let first = machine.hopSerial
        // An engine that completes at once: the hop ends before `execute` hears of its task, and a redirect is
        // followed, so a new hop waits for its own task.
        _ = machine.hopDidComplete(.mayFollow, hasRetrier: false)
        _ = machine.didDecideNextHop(follow: true)
        XCTAssertEqual(machine.disposition(of: .taskCreated, serial: first), .late(.taskAfterItsHopEnded))
        guard case .none = machine.didCreateTask(NoTask(), serial: first) else { return XCTFail() }
        XCTAssertNil(machine.transportTask, "the first hop's task was taken for the second")
        guard case .none = machine.didCreateTask(NoTask(), serial: machine.hopSerial) else { return XCTFail() }
        XCTAssertNotNil(machine.transportTask)
    }

    // MARK: - Suspend and resume

    func testSuspendBeforeTheRequestIsMadeHoldsItInReady() {
        var machine = Machine()
        guard case .suspended = machine.suspend() else { return XCTFail() }
        XCTAssertTrue(machine.claimCreation())
        guard case .wait = machine.didCreateURLRequest() else { return XCTFail() }
        XCTAssertEqual(machine.state, .suspended)
        guard case .start(.execute) = machine.resume(createsInline: false) else { return XCTFail() }
    }

    func testSuspendDuringAHopSuspendsTheTaskAndResumeResumesIt() {
        var machine = Self.machine(at: .executing)
        guard case .suspendTask = machine.suspend() else { return XCTFail() }
        guard case .ignore = machine.suspend() else { return XCTFail("twice") }
        guard case .resumeTask = machine.resume(createsInline: true) else { return XCTFail() }
        guard case .ignore = machine.resume(createsInline: true) else { return XCTFail("twice") }
    }

    func testSuspendWhileTheEngineIsHandedTheHopSuspendsTheTaskWhenItArrives() {
        var machine = Self.machine(at: .executingNoTask)
        _ = machine.suspend()
        guard case .suspend = machine.didCreateTask(NoTask(), serial: machine.hopSerial) else { return XCTFail() }
    }

    func testSuspendAndResumeAfterCompletionAreIgnored() {
        for stage in [Stage.completed, .runningHandlers, .finished] {
            var machine = Self.machine(at: stage)
            guard case .ignore = machine.suspend() else { XCTFail("\(stage)"); continue }
            guard case .ignore = machine.resume(createsInline: true) else { XCTFail("\(stage)"); continue }
        }
    }

    func testResumeAfterCancelIsIgnored() {
        var machine = Machine()
        _ = machine.cancel()
        guard case .ignore = machine.resume(createsInline: true) else { return XCTFail() }
        XCTAssertEqual(machine.state, .cancelled)
        XCTAssertFalse(machine.claimCreation())
    }

    func testResumeWithAnAdapterAdaptsFirst() {
        var machine = Machine()
        machine.adapts = true
        XCTAssertTrue(machine.claimCreation())
        _ = machine.didCreateURLRequest()
        guard case .start(.adapt) = machine.resume(createsInline: false) else { return XCTFail() }
        XCTAssertTrue(machine.didAdapt())
        guard case .executing(nil) = machine.phase else { return XCTFail() }
    }

    // MARK: - Hops, redirects, retries

    func testRedirectFollowedRunsAnotherHopAndNotFollowedCompletes() {
        var follow = Self.machine(at: .hopDecision)
        guard case .follow = follow.didDecideNextHop(follow: true) else { return XCTFail() }
        guard case .executing(nil) = follow.phase else { return XCTFail() }
        var stop = Self.machine(at: .hopDecision)
        guard case .complete = stop.didDecideNextHop(follow: false) else { return XCTFail() }
        XCTAssertTrue(stop.isComplete)
    }

    func testAnUnfollowedHopWithARetrierIsValidatedSoTheRetrierCanJudgeIt() {
        var machine = Self.machine(at: .hopDecision)
        guard case .validateThenMaybeRetry = machine.didDecideNextHop(follow: false, hasRetrier: true) else { return XCTFail() }
        guard case .validating = machine.phase else { return XCTFail("\(machine.phase)") }
        XCTAssertFalse(machine.isComplete)
    }

    func testAFailureWithoutRetrierFailsAndWithOneAsks() {
        var without = Self.machine(at: .executing)
        guard case .fail = without.hopDidComplete(.failure(.explicitlyCancelled), hasRetrier: false) else { return XCTFail() }
        var with = Self.machine(at: .executing)
        guard case .askRetrier = with.hopDidComplete(.failure(.explicitlyCancelled), hasRetrier: true) else { return XCTFail() }
    }

    func testValidationVerdictDecidesBetweenCompletingAndAskingTheRetrier() {
        var passed = Self.machine(at: .validating)
        guard case .complete = passed.didValidate(error: nil) else { return XCTFail() }
        var failed = Self.machine(at: .validating)
        guard case .askRetrier = failed.didValidate(error: .responseValidationFailed(reason: .unacceptableStatusCode(code: 500))) else { return XCTFail() }
    }

    func testEveryRetryResult() {
        var now = Self.machine(at: .retryDecision)
        guard case .retryNow = now.didDecideRetry(.retry) else { return XCTFail() }
        XCTAssertEqual(now.retryCount, 1)
        guard case .creatingURLRequest = now.phase else { return XCTFail() }

        var later = Self.machine(at: .retryDecision)
        guard case let .retryAfter(delay) = later.didDecideRetry(.retryWithDelay(2)) else { return XCTFail() }
        XCTAssertEqual(delay, 2)
        XCTAssertTrue(later.retryDelayDidElapse())
        XCTAssertEqual(later.disposition(of: .retryDelayElapsed), .impossible, "a timer fires once")

        var no = Self.machine(at: .retryDecision)
        guard case let .complete(error) = no.didDecideRetry(.doNotRetry) else { return XCTFail() }
        XCTAssertTrue(error.isExplicitlyCancelledError, "the original error")

        struct Refused: Error {}
        var refused = Self.machine(at: .retryDecision)
        guard case let .complete(wrapped) = refused.didDecideRetry(.doNotRetryWithError(Refused())),
              case let .requestRetryFailed(retryError, originalError) = wrapped else { return XCTFail() }
        XCTAssertTrue(retryError is Refused)
        XCTAssertEqual((originalError as? AFError)?.isExplicitlyCancelledError, true)
    }

    func testACreationFailureGoesToTheRetrierWhenThereIsOne() {
        var machine = Self.machine(at: .creating)
        guard case .askRetrier = machine.didFailBeforeExecuting(with: .explicitlyCancelled, hasRetrier: true) else { return XCTFail() }
        var alone = Self.machine(at: .creating)
        guard case .complete = alone.didFailBeforeExecuting(with: .explicitlyCancelled, hasRetrier: false) else { return XCTFail() }
    }

    // MARK: - Handlers

    func testNoHandlerStillFinishes() {
        var machine = Self.machine(at: .completed)
        machine.beginHandlers()
        guard case .done = machine.nextHandler(inline: false) else { return XCTFail() }
        XCTAssertEqual(machine.state, .finished)
    }

    func testHandlersRunInOrderAndTheLastSeesTheRequestFinished() {
        var machine = Self.machine(at: .executing)
        let order = Recorder<Int>()
        for index in 1...3 {
            _ = machine.appendHandler(.init(inlineSafe: true, run: { order.append(index) }), startsImmediately: true)
        }
        _ = machine.hopDidComplete(.success, hasRetrier: false)
        machine.beginHandlers()
        var statesAtRun: [Request.State] = []
        while case let .run(handler) = machine.nextHandler(inline: true) {
            statesAtRun.append(machine.state)
            handler()
        }
        XCTAssertEqual(order.values, [1, 2, 3])
        XCTAssertEqual(statesAtRun, [.resumed, .resumed, .finished])
        XCTAssertEqual(machine.state, .finished)
    }

    func testAHandlerAddedWhileTheLastRunsJoinsTheSameLoop() {
        var machine = Self.machine(at: .completed)
        _ = machine.appendHandler(Self.handler, startsImmediately: true)
        machine.beginHandlers()
        guard case .run = machine.nextHandler(inline: true) else { return XCTFail() }
        XCTAssertEqual(machine.state, .finished)
        // Added while the loop still runs the last handler: queued, not a second loop.
        guard case (.queued, false) = machine.appendHandler(Self.handler, startsImmediately: true) else { return XCTFail() }
        XCTAssertEqual(machine.state, .resumed)
        guard case .run = machine.nextHandler(inline: true) else { return XCTFail() }
        guard case .done = machine.nextHandler(inline: true) else { return XCTFail() }
        XCTAssertEqual(machine.state, .finished)
    }

    func testAHandlerAddedAfterFinishingStartsANewLoop() {
        var machine = Self.machine(at: .finished)
        guard case .done = machine.nextHandler(inline: true) else { return XCTFail() }
        guard case (.process, false) = machine.appendHandler(Self.handler, startsImmediately: true) else { return XCTFail() }
        guard case .run = machine.nextHandler(inline: true) else { return XCTFail() }
        guard case .done = machine.nextHandler(inline: true) else { return XCTFail() }
        XCTAssertEqual(machine.state, .finished)
    }

    func testAHandlerThatMustNotRunInlineHopsTheLoop() {
        var machine = Self.machine(at: .completed)
        _ = machine.appendHandler(.init(inlineSafe: false, run: {}), startsImmediately: true)
        XCTAssertFalse(machine.handlersAreInlineSafe)
        machine.beginHandlers()
        guard case .hop = machine.nextHandler(inline: true) else { return XCTFail() }
        guard case .run = machine.nextHandler(inline: false) else { return XCTFail() }
    }

    func testTheFirstHandlerResumesAnInitializedRequestOnlyWhenTheSessionStartsImmediately() {
        var eager = Machine()
        guard case (.queued, true) = eager.appendHandler(Self.handler, startsImmediately: true) else { return XCTFail() }
        var lazy = Machine()
        guard case (.queued, false) = lazy.appendHandler(Self.handler, startsImmediately: false) else { return XCTFail() }
    }

    func testCancelledStaysCancelledAfterItsHandlersRun() {
        var machine = Self.machine(at: .executing)
        _ = machine.appendHandler(Self.handler, startsImmediately: true)
        _ = machine.cancel()
        _ = machine.hopDidComplete(.success, hasRetrier: false)
        machine.beginHandlers()
        while case .run = machine.nextHandler(inline: true) {}
        XCTAssertEqual(machine.state, .cancelled)
    }
}
