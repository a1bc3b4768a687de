import NIOCore

/// The idle timeout (`timeoutIntervalForRequest`) and the resource deadline (`timeoutIntervalForResource`) of every
/// request of one engine, kept by one NIO timer.
///
/// Each request used to arm a timer of its own when it started and cancel it when it ended (and AsyncHTTPClient a
/// second one for the deadline): trips through an event loop's task queue, the first from the caller's thread, which
/// woke the loop for nothing. Here a request only joins a table under a lock, and the one timer is armed for the
/// earliest moment any watched request could time out. When it fires it asks each request: one idle that long, or
/// past its deadline, is cancelled (its attempt fails as timed out), one that finished leaves, and the timer is armed
/// again for the earliest of the others, but never sooner than `sweepSpacing` after this sweep: requests whose
/// deadlines are spread thinly would otherwise each cost a sweep of all of them (with thousands of long requests
/// watched, a sweep of thousands every few microseconds). A timeout is thus met at its moment when its timer is the
/// one armed, and at most `sweepSpacing` late when a sweep re-arms for it; the timer is re-armed from the calling
/// thread only when a request's deadline comes before the one armed (a tighter `timeoutInterval`).
final class IdleWatch: Sendable {
    private struct State {
        var watched: [ObjectIdentifier: AHCResponseDelegate] = [:]
        /// The timer armed, by the arming it came from; `timer` is `nil` until `scheduleTask` has returned it.
        var armed: (deadline: NIODeadline, arming: UInt64, timer: Scheduled<Void>?)?
        var armings: UInt64 = 0
        var stopped = false
        var sweeps = 0
    }

    /// The least time between a sweep and the next.
    static let sweepSpacing = TimeAmount.milliseconds(50)

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
            state.watched[ObjectIdentifier(delegate)] = delegate
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

    /// Lets go of every request and the timer: the engine shut down.
    func stop() {
        let timer = state.write { state -> Scheduled<Void>? in
            state.stopped = true
            state.watched = [:]
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

    /// The timer fired: each request is asked whether it timed out, and the timer is armed for the next deadline.
    private func sweep(arming: UInt64) {
        let delegates = state.write { state -> [AHCResponseDelegate] in
            // A timer cancelled too late to stop it still sweeps (harmlessly), but frees only its own slot.
            if state.armed?.arming == arming { state.armed = nil }
            state.sweeps += 1
            return Array(state.watched.values)
        }
        let now = NIODeadline.now()
        var next: NIODeadline?
        var ended: [ObjectIdentifier] = []
        for delegate in delegates {
            if let deadline = delegate.idleDeadline(now: now) {
                next = min(next ?? deadline, deadline)
            } else {
                ended.append(ObjectIdentifier(delegate))
            }
        }
        if !ended.isEmpty {
            state.write { state in
                for id in ended { state.watched[id] = nil }
            }
        }
        if let next { arm(at: max(next, now + Self.sweepSpacing)) }
    }
}
