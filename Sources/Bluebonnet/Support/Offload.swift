import Dispatch
import Foundation

/// The one place blocking work goes (file I/O, cache lookups and stores, certificate parsing and trust evaluation, an
/// upload's reads): never an event loop, and one queue, so a test can drain it and a trace can find it.
enum Offload {
    /// How many pieces of work run at once: a slow disk or a user's trust evaluator that blocks holds up one of them,
    /// not the others, and a burst of such handshakes holds this many threads, not one each. Bluebonnet's own
    /// evaluators hold none: they run as tasks and await their chain verifications and OCSP answers.
    static let width = max(4, 2 * ProcessInfo.processInfo.activeProcessorCount)

    /// Where the work runs: concurrent, with at most `width` of Offload's blocks on it at once.
    static let queue = DispatchQueue(label: "org.bluebonnet.offload", qos: .userInitiated, attributes: .concurrent)

    /// The work waiting for a worker, first in first out, and how many workers are on `queue`.
    struct Backlog {
        /// Taken from the end of `outgoing`; `incoming` is reversed into it when it runs dry (amortised O(1)).
        var incoming: [@Sendable () -> Void] = []
        var outgoing: [@Sendable () -> Void] = []
        var workers = 0

        var count: Int { incoming.count + outgoing.count }

        mutating func next() -> (@Sendable () -> Void)? {
            if outgoing.isEmpty {
                outgoing = incoming.reversed()
                incoming.removeAll(keepingCapacity: true)
            }
            return outgoing.popLast()
        }
    }

    static let backlog = Protected(Backlog())

    /// Runs `work` off the caller's thread, as soon as fewer than `width` pieces of work run.
    static func run(_ work: @escaping @Sendable () -> Void) {
        let startsWorker = backlog.write { backlog -> Bool in
            backlog.incoming.append(work)
            guard backlog.workers < width else { return false }
            backlog.workers += 1
            return true
        }
        if startsWorker { queue.async { drain() } }
    }

    /// A worker: runs what waits until nothing does.
    private static func drain() {
        while let work = backlog.write({ backlog -> (@Sendable () -> Void)? in
            guard let work = backlog.next() else {
                backlog.workers -= 1
                return nil
            }
            return work
        }) {
            work()
        }
    }

    /// The result of `work`, run as a task, waited for on the calling thread: for synchronous APIs (a trust
    /// evaluator's `evaluate`, say) that reach swift-certificates' asynchronous verifier. Call it on this queue only,
    /// never on an event loop or from a task, whose thread the wait would hold.
    static func wait<Result: Sendable>(for work: @escaping @Sendable () async -> Result) -> Result {
        let box = Protected<Result?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            box.write(await work())
            done.signal()
        }
        done.wait()
        // The task stored its result before it signalled, so the box is never empty here.
        return box.write { $0! }
    }
}
