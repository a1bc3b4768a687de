import NIOCore

/// The idle timeout (`timeoutIntervalForRequest`) and the resource deadline (`timeoutIntervalForResource`) of every
/// request of one engine, kept by one NIO timer.
///
/// Each request used to arm a timer of its own when it started and cancel it when it ended (and AsyncHTTPClient a
/// second one for the deadline): trips through an event loop's task queue, the first from the caller's thread, which
/// woke the loop for nothing. Here a request only joins a table under a lock, and the one timer is armed for the
/// earliest moment any watched request could time out. When it fires it asks each request: one idle that long, or
/// past its deadline, is cancelled (its attempt fails as timed out), one that finished leaves, and the timer is armed
/// again for the earliest of the others. A timeout is thus met at its moment, as with a timer per request; the timer
/// is re-armed from the calling thread only when a request's deadline comes before the one armed (a tighter
/// `timeoutInterval`).
final class IdleWatch: Sendable {
    private struct State {
        var watched: [ObjectIdentifier: AHCResponseDelegate] = [:]
        var armed: (deadline: NIODeadline, timer: Scheduled<Void>)?
        var stopped = false
    }

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
            return state.armed?.timer
        }
        timer?.cancel()
    }

    /// How many requests are watched, for tests.
    var watchedCount: Int {
        state.read { $0.watched.count }
    }

    private func arm(at deadline: NIODeadline) {
        let timer = eventLoop.scheduleTask(deadline: deadline) { [self] in sweep() }
        let cancelled = state.write { state -> Scheduled<Void>? in
            // Another thread armed an earlier timer meanwhile (or the watch stopped): this one is not needed.
            if state.stopped { return timer }
            if let armed = state.armed, armed.deadline <= deadline { return timer }
            defer { state.armed = (deadline, timer) }
            return state.armed?.timer
        }
        cancelled?.cancel()
    }

    /// The timer fired: each request is asked whether it timed out, and the timer is armed for the next deadline.
    private func sweep() {
        let delegates = state.write { state -> [AHCResponseDelegate] in
            state.armed = nil
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
        if let next { arm(at: next) }
    }
}
