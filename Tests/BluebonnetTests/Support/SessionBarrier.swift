@testable import Bluebonnet
import Dispatch
import Foundation

extension Session {
    /// A barrier instead of a sleep: drains the session's queues, its monitors' queues and the offload queue, a few
    /// passes over, so work each one hands to the next (the underlying queue to the serialization queue to a
    /// monitor's queue) has run when it returns, notifications held for batching included. Work that waits on the
    /// network or on a timer is not drained: wait on that itself.
    ///
    /// - Parameter passes: How many hand-overs to follow.
    func drain(passes: Int = 4) {
        for _ in 0..<passes {
            rootQueue.sync {}
            requestQueue.sync {}
            serializationQueue.sync {}
            for monitor in eventMonitor?.monitors ?? []
            where !(monitor.queue === DispatchQueue.main && Thread.isMainThread) {
                monitor.queue.sync(flags: .barrier) {}
            }
            Offload.queue.sync(flags: .barrier) {}
            // `AF`'s notifications wait a moment for others to share their hop: deliver them now.
            eventMonitor?.flushBatchedEvents()
        }
    }
}
