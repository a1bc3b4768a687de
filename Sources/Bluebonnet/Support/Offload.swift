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
}
