@_spi(Transport) @testable import Bluebonnet
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
    static let url = URLRequest(url: URL(string: "https://example.com/")!)
    static let follow: @Sendable (Request, @escaping @Sendable (HopDecision) -> Void) -> Void = { _, _ in }

    static func policy(
        adapts: Bool = false, retries: Bool = false, creation: Machine.Policy.Creation = .onResume,
        startsImmediately: Bool = true
    ) -> Machine.Policy {
        Machine.Policy(creation: creation, adapts: adapts, retries: retries, startsImmediately: startsImmediately)
    }

    static func machine(
        adapts: Bool = false, retries: Bool = false, startsImmediately: Bool = true, body: Machine.BodyState = .none
    ) -> Machine {
        Machine(policy: policy(adapts: adapts, retries: retries, startsImmediately: startsImmediately), body: body)
    }

    /// A body in memory, which can be sent again.
    static let replayable = BodySupply.fixed(UploadBody(source: .data(Data("body".utf8)), length: 4))
    /// A stream, read once.
    static let once = BodySupply.fixed(UploadBody(source: .stream(InputStream(data: Data("body".utf8))), length: nil))

    static func XCTAssertTaken(
        _ action: Machine.Action, _ message: String = "", file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertTrue(action.isTaken, message, file: file, line: line)
    }

    static func XCTAssertNotTaken(
        _ action: Machine.Action, _ message: String = "", file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertFalse(action.isTaken, "taken: \(action) \(message)", file: file, line: line)
    }

    // MARK: - Bringing a machine to each phase

    enum Stage: String, CaseIterable {
        case initialized, creating, ready, adapting, executingNoTask, executing, hopDecision, validating
        case retryDecision, retryDelay, completed, finishing, runningHandlers, finished, handlerRetryDecision
        /// The consumer's sub-states of a hop on the wire.
        case headHeld, headStreaming, streamEnding, bodyEnded
    }

    static func machine(at stage: Stage) -> Machine {
        // Validating and deciding about a retry take a machine with a retrier.
        let retries = [Stage.validating, .retryDecision, .retryDelay, .handlerRetryDecision].contains(stage)
        // Every machine makes a body of its own with its URLRequest, so the body's events meet every phase.
        var machine = Self.machine(adapts: stage == .adapting, retries: retries, body: .toBeMade)
        if stage == .initialized { return machine }
        if stage == .ready {
            Self.XCTAssertTaken(machine.claimCreation())
            XCTAssertFalse(machine.didMakeBody(.body(replayable)))
            guard case .none = machine.didCreateURLRequest(url) else { XCTFail("ready"); return machine }
            return machine
        }
        guard case .createURLRequest(onRequestQueue: false) = machine.resume() else {
            XCTFail("resume"); return machine
        }
        if stage == .creating { return machine }
        XCTAssertFalse(machine.didMakeBody(.body(replayable)))
        _ = machine.didCreateURLRequest(url)
        if stage == .adapting || stage == .executingNoTask { return machine }
        guard case .send = machine.takeBody(for: url, firstMethod: "POST") else {
            XCTFail("body"); return machine
        }
        _ = machine.didCreateTask(NoTask(), serial: machine.hopSerial)
        switch stage {
        case .executing:
            return machine
        case .headHeld, .headStreaming, .streamEnding, .bodyEnded:
            machine.hopWillReceiveBody(streaming: stage != .headHeld)
            if stage == .streamEnding || stage == .bodyEnded {
                XCTAssertEqual(machine.hopBodyDidEnd(), true)
            }
            if stage == .bodyEnded {
                // A held body ends with nothing left to finish; a body that streams ends through the consumer.
                machine = Self.machine(at: .headHeld)
                XCTAssertEqual(machine.hopBodyDidEnd(), false)
            }
            return machine
        case .hopDecision:
            _ = machine.hopDidComplete(.mayFollow(follow), body: nil)
        case .validating:
            _ = machine.hopDidComplete(.success, body: nil)
        case .retryDecision:
            _ = machine.hopDidComplete(.failure(.explicitlyCancelled), body: nil)
        case .retryDelay:
            _ = machine.hopDidComplete(.failure(.explicitlyCancelled), body: nil)
            _ = machine.didDecideRetry(.retryWithDelay(1))
        case .completed, .finishing, .runningHandlers, .finished, .handlerRetryDecision:
            _ = machine.hopDidComplete(.success, body: nil)
            // A machine with a retrier validates first.
            if stage == .handlerRetryDecision { _ = machine.didValidate(error: nil) }
            if stage == .runningHandlers || stage == .handlerRetryDecision { _ = machine.appendHandler(handler) }
            if stage != .completed { machine.beginFinishing() }
            if stage != .completed && stage != .finishing { machine.beginHandlers() }
            if stage == .handlerRetryDecision {
                guard case .run = machine.nextHandler(inline: false) else { XCTFail("handler"); return machine }
                XCTAssertTrue(machine.handlerFailed(rerun: handler))
            }
        default:
            break
        }
        return machine
    }

    static let preCompletion: [Stage] = [
        .initialized, .creating, .ready, .adapting, .executingNoTask, .executing,
        .hopDecision, .validating, .retryDecision, .retryDelay,
    ]

    // MARK: - Cancel

    func testTheHandlerQueueKeepsItsOrderAcrossItsInlineSlotAndItsArray() {
        let ran = Recorder<Int>()
        func handler(_ number: Int, inlineSafe: Bool = true) -> RequestStateMachine.ResponseHandler {
            RequestStateMachine.ResponseHandler(inlineSafe: inlineSafe) { ran.append(number) }
        }
        var queue = RequestStateMachine.HandlerQueue()
        XCTAssertTrue(queue.isEmpty)
        XCTAssertTrue(queue.allSatisfy { _ in false }, "vacuously")
        queue.append(handler(2))
        queue.append(handler(3, inlineSafe: false))
        queue.prepend(handler(1))
        queue.append(handler(4))
        XCTAssertEqual(queue.count, 4)
        XCTAssertFalse(queue.allSatisfy(\.inlineSafe))
        while let first = queue.first {
            first.run()
            queue.removeFirst()
        }
        XCTAssertEqual(ran.values, [1, 2, 3, 4])
        XCTAssertTrue(queue.isEmpty)
        queue.prepend(handler(5))
        XCTAssertEqual(queue.count, 1)
    }

    func testCancelCompletesAtOnceWhereverNoTaskRuns() {
        for stage in Self.preCompletion where stage != .executing && stage != .executingNoTask {
            var machine = Self.machine(at: stage)
            guard case let .finish(outcome, _) = machine.cancel() else { XCTFail("\(stage)"); continue }
            XCTAssertEqual(outcome.error?.isExplicitlyCancelledError, true, "\(stage)")
            XCTAssertEqual(machine.state, .cancelled, "\(stage)")
            XCTAssertTrue(machine.isComplete, "\(stage)")
        }
    }

    func testCancelDuringAHopStopsTheTaskAndWaitsForItsCompletion() {
        var machine = Self.machine(at: .executing)
        guard case .cancelTask = machine.cancel() else { return XCTFail() }
        XCTAssertFalse(machine.isComplete)
        guard case let .finish(outcome, body) = machine.hopDidComplete(.success, body: Data("late".utf8)),
            outcome.error?.isExplicitlyCancelledError == true
        else { return XCTFail() }
        XCTAssertNil(body, "a cancelled request delivers no body")
        XCTAssertEqual(machine.state, .cancelled)
    }

    func testCancelWhileTheEngineIsHandedTheHopCancelsTheTaskWhenItArrives() {
        var machine = Self.machine(at: .executingNoTask)
        guard case .none = machine.cancel() else { return XCTFail() }
        guard case .cancelTask = machine.didCreateTask(NoTask(), serial: machine.hopSerial) else { return XCTFail() }
    }

    func testCancelAfterCompletionChangesNothing() {
        for stage in [Stage.completed, .finishing, .runningHandlers, .finished] {
            var machine = Self.machine(at: stage)
            let before = machine.state
            guard !machine.cancel().isTaken else { XCTFail("\(stage)"); continue }
            XCTAssertEqual(machine.state, before, "\(stage)")
        }
    }

    func testCancelTwiceIsIgnoredTheSecondTime() {
        var machine = Self.machine(at: .executing)
        _ = machine.cancel()
        Self.XCTAssertNotTaken(machine.cancel())
    }

    // MARK: - Late results after a cancel

    func testResultsArrivingAfterACancelAreDropped() {
        var creating = Self.machine(at: .creating)
        _ = creating.cancel()
        Self.XCTAssertNotTaken(creating.didCreateURLRequest(Self.url), "created")
        Self.XCTAssertNotTaken(creating.didFailBeforeExecuting(with: .explicitlyCancelled), "failed")

        var adapting = Self.machine(at: .adapting)
        _ = adapting.cancel()
        Self.XCTAssertNotTaken(adapting.didAdapt(Self.url))

        var redirect = Self.machine(at: .hopDecision)
        _ = redirect.cancel()
        Self.XCTAssertNotTaken(redirect.didDecideNextHop(.newHop(Self.url)), "redirect")

        var validating = Self.machine(at: .validating)
        _ = validating.cancel()
        Self.XCTAssertNotTaken(validating.didValidate(error: nil), "validate")

        var retry = Self.machine(at: .retryDecision)
        _ = retry.cancel()
        Self.XCTAssertNotTaken(retry.didDecideRetry(.retry), "retry")

        var delay = Self.machine(at: .retryDelay)
        _ = delay.cancel()
        Self.XCTAssertNotTaken(delay.retryDelayDidElapse())
    }

    /// Sends `event` with plausible arguments.
    static func perform(_ event: Machine.Event, on machine: inout Machine) {
        switch event {
        case .claimCreation: _ = machine.claimCreation()
        case .urlRequestCreated: _ = machine.didCreateURLRequest(url)
        case .failedBeforeExecuting: _ = machine.didFailBeforeExecuting(with: .explicitlyCancelled)
        case .adapted: _ = machine.didAdapt(url)
        case .taskCreated: _ = machine.didCreateTask(NoTask(), serial: machine.hopSerial)
        case .hopCompleted: _ = machine.hopDidComplete(.success, body: nil)
        case .hopDecided: _ = machine.didDecideNextHop(.newHop(url))
        case .validated: _ = machine.didValidate(error: nil)
        case .retryDecided: _ = machine.didDecideRetry(.retry)
        case .retryDelayElapsed: _ = machine.retryDelayDidElapse()
        case .finishBegan: machine.beginFinishing()
        case .handlersBegan: machine.beginHandlers()
        case .handlerRetryDecided: _ = machine.didDecideHandlerRetry(.retry)
        case .bodyMade: _ = machine.didMakeBody(.body(replayable))
        case .bodyTaken: _ = machine.takeBody(for: url, firstMethod: "POST")
        case .headArrived: machine.hopWillReceiveBody(streaming: true)
        case .bodyEnded: _ = machine.hopBodyDidEnd()
        }
    }

    /// What an event may change of a machine.
    static func snapshot(_ machine: Machine) -> String {
        let body =
            switch machine.body {
            case .none: "none"
            case .toBeMade: "to be made"
            case let .made(_, sends, coding): "sent \(sends) \(coding != nil)"
            case .unreadable: "unreadable"
            }
        return "\(machine.phaseKind) \(machine.control) \(machine.hopSerial) \(machine.retryCount) "
            + "\(machine.transportTask != nil) \(String(describing: machine.hop?.delivery)) \(body)"
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
                        XCTAssertNotEqual(
                            Self.snapshot(copy), Self.snapshot(machine), "\(pair) acts but changed nothing")
                    case let .late(reason):
                        var copy = machine
                        Self.perform(event, on: &copy)
                        XCTAssertEqual(
                            Self.snapshot(copy), Self.snapshot(machine), "\(pair) is late but changed the machine")
                        switch reason {
                        case .afterCancel: XCTAssertTrue(settledByCancel, pair)
                        case .taskAfterItsHopEnded: XCTAssertEqual(event, .taskCreated, pair)
                        case .creationAlreadyClaimed: XCTAssertEqual(event, .claimCreation, pair)
                        }
                    case .impossible:
                        // Never sent: it would trap. Only the work of a request that was not cancelled is impossible
                        // out of its phase, and the events of a hop on the wire (its body taken, its head, its body's
                        // end, its completion), which a cancel never cuts short, and the finishing work and the
                        // handlers' start, which come once.
                        impossible += 1
                        let once: Set<Machine.Event> = [
                            .hopCompleted, .finishBegan, .handlersBegan, .bodyTaken, .headArrived, .bodyEnded,
                        ]
                        XCTAssertFalse(settledByCancel && !once.contains(event), pair)
                    }
                }
            }
        }
        XCTAssertGreaterThan(impossible, 0)
    }

    // MARK: - The body's and the consumer's sub-states

    /// A machine on its first hop, with `body` made, the hop not yet handed to the engine.
    static func executing(with made: Machine.BodyState, retries: Bool = false) -> Machine {
        var machine = Self.machine(retries: retries, body: made)
        _ = machine.resume()
        _ = machine.didCreateURLRequest(post)
        return machine
    }

    static let post: URLRequest = {
        var request = URLRequest(url: URL(string: "https://example.com/upload")!)
        request.httpMethod = "POST"
        return request
    }()

    /// Sends the same hop again (a challenge's answer) and takes its body.
    static func sameHopAgain(_ machine: inout Machine) -> Machine.HopBody {
        nextHop(&machine, .sameHopAgain(post, notes: FeatureValues()), sending: post)
    }

    /// Ends the hop on the wire with a response a follower decides about, follows `decision` and takes the next hop's
    /// body for `request`.
    static func nextHop(_ machine: inout Machine, _ decision: HopDecision, sending request: URLRequest)
        -> Machine.HopBody
    {
        _ = machine.didCreateTask(NoTask(), serial: machine.hopSerial)
        _ = machine.hopDidComplete(.mayFollow(follow), body: nil)
        _ = machine.didDecideNextHop(decision)
        return machine.takeBody(for: request, firstMethod: "POST")
    }

    func testABodyReadOnceIsSentOnceAndAReplayableOneAsOftenAsAHopNeedsIt() {
        var once = Self.executing(with: .made(Self.once, sends: 0, coding: nil))
        XCTAssertFalse(once.canResendBody)
        guard case .send = once.takeBody(for: Self.post, firstMethod: "POST") else { return XCTFail("first send") }
        guard case let .fail(error) = Self.sameHopAgain(&once) else { return XCTFail("a stream sent twice") }
        XCTAssertEqual((error.underlyingError as? URLError)?.code, .requestBodyStreamExhausted)

        var replayable = Self.executing(with: .made(Self.replayable, sends: 0, coding: nil))
        XCTAssertTrue(replayable.canResendBody)
        guard case .send = replayable.takeBody(for: Self.post, firstMethod: "POST") else { return XCTFail("first") }
        guard case let .send(again) = Self.sameHopAgain(&replayable) else { return XCTFail("resent") }
        XCTAssertEqual(again.length, 4)
        guard case let .made(_, sends, _) = replayable.body else { return XCTFail("made") }
        XCTAssertEqual(sends, 2)
    }

    func testAFreshStreamIsMadeForEachSendAndOneThatCannotReplayIsNotMadeTwice() {
        let made = Protected(0)
        let fresh = BodySupply.fresh(length: 4, isReplayable: true) {
            made.write { $0 += 1 }
            return InputStream(data: Data("body".utf8))
        }
        var machine = Self.executing(with: .made(fresh, sends: 0, coding: nil))
        _ = machine.takeBody(for: Self.post, firstMethod: "POST")
        _ = Self.sameHopAgain(&machine)
        XCTAssertEqual(made.read(), 2)

        let single = BodySupply.fresh(length: nil, isReplayable: false) {
            made.write { $0 += 1 }
            return InputStream(data: Data())
        }
        var once = Self.executing(with: .made(single, sends: 0, coding: nil))
        _ = once.takeBody(for: Self.post, firstMethod: "POST")
        guard case .fail = Self.sameHopAgain(&once) else { return XCTFail("a single stream sent twice") }
        XCTAssertEqual(made.read(), 3, "the second send made no stream")
    }

    func testARedirectToAGetDropsTheBodyWithoutCountingASendAndA307KeepsIt() {
        var machine = Self.executing(with: .made(Self.once, sends: 0, coding: nil))
        _ = machine.takeBody(for: Self.post, firstMethod: "POST")
        guard case .none = Self.nextHop(&machine, .newHop(Self.url), sending: Self.url) else { return XCTFail("GET") }
        guard case let .made(_, sends, _) = machine.body else { return XCTFail("made") }
        XCTAssertEqual(sends, 1)

        var kept = Self.executing(with: .made(Self.replayable, sends: 0, coding: nil))
        _ = kept.takeBody(for: Self.post, firstMethod: "POST")
        guard case .send = Self.nextHop(&kept, .newHop(Self.post), sending: Self.post) else { return XCTFail("307") }
    }

    func testAnUnreadableBodyFailsEverySendAndTheBodyIsMadeOnceAcrossRetries() {
        var unreadable = Self.executing(with: .unreadable(URLError(.fileDoesNotExist)))
        guard case let .fail(error) = unreadable.takeBody(for: Self.post, firstMethod: "POST") else {
            return XCTFail("unreadable")
        }
        XCTAssertEqual((error.underlyingError as? URLError)?.code, .fileDoesNotExist)

        var machine = Self.machine(retries: true, body: .toBeMade)
        _ = machine.resume()
        XCTAssertTrue(machine.awaitsBody)
        XCTAssertEqual(machine.disposition(of: .bodyMade), .acts)
        XCTAssertFalse(machine.didMakeBody(.body(Self.replayable)))
        XCTAssertEqual(machine.disposition(of: .bodyMade), .impossible, "made twice")
        _ = machine.didCreateURLRequest(Self.post)
        _ = machine.takeBody(for: Self.post, firstMethod: "POST")
        _ = machine.didCreateTask(NoTask(), serial: machine.hopSerial)
        _ = machine.hopDidComplete(.failure(.explicitlyCancelled), body: nil)
        _ = machine.didDecideRetry(.retry)
        XCTAssertFalse(machine.awaitsBody, "a retry sends the body made the first time")
        guard case let .made(_, sends, _) = machine.body else { return XCTFail("made") }
        XCTAssertEqual(sends, 1)
    }

    func testABodyMadeAfterTheRequestWasCancelledIsTheMakersToRelease() {
        var machine = Self.machine(body: .toBeMade)
        _ = machine.resume()
        _ = machine.cancel()
        XCTAssertEqual(machine.disposition(of: .bodyMade), .late(.afterCancel))
        XCTAssertTrue(machine.didMakeBody(.body(Self.replayable)))
        guard case .toBeMade = machine.body else { return XCTFail("kept a body nobody sends") }
    }

    func testTheAdaptersCodingChoiceCodesTheBodyItWasMadeForOnly() {
        var machine = Self.executing(with: .made(Self.replayable, sends: 0, coding: nil))
        let choice = machine.makeCodingChoice()
        XCTAssertEqual(choice?.bytesInMemory, Data("body".utf8))
        choice?.choose(UploadBodyCoding(name: "identity") { $0 })
        guard case let .send(body) = machine.takeBody(for: Self.post, firstMethod: "POST") else {
            return XCTFail("send")
        }
        XCTAssertNil(body.length, "a coded body's length is unknown")

        let fresh = BodySupply.fresh(length: 1, isReplayable: true) { InputStream(data: Data("x".utf8)) }
        var stream = Self.executing(with: .made(fresh, sends: 0, coding: nil))
        XCTAssertNil(stream.makeCodingChoice())
        var none = Self.executing(with: .none)
        XCTAssertNil(none.makeCodingChoice())
        guard case .none = none.takeBody(for: Self.post, firstMethod: "POST") else { return XCTFail("no body") }
    }

    func testTheConsumerSeesOneHeadAndOneEndPerHopAndOnlyAStreamedBodyIsFinishedByIt() {
        var streamed = Self.machine(at: .executing)
        XCTAssertEqual(streamed.hop?.delivery, .awaitingHead)
        streamed.hopWillReceiveBody(streaming: true)
        XCTAssertEqual(streamed.hop?.streamsBody, true)
        XCTAssertEqual(streamed.disposition(of: .headArrived), .impossible, "a second head")
        XCTAssertTrue(streamed.hopBodyDidEnd())
        XCTAssertEqual(streamed.hop?.delivery, .endingStream)
        XCTAssertEqual(streamed.hop?.streamsBody, true, "the consumer is still finishing")
        XCTAssertEqual(streamed.disposition(of: .bodyEnded), .impossible, "a second end")

        var held = Self.machine(at: .executing)
        held.hopWillReceiveBody(streaming: false)
        XCTAssertFalse(held.hopBodyDidEnd())
        XCTAssertEqual(held.hop?.delivery, .ended)

        // A hop that ended before its head (a refused connection) has nothing for the consumer to finish.
        var headless = Self.machine(at: .executing)
        XCTAssertFalse(headless.hopBodyDidEnd())

        // The next hop starts again without a head.
        _ = streamed.hopDidComplete(.mayFollow(Self.follow), body: nil)
        _ = streamed.didDecideNextHop(.newHop(Self.url))
        XCTAssertEqual(streamed.hop?.delivery, .awaitingHead)
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
        _ = machine.hopDidComplete(.mayFollow(Self.follow), body: nil)
        _ = machine.didDecideNextHop(.newHop(Self.url))
        XCTAssertEqual(machine.disposition(of: .taskCreated, serial: first), .late(.taskAfterItsHopEnded))
        guard case .none = machine.didCreateTask(NoTask(), serial: first) else { return XCTFail() }
        XCTAssertNil(machine.transportTask, "the first hop's task was taken for the second")
        guard case .none = machine.didCreateTask(NoTask(), serial: machine.hopSerial) else { return XCTFail() }
        XCTAssertNotNil(machine.transportTask)
    }

    // MARK: - Suspend and resume

    func testSuspendBeforeTheRequestIsMadeHoldsItInReady() {
        var machine = Self.machine()
        guard case .none = machine.suspend() else { return XCTFail() }
        Self.XCTAssertTaken(machine.claimCreation())
        guard case .none = machine.didCreateURLRequest(Self.url) else { return XCTFail() }
        XCTAssertEqual(machine.state, .suspended)
        guard case .ready = machine.phase else { return XCTFail("\(machine.phase)") }
        guard case let .execute(sent) = machine.resume() else { return XCTFail() }
        XCTAssertEqual(sent, Self.url, "the URLRequest the ready phase held")
    }

    func testSuspendDuringAHopSuspendsTheTaskAndResumeResumesIt() {
        var machine = Self.machine(at: .executing)
        guard case .suspendTask = machine.suspend() else { return XCTFail() }
        Self.XCTAssertNotTaken(machine.suspend(), "twice")
        guard case .resumeTask = machine.resume() else { return XCTFail() }
        Self.XCTAssertNotTaken(machine.resume(), "twice")
    }

    func testSuspendWhileTheEngineIsHandedTheHopSuspendsTheTaskWhenItArrives() {
        var machine = Self.machine(at: .executingNoTask)
        _ = machine.suspend()
        guard case .suspendTask = machine.didCreateTask(NoTask(), serial: machine.hopSerial) else { return XCTFail() }
    }

    func testSuspendAndResumeAfterCompletionAreIgnored() {
        for stage in [Stage.completed, .finishing, .runningHandlers, .finished] {
            var machine = Self.machine(at: stage)
            Self.XCTAssertNotTaken(machine.suspend(), "\(stage)")
            Self.XCTAssertNotTaken(machine.resume(), "\(stage)")
        }
    }

    func testResumeAfterCancelIsIgnored() {
        var machine = Self.machine()
        _ = machine.cancel()
        Self.XCTAssertNotTaken(machine.resume())
        XCTAssertEqual(machine.state, .cancelled)
        Self.XCTAssertNotTaken(machine.claimCreation())
    }

    func testHowTheFirstResumeMakesTheURLRequestIsFixedByThePolicy() {
        var inline = Machine(policy: Self.policy(creation: .onResume))
        guard case .createURLRequest(onRequestQueue: false) = inline.resume() else { return XCTFail("inline") }
        var queued = Machine(policy: Self.policy(creation: .onResumeOnRequestQueue))
        guard case .createURLRequest(onRequestQueue: true) = queued.resume() else { return XCTFail("queued") }
        var eager = Machine(policy: Self.policy(creation: .bySession))
        guard case .none = eager.resume() else { return XCTFail("made by the session") }
        Self.XCTAssertTaken(eager.claimCreation())
        guard case .execute = eager.didCreateURLRequest(Self.url) else { return XCTFail("starts once made") }
    }

    func testResumeWithAnAdapterAdaptsFirst() {
        var machine = Self.machine(adapts: true)
        Self.XCTAssertTaken(machine.claimCreation())
        _ = machine.didCreateURLRequest(Self.url)
        guard case .adapt = machine.resume() else { return XCTFail() }
        let adapted = URLRequest(url: URL(string: "https://example.com/adapted")!)
        guard case .execute(adapted) = machine.didAdapt(adapted) else { return XCTFail() }
        XCTAssertEqual(machine.hop?.request, adapted)
        XCTAssertNil(machine.transportTask)
    }

    func testAnInterceptorChainedOnBeforeTheStartAdaptsAndRetries() {
        var machine = Self.machine()
        machine.addInterceptor(adapts: true)
        _ = machine.resume()
        guard case .adapt = machine.didCreateURLRequest(Self.url) else { return XCTFail() }
        _ = machine.didAdapt(Self.url)
        guard case .askRetrier = machine.hopDidComplete(.failure(.explicitlyCancelled), body: nil) else {
            return XCTFail()
        }
    }

    // MARK: - Hops, redirects, retries

    func testRedirectFollowedRunsAnotherHopAndNotFollowedCompletesWithTheBodyThatWaited() {
        var follow = Self.machine(at: .hopDecision)
        let next = URLRequest(url: URL(string: "https://example.com/next")!)
        guard case .execute(next) = follow.didDecideNextHop(.newHop(next)) else { return XCTFail() }
        XCTAssertEqual(follow.redirectCount, 1)
        XCTAssertEqual(follow.hop?.request, next)

        var stop = Self.machine(at: .executing)
        let body = Data("moved".utf8)
        _ = stop.hopDidComplete(.mayFollow(Self.follow), body: body)
        guard case .finish(let outcome, body) = stop.didDecideNextHop(.deliver) else { return XCTFail() }
        XCTAssertNil(outcome.error)
        XCTAssertFalse(outcome.validated)
        XCTAssertTrue(stop.isComplete)
        XCTAssertEqual(stop.redirectCount, 0)
    }

    func testTheSameHopAgainCarriesTheFollowersNotesAndCountsNoRedirect() {
        var machine = Self.machine(at: .hopDecision)
        var notes = FeatureValues()
        notes[TestNote.self] = 7
        guard case .execute = machine.didDecideNextHop(.sameHopAgain(Self.url, notes: notes)) else { return XCTFail() }
        XCTAssertEqual(machine.hop?.notes[TestNote.self], 7)
        XCTAssertEqual(machine.redirectCount, 0)
    }

    enum TestNote: FeatureKey { typealias Value = Int }

    func testAnUnfollowedHopWithARetrierIsValidatedSoTheRetrierCanJudgeIt() {
        var machine = Self.machine(retries: true)
        _ = machine.resume()
        _ = machine.didCreateURLRequest(Self.url)
        _ = machine.hopDidComplete(.mayFollow(Self.follow), body: Data("x".utf8))
        guard case .validate(body: Data("x".utf8)) = machine.didDecideNextHop(.deliver) else { return XCTFail() }
        guard case .validating = machine.phase else { return XCTFail("\(machine.phase)") }
        XCTAssertFalse(machine.isComplete)
    }

    func testAFailureWithoutRetrierFailsAndWithOneAsks() {
        var without = Self.machine(at: .executing)
        guard case let .finish(outcome, _) = without.hopDidComplete(.failure(.explicitlyCancelled), body: nil),
            outcome.error != nil
        else { return XCTFail() }
        var with = Self.machine(retries: true)
        _ = with.resume()
        _ = with.didCreateURLRequest(Self.url)
        guard case .askRetrier = with.hopDidComplete(.failure(.explicitlyCancelled), body: nil) else {
            return XCTFail()
        }
    }

    func testValidationVerdictDecidesBetweenCompletingAndAskingTheRetrier() {
        var passed = Self.machine(at: .validating)
        guard case let .finish(outcome, _) = passed.didValidate(error: nil) else { return XCTFail() }
        XCTAssertTrue(outcome.validated, "the validators do not run twice")
        var failed = Self.machine(at: .validating)
        guard
            case .askRetrier = failed.didValidate(
                error: .responseValidationFailed(reason: .unacceptableStatusCode(code: 500)))
        else { return XCTFail() }
    }

    func testAHandlersFailureWaitsForTheRetrierThenRetriesWithTheHandlerFirstOrGoesOn() {
        var retried = Self.machine(at: .handlerRetryDecision)
        guard case .done = retried.nextHandler(inline: false) else { return XCTFail("the loop stops meanwhile") }
        XCTAssertTrue(retried.isComplete)
        guard case .retry(after: nil) = retried.didDecideHandlerRetry(.retry) else { return XCTFail() }
        XCTAssertEqual(retried.retryCount, 1)
        XCTAssertEqual(retried.handlers.count, 1, "the failed handler waits for the next response")

        var delayed = Self.machine(at: .handlerRetryDecision)
        guard case .retry(after: 2) = delayed.didDecideHandlerRetry(.retryWithDelay(2)) else { return XCTFail() }
        XCTAssertEqual(delayed.phaseKind, .waitingRetryDelay)

        var declined = Self.machine(at: .handlerRetryDecision)
        _ = declined.appendHandler(Self.handler)
        guard case .done = declined.nextHandler(inline: false) else { return XCTFail("the loop stops meanwhile") }
        guard case .runHandlers(inline: false) = declined.didDecideHandlerRetry(.doNotRetry) else { return XCTFail() }
        XCTAssertEqual(declined.handlers.count, 1, "the failed handler delivers; the next one runs")
        var last = Self.machine(at: .handlerRetryDecision)
        guard case Machine.Action.none = last.didDecideHandlerRetry(.doNotRetryWithError(URLError(.badURL))) else {
            return XCTFail()
        }
        XCTAssertEqual(last.state, .finished)
    }

    func testARetrierThatDecidesBeforeTheFailedHandlersLoopStepsLeavesOneLoopAndNoHandlerOfTheOldResponse() {
        // The retrier answers on its own queue; the loop that ran the failed handler may step after it.
        var retried = Self.machine(at: .handlerRetryDecision)
        guard case .retry = retried.didDecideHandlerRetry(.retry) else { return XCTFail("retry") }
        guard case .done = retried.nextHandler(inline: false) else {
            return XCTFail("the old loop ran a handler while the request was being sent again")
        }
        XCTAssertEqual(retried.handlers.count, 1, "the failed handler waits for the retried response")

        var declined = Self.machine(at: .handlerRetryDecision)
        _ = declined.appendHandler(Self.handler)
        guard case Machine.Action.none = declined.didDecideHandlerRetry(.doNotRetry) else {
            return XCTFail("a second loop would run beside the one that has not stepped")
        }
        guard case .run = declined.nextHandler(inline: false) else { return XCTFail("the loop goes on") }
        guard case .done = declined.nextHandler(inline: false) else { return XCTFail("and ends") }
        XCTAssertEqual(declined.state, .finished)
    }

    func testAHandlersFailureIsNotShownToARetrierThatIsNotThere() {
        var machine = Self.machine(at: .runningHandlers)
        guard case .run = machine.nextHandler(inline: false) else { return XCTFail() }
        XCTAssertFalse(machine.handlerFailed(rerun: Self.handler))
    }

    func testEveryRetryResult() {
        var now = Self.machine(at: .retryDecision)
        guard case .retry(after: nil) = now.didDecideRetry(.retry) else { return XCTFail() }
        XCTAssertEqual(now.retryCount, 1)
        guard case .creatingURLRequest = now.phase else { return XCTFail() }

        var later = Self.machine(at: .retryDecision)
        guard case let .retry(delay) = later.didDecideRetry(.retryWithDelay(2)) else { return XCTFail() }
        XCTAssertEqual(delay, 2)
        Self.XCTAssertTaken(later.retryDelayDidElapse())
        XCTAssertEqual(later.disposition(of: .retryDelayElapsed), .impossible, "a timer fires once")

        var no = Self.machine(at: .retryDecision)
        guard case let .finish(outcome, _) = no.didDecideRetry(.doNotRetry) else { return XCTFail() }
        XCTAssertEqual(outcome.error?.isExplicitlyCancelledError, true, "the original error")

        struct Refused: Error {}
        var refused = Self.machine(at: .retryDecision)
        guard case let .finish(wrapped, _) = refused.didDecideRetry(.doNotRetryWithError(Refused())),
            case let .requestRetryFailed(retryError, originalError)? = wrapped.error
        else { return XCTFail() }
        XCTAssertTrue(retryError is Refused)
        XCTAssertEqual((originalError as? AFError)?.isExplicitlyCancelledError, true)
    }

    func testARetryForgetsTheRedirectsOfTheLastAttempt() {
        var machine = Self.machine(retries: true)
        _ = machine.resume()
        _ = machine.didCreateURLRequest(Self.url)
        _ = machine.hopDidComplete(.mayFollow(Self.follow), body: nil)
        _ = machine.didDecideNextHop(.newHop(Self.url))
        XCTAssertEqual(machine.redirectCount, 1)
        _ = machine.hopDidComplete(.failure(.explicitlyCancelled), body: nil)
        _ = machine.didDecideRetry(.retry)
        XCTAssertEqual(machine.redirectCount, 0)
    }

    func testACreationFailureGoesToTheRetrierWhenThereIsOne() {
        var machine = Self.machine(retries: true)
        _ = machine.resume()
        guard case .askRetrier = machine.didFailBeforeExecuting(with: .explicitlyCancelled) else { return XCTFail() }
        var alone = Self.machine(at: .creating)
        guard case .finish = alone.didFailBeforeExecuting(with: .explicitlyCancelled) else { return XCTFail() }
    }

    // MARK: - Handlers

    func testNoHandlerStillFinishes() {
        var machine = Self.machine(at: .finishing)
        machine.beginHandlers()
        guard case .done = machine.nextHandler(inline: false) else { return XCTFail() }
        XCTAssertEqual(machine.state, .finished)
    }

    func testHandlersRunInOrderAndTheLastSeesTheRequestFinished() {
        var machine = Self.machine(at: .executing)
        let order = Recorder<Int>()
        for index in 1...3 {
            _ = machine.appendHandler(.init(inlineSafe: true, run: { order.append(index) }))
        }
        _ = machine.hopDidComplete(.success, body: nil)
        machine.beginFinishing()
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
        var machine = Self.machine(at: .finishing)
        _ = machine.appendHandler(Self.handler)
        machine.beginHandlers()
        guard case .run = machine.nextHandler(inline: true) else { return XCTFail() }
        XCTAssertEqual(machine.state, .finished)
        // Added while the loop still runs the last handler: queued, not a second loop.
        guard case (.none, false) = machine.appendHandler(Self.handler) else { return XCTFail() }
        XCTAssertEqual(machine.state, .resumed)
        guard case .run = machine.nextHandler(inline: true) else { return XCTFail() }
        guard case .done = machine.nextHandler(inline: true) else { return XCTFail() }
        XCTAssertEqual(machine.state, .finished)
    }

    func testAHandlerAddedAfterFinishingStartsANewLoop() {
        var machine = Self.machine(at: .finished)
        guard case .done = machine.nextHandler(inline: true) else { return XCTFail() }
        guard case (.runHandlers(inline: true), false) = machine.appendHandler(Self.handler) else { return XCTFail() }
        guard case .run = machine.nextHandler(inline: true) else { return XCTFail() }
        guard case .done = machine.nextHandler(inline: true) else { return XCTFail() }
        XCTAssertEqual(machine.state, .finished)
    }

    func testAHandlerThatMustNotRunInlineHopsTheLoop() {
        var machine = Self.machine(at: .finishing)
        _ = machine.appendHandler(.init(inlineSafe: false, run: {}))
        XCTAssertFalse(machine.handlersAreInlineSafe)
        machine.beginHandlers()
        guard case .hop = machine.nextHandler(inline: true) else { return XCTFail() }
        guard case .run = machine.nextHandler(inline: false) else { return XCTFail() }
    }

    func testTheFirstHandlerResumesAnInitializedRequestOnlyWhenTheSessionStartsImmediately() {
        var eager = Self.machine(startsImmediately: true)
        guard case (.none, true) = eager.appendHandler(Self.handler) else { return XCTFail() }
        var lazy = Self.machine(startsImmediately: false)
        guard case (.none, false) = lazy.appendHandler(Self.handler) else { return XCTFail() }
    }

    func testCancelledStaysCancelledAfterItsHandlersRun() {
        var machine = Self.machine(at: .executing)
        _ = machine.appendHandler(Self.handler)
        _ = machine.cancel()
        _ = machine.hopDidComplete(.success, body: nil)
        machine.beginFinishing()
        machine.beginHandlers()
        while case .run = machine.nextHandler(inline: true) {}
        XCTAssertEqual(machine.state, .cancelled)
    }
}

/// Issue 46, item 2: the request's error had 11 writers outside the machine, beside the machine's own outcome. The
/// machine is now its only writer: each event that fails the request sets it, a retry clears it, the outcome carries it.
extension RequestStateMachineTests {
    func testTheMachineOwnsTheRequestsErrorThroughFailureRetryAndCompletion() {
        var machine = Self.machine(retries: true)
        _ = machine.resume()
        _ = machine.didCreateURLRequest(Self.url)
        _ = machine.didCreateTask(NoTask(), serial: machine.hopSerial)
        XCTAssertNil(machine.error)
        guard case .askRetrier(.explicitlyCancelled) = machine.hopDidComplete(.failure(.explicitlyCancelled), body: nil)
        else { return XCTFail("the retrier decides") }
        XCTAssertEqual(machine.error?.isExplicitlyCancelledError, true, "the failure is the error while it is weighed")
        guard case .retry = machine.didDecideRetry(.retry) else { return XCTFail("retried") }
        XCTAssertNil(machine.error, "a retry forgets the last attempt's failure")
        // A validator's failure (recorded beside the events) is the first one kept, and the outcome carries it.
        _ = machine.didCreateURLRequest(Self.url)
        _ = machine.didCreateTask(NoTask(), serial: machine.hopSerial)
        _ = machine.hopDidComplete(.success, body: nil)
        machine.recordFailure(.responseValidationFailed(reason: .unacceptableStatusCode(code: 500)))
        machine.recordFailure(.explicitlyCancelled)
        guard case let .askRetrier(weighed) = machine.didValidate(error: machine.error) else {
            return XCTFail("the retrier weighs the validation failure")
        }
        XCTAssertEqual(weighed.responseCode, 500)
        guard case let .finish(outcome, _) = machine.didDecideRetry(.doNotRetry) else { return XCTFail("finished") }
        XCTAssertEqual(outcome.error?.responseCode, 500)
        XCTAssertEqual(machine.error?.responseCode, 500)
    }

    func testCancelAndAbandonSetTheErrorOnlyWhenTheyAreTaken() {
        var cancelled = Self.machine(at: .executing)
        cancelled.setCancellationError(.sessionDeinitialized)
        Self.XCTAssertTaken(cancelled.cancel())
        XCTAssertEqual(cancelled.error?.isSessionDeinitializedError, true)
        var abandoned = Self.machine(at: .ready)
        Self.XCTAssertTaken(abandoned.abandon(with: .sessionDeinitialized))
        XCTAssertEqual(abandoned.error?.isSessionDeinitializedError, true)
        var running = Self.machine(at: .executing)
        Self.XCTAssertNotTaken(running.abandon(with: .sessionDeinitialized), "a hop on the wire ends with the engine")
        XCTAssertNil(running.error)
        var completed = Self.machine(at: .completed)
        Self.XCTAssertNotTaken(completed.cancel())
        XCTAssertNil(completed.error, "a request that completed keeps its result")
    }
}
