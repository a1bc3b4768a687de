import Dispatch
import NIOConcurrencyHelpers

/// The request targets a test server received, in arrival order, and a barrier on them: a test that must act while a
/// request is on the wire (cancel it, suspend it, drop the session) waits for the server to have it, not for a fixed
/// time.
public final class RequestArrivals: Sendable {
    private struct Waiter {
        let path: String
        let count: Int
        let id: Int
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        /// The latest targets, at most `RequestArrivals.keptTargets`.
        var targets: [String] = []
        /// How many requests arrived for each path, however many targets were let go.
        var counts: [String: Int] = [:]
        var waiters: [Waiter] = []
        var nextID = 0

        func arrivals(of path: String) -> Int { counts[path] ?? 0 }
    }

    /// How many targets `targets` keeps: the latest ones; the counts behind `wait` stay exact.
    static let keptTargets = 10_000

    private let state = NIOLockedValueBox(State())

    init() {}

    /// The request targets (path and query) received, in arrival order: the latest `keptTargets` of them.
    public var targets: [String] { state.withLockedValue { $0.targets } }

    /// Records a request's arrival and releases the waiters it satisfies.
    func record(target: String) {
        let released = state.withLockedValue { state -> [Waiter] in
            state.targets.append(target)
            if state.targets.count > Self.keptTargets { state.targets.removeFirst(state.targets.count / 2) }
            state.counts[Self.path(of: target), default: 0] += 1
            let (done, waiting) = state.waiters.reduce(into: ([Waiter](), [Waiter]())) { split, waiter in
                if state.arrivals(of: waiter.path) >= waiter.count {
                    split.0.append(waiter)
                } else {
                    split.1.append(waiter)
                }
            }
            state.waiters = waiting
            return done
        }
        for waiter in released { waiter.continuation.resume(returning: true) }
    }

    /// Returns once `count` requests for `path` (a target's path, without its query) have arrived, counting those that
    /// arrived before the call.
    ///
    /// - Parameters:
    ///   - path:    The path, such as `/delay/5`.
    ///   - count:   How many arrivals to wait for. 1 by default.
    ///   - timeout: How long to wait, in seconds. 10 by default.
    /// - Returns: `true` once they arrived; `false` when `timeout` passed first.
    @discardableResult
    public func wait(forPath path: String, count: Int = 1, timeout: Double = 10) async -> Bool {
        await withCheckedContinuation { continuation in
            let id = state.withLockedValue { state -> Int? in
                guard state.arrivals(of: path) < count else { return nil }
                state.nextID += 1
                state.waiters.append(Waiter(path: path, count: count, id: state.nextID, continuation: continuation))
                return state.nextID
            }
            guard let id else { return continuation.resume(returning: true) }
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [self] in
                let expired = state.withLockedValue { state -> Waiter? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiters.remove(at: index)
                }
                expired?.continuation.resume(returning: false)
            }
        }
    }

    /// The path of a request target: everything before `?`.
    static func path(of target: String) -> String {
        String(target.prefix { $0 != "?" })
    }
}
