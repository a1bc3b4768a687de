import Foundation

/// Where a readiness delivers its answer: the engine's wait (an event loop promise, kept in the engine's folder) or a
/// callback.
protocol ReadinessTarget: Sendable {
    /// `nil` reads on; an error ends the attempt.
    func settle(_ error: AFError?)
}

/// The engine's wait for a consumer to take more of a streamed body: `ready()` lets it read on, `fail(_:)` ends the
/// attempt with an error. The first call wins; later ones are ignored, so a consumer may call from any path.
@_spi(Transport) public final class TransportReadiness: Sendable {
    private struct Callback: ReadinessTarget {
        let body: @Sendable (AFError?) -> Void
        func settle(_ error: AFError?) { body(error) }
    }

    private let target: any ReadinessTarget
    private let settled = Protected(false)

    /// A readiness that settles `target` once.
    init(_ target: some ReadinessTarget) {
        self.target = target
    }

    /// A readiness that calls `settle` once, with `nil` for `ready()` or the error of `fail(_:)`.
    init(settle: @escaping @Sendable (AFError?) -> Void) {
        target = Callback(body: settle)
    }

    // A consumer that went away without answering must not leave the engine waiting (or leak the promise).
    deinit {
        if settle() { deliver(AFError.explicitlyCancelled) }
    }

    /// The consumer has room for more.
    func ready() {
        guard settle() else { return }
        deliver(nil)
    }

    /// The consumer cannot go on (a write failed, the consumer went away); the attempt fails with `error`.
    func fail(_ error: AFError) {
        guard settle() else { return }
        deliver(error)
    }

    private func deliver(_ error: AFError?) {
        target.settle(error)
    }

    private func settle() -> Bool {
        settled.write { settled in
            defer { settled = true }
            return !settled
        }
    }
}
