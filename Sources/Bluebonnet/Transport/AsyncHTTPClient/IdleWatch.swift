import AsyncHTTPClient
import NIOCore

/// The idle timeout (`timeoutIntervalForRequest`) and the resource deadline (`timeoutIntervalForResource`) of every
/// request of one engine, kept by one NIO timer.
///
/// Each request used to arm a timer of its own when it started and cancel it when it ended (and AsyncHTTPClient a
/// second one for the deadline): trips through an event loop's task queue, the first from the caller's thread, which
/// woke the loop for nothing. Here a request only joins a table under a lock, and the one timer is armed for the
/// earliest moment any watched request could time out. When it fires it asks each request: one idle that long, or
/// past its deadline, has timed out, one that finished leaves, and the timer is armed again for the earliest of the
/// others, but never sooner than `sweepSpacing` after this sweep: requests whose deadlines are spread thinly would
/// otherwise each cost a sweep of all of them (with thousands of long requests watched, a sweep of thousands every
/// few microseconds). A timeout is thus met at its moment when its timer is the one armed, and at most `sweepSpacing`
/// late when a sweep re-arms for it; the timer is re-armed from the calling thread only when a request's deadline
/// comes before the one armed (a tighter `timeoutInterval`).
///
/// A request that timed out is ended first and its task cancelled afterwards. AsyncHTTPClient's pool finds a request
/// it cancels by a linear search of its waiting list and moves every request behind it up by one, and finds the
/// connection timer it keeps for each waiting request by a linear search of its loop's timers. Cancelled in one pass
/// in the table's (hash) order, 10,000 requests waiting behind a few connections cost some 10,000 × 5,000 steps of
/// each, on the loops that also serve the connections, and each request ended only once its own cancel was done:
/// the last more than a minute after its deadline. (AsyncHTTPClient's own deadline timers fire in the order the
/// requests were made, so each found its request at the head.) So a sweep hands the requests that timed out to the
/// loops their delegates run on, which end each at once (`AHCResponseDelegate.endTimedOut()`: the caller hears of
/// the timeout then, whatever the cancel costs), `endingsPerTurn` at a time. Once all of them are ended, their tasks
/// are cancelled one after another in the order the requests joined, which is the order they joined the pool's
/// waiting list, so each is at its head when its cancel comes unless a request made before it still waits (those
/// already on a connection go last, so the pool does not hand the connections their cancels free to requests about
/// to be cancelled); each on its task's loop, where AsyncHTTPClient does its part before the call returns, and no
/// more than `cancelsPerTurn` before the loop does other work.
final class IdleWatch: Sendable {
    private struct State {
        var watched: [ObjectIdentifier: Watched] = [:]
        /// How many requests joined, which numbers them in the order they joined.
        var joined: UInt64 = 0
        /// The timer armed, by the arming it came from; `timer` is `nil` until `scheduleTask` has returned it.
        var armed: (deadline: NIODeadline, arming: UInt64, timer: Scheduled<Void>?)?
        var armings: UInt64 = 0
        var stopped = false
        var sweeps = 0
        /// The requests each sweep found timed out while their loops end them, by sweep.
        var ending: [Int: Ending] = [:]
        /// The tasks of ended requests, in the order they are to be cancelled.
        var cancels = CircularBuffer<Cancel>()
        /// Whether a run of cancels is under way (`cancelInOrder(on:)`).
        var cancelling = false
    }

    /// A watched request and when it joined.
    private struct Watched {
        let delegate: AHCResponseDelegate
        let order: UInt64
    }

    /// A request a sweep found timed out.
    private struct Expiry {
        let delegate: AHCResponseDelegate
        let task: HTTPClient.Task<Void>
        let order: UInt64
    }

    /// The task of an ended request, to cancel on its loop.
    private struct Cancel {
        let task: HTTPClient.Task<Void>
        let loop: any EventLoop
        let order: UInt64
    }

    /// What a sweep's timed-out requests wait for before their tasks are cancelled.
    private struct Ending {
        /// The loops still ending their share.
        var loops: Int
        /// The tasks of requests that were still waiting for a connection, and of those already on one.
        var waiting: [Cancel] = []
        var sent: [Cancel] = []
    }

    /// The least time between a sweep and the next.
    static let sweepSpacing = TimeAmount.milliseconds(50)
    /// The most timed-out requests a loop ends before it does other work.
    static let endingsPerTurn = 128
    /// The most tasks a loop cancels before it does other work.
    static let cancelsPerTurn = 8

    /// The loop the timer runs on; the requests may run on any.
    private let eventLoop: any EventLoop
    private let state = Protected(State())

    init(eventLoop: any EventLoop) {
        self.eventLoop = eventLoop
    }

    /// Watches `delegate`, which could first time out at `deadline`.
    func watch(_ delegate: AHCResponseDelegate, until deadline: NIODeadline) {
        let arm = state.write { state -> Bool in
            guard !state.stopped else { return false }
            state.joined &+= 1
            state.watched[ObjectIdentifier(delegate)] = Watched(delegate: delegate, order: state.joined)
            if let armed = state.armed, armed.deadline <= deadline { return false }
            return true
        }
        if arm { self.arm(at: deadline) }
    }

    /// Stops watching `delegate`, whose attempt ended. The timer stays armed: with nothing left to watch it does
    /// nothing when it fires, and a request that starts meanwhile needs no timer of its own.
    func unwatch(_ delegate: AHCResponseDelegate) {
        state.write { state in _ = state.watched.removeValue(forKey: ObjectIdentifier(delegate)) }
    }

    /// Lets go of every request and the timer: the engine shut down (its clients fail the tasks still running).
    func stop() {
        let timer = state.write { state -> Scheduled<Void>? in
            state.stopped = true
            state.watched = [:]
            state.ending = [:]
            state.cancels.removeAll()
            defer { state.armed = nil }
            return state.armed?.timer ?? nil
        }
        timer?.cancel()
    }

    /// How many requests are watched, for tests.
    var watchedCount: Int {
        state.read { $0.watched.count }
    }

    /// How many times the timer fired, for tests.
    var sweepCount: Int {
        state.read { $0.sweeps }
    }

    private func arm(at deadline: NIODeadline) {
        // The slot is taken before the timer is scheduled: a deadline already past fires at once on the loop, and
        // its sweep must find its own arming there to clear, not leave a fired timer recorded as armed (which would
        // keep every later request from arming one).
        let reserved = state.write { state -> (arming: UInt64, replaced: Scheduled<Void>?)? in
            guard !state.stopped else { return nil }
            if let armed = state.armed, armed.deadline <= deadline { return nil }
            state.armings += 1
            defer { state.armed = (deadline, state.armings, nil) }
            return (state.armings, state.armed?.timer)
        }
        guard let reserved else { return }
        reserved.replaced?.cancel()
        let timer = eventLoop.scheduleTask(deadline: deadline) { [self] in sweep(arming: reserved.arming) }
        let kept = state.write { state -> Bool in
            guard state.armed?.arming == reserved.arming else { return false }
            state.armed?.timer = timer
            return true
        }
        // It fired already (and cleared its slot), or an earlier one replaced it.
        if !kept { timer.cancel() }
    }

    /// The timer fired: each request is asked whether it timed out, the ones that did are handed to their loops to
    /// end, and the timer is armed for the next deadline.
    private func sweep(arming: UInt64) {
        let (watched, number) = state.write { state -> ([Watched], Int) in
            // A timer cancelled too late to stop it still sweeps (harmlessly), but frees only its own slot.
            if state.armed?.arming == arming { state.armed = nil }
            state.sweeps += 1
            return (Array(state.watched.values), state.sweeps)
        }
        let now = NIODeadline.now()
        var next: NIODeadline?
        var left: [ObjectIdentifier] = []
        var expired: [Expiry] = []
        for entry in watched {
            switch entry.delegate.idleVerdict(now: now) {
            case let .watching(until: deadline):
                next = min(next ?? deadline, deadline)
            case .ended:
                left.append(ObjectIdentifier(entry.delegate))
            case let .expired(task):
                left.append(ObjectIdentifier(entry.delegate))
                expired.append(Expiry(delegate: entry.delegate, task: task, order: entry.order))
            }
        }
        if !left.isEmpty {
            state.write { state in
                for id in left { state.watched[id] = nil }
            }
        }
        if !expired.isEmpty { handOver(expired, sweep: number) }
        if let next { arm(at: max(next, now + Self.sweepSpacing)) }
    }

    /// Hands the requests a sweep found timed out to the loops their delegates run on, which end them.
    private func handOver(_ expired: [Expiry], sweep: Int) {
        var byLoop: [ObjectIdentifier: (loop: any EventLoop, expiries: [Expiry])] = [:]
        for expiry in expired.sorted(by: { $0.order < $1.order }) {
            let loop = expiry.task.eventLoop
            byLoop[ObjectIdentifier(loop), default: (loop: loop, expiries: [])].expiries.append(expiry)
        }
        let handed = state.write { state -> Bool in
            guard !state.stopped else { return false }
            state.ending[sweep] = Ending(loops: byLoop.count)
            return true
        }
        guard handed else { return }
        for (loop, expiries) in byLoop.values {
            loop.execute { [self] in end(expiries[...], sweep: sweep, on: loop) }
        }
    }

    /// Ends `expiries` on `loop`, their delegates' loop, `endingsPerTurn` at a time; once every loop of the sweep has
    /// ended its share, their tasks are cancelled.
    private func end(_ expiries: ArraySlice<Expiry>, sweep: Int, on loop: any EventLoop) {
        let batch = expiries.prefix(Self.endingsPerTurn)
        var waiting: [Cancel] = []
        var sent: [Cancel] = []
        for expiry in batch {
            let cancel = Cancel(task: expiry.task, loop: loop, order: expiry.order)
            if expiry.delegate.endTimedOut() { sent.append(cancel) } else { waiting.append(cancel) }
        }
        let rest = expiries.dropFirst(batch.count)
        let ended = state.write { state -> Ending? in
            guard !state.stopped, state.ending[sweep] != nil else { return nil }
            state.ending[sweep]?.waiting += waiting
            state.ending[sweep]?.sent += sent
            guard rest.isEmpty else { return nil }
            state.ending[sweep]?.loops -= 1
            guard state.ending[sweep]?.loops == 0 else { return nil }
            return state.ending.removeValue(forKey: sweep)
        }
        guard rest.isEmpty else {
            loop.execute { [self] in end(rest, sweep: sweep, on: loop) }
            return
        }
        guard let ended else { return }
        // Those still waiting first, so the pool does not hand a connection that a cancel frees to a request about to
        // be cancelled.
        let cancels = ended.waiting.sorted { $0.order < $1.order } + ended.sent.sorted { $0.order < $1.order }
        let start = state.write { state -> Bool in
            guard !state.stopped else { return false }
            state.cancels.append(contentsOf: cancels)
            guard !state.cancelling else { return false }
            state.cancelling = true
            return true
        }
        if start { cancelInOrder(on: loop) }
    }

    /// Cancels the tasks of ended requests in order, each on its own loop (AsyncHTTPClient then takes it out of its
    /// pool before the call returns, so the next is at the head of the waiting list), going to the next task's loop
    /// when it is another, and at most `cancelsPerTurn` before the loop does other work.
    private func cancelInOrder(on loop: any EventLoop) {
        var cancelled = 0
        while true {
            let next = state.write { state -> (cancel: Cancel, here: Bool)? in
                if state.stopped { state.cancels.removeAll() }
                guard let cancel = state.cancels.first else {
                    state.cancelling = false
                    return nil
                }
                let here = cancelled < Self.cancelsPerTurn && cancel.loop === loop
                if here { state.cancels.removeFirst() }
                return (cancel, here)
            }
            guard let next else { return }
            guard next.here else {
                let target = next.cancel.loop
                target.execute { [self] in cancelInOrder(on: target) }
                return
            }
            next.cancel.task.cancel()
            cancelled += 1
        }
    }
}
