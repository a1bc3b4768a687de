import NIOCore

/// The engine's wait for a consumer to take more of a streamed body: `ready()` lets it read on, `fail(_:)` ends the
/// attempt with an error. The first call wins; later ones are ignored, so a consumer may call from any path.
final class TransportReadiness: Sendable {
    private let promise: EventLoopPromise<Void>
    private let settled = Protected(false)

    init(promise: EventLoopPromise<Void>) {
        self.promise = promise
    }

    // A consumer that went away without answering must not leave the engine waiting (or leak the promise).
    deinit {
        if settle() { promise.fail(AFError.explicitlyCancelled) }
    }

    /// The consumer has room for more.
    func ready() {
        guard settle() else { return }
        promise.succeed(())
    }

    /// The consumer cannot go on (a write failed, the consumer went away); the attempt fails with `error`.
    func fail(_ error: AFError) {
        guard settle() else { return }
        promise.fail(error)
    }

    private func settle() -> Bool {
        settled.write { settled in
            defer { settled = true }
            return !settled
        }
    }
}
