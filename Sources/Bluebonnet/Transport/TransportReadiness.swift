import NIOCore

/// The engine's wait for a consumer to take more of a streamed body: `ready()` lets it read on, `fail(_:)` ends the
/// attempt with an error. The first call wins; later ones are ignored, so a consumer may call from any path.
final class TransportReadiness: Sendable {
    private enum Target: Sendable {
        case promise(EventLoopPromise<Void>)
        /// For a producer with no event loop (a response replayed from the cache).
        case callback(@Sendable (AFError?) -> Void)
    }

    private let target: Target
    private let settled = Protected(false)

    init(promise: EventLoopPromise<Void>) {
        target = .promise(promise)
    }

    /// A readiness that calls `settle` once, with `nil` for `ready()` or the error of `fail(_:)`.
    init(settle: @escaping @Sendable (AFError?) -> Void) {
        target = .callback(settle)
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
        switch target {
        case let .promise(promise):
            if let error { promise.fail(error) } else { promise.succeed(()) }
        case let .callback(settle):
            settle(error)
        }
    }

    private func settle() -> Bool {
        settled.write { settled in
            defer { settled = true }
            return !settled
        }
    }
}
