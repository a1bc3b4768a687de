import Dispatch

/// The one place blocking work goes (file I/O, cache lookups and stores, certificate parsing and trust evaluation, an
/// upload's reads): never an event loop, and one queue, so a test can drain it and a trace can find it.
enum Offload {
    /// Concurrent: a slow disk holds up one piece of work, not the others.
    static let queue = DispatchQueue(label: "org.bluebonnet.offload", qos: .userInitiated, attributes: .concurrent)

    /// Runs `work` off the caller's thread.
    static func run(_ work: @escaping @Sendable () -> Void) {
        queue.async(execute: work)
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
