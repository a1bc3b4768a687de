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

    private enum State {
        /// Not answered yet; an answer goes to the target, or is kept until one is attached.
        case waiting((any ReadinessTarget)?)
        /// Answered: `nil` for ready.
        case settled(AFError?)
        /// Answered, and the answer was handed over.
        case delivered
    }

    private let state: Protected<State>

    /// A readiness that settles `target` once.
    init(_ target: some ReadinessTarget) {
        state = Protected(.waiting(target))
    }

    /// A readiness that calls `settle` once, with `nil` for `ready()` or the error of `fail(_:)`.
    init(settle: @escaping @Sendable (AFError?) -> Void) {
        state = Protected(.waiting(Callback(body: settle)))
    }

    /// A readiness whose target comes later (`attach(_:)`): a consumer that answers at once, as most do, is answered
    /// without the engine making a wait it would settle at once.
    init() {
        state = Protected(.waiting(nil))
    }

    // A consumer that went away without answering must not leave the engine waiting (or leak the promise).
    deinit {
        settle(AFError.explicitlyCancelled)
    }

    /// The answer already given, if any (`.some(nil)` for ready); otherwise the target `makeTarget` makes (only then)
    /// receives it when it comes.
    func attach<Target: ReadinessTarget>(_ makeTarget: () -> Target) -> AFError?? {
        state.write { state -> AFError?? in
            switch state {
            case .waiting:
                state = .waiting(makeTarget())
                return .none
            case let .settled(error):
                state = .delivered
                return .some(error)
            case .delivered:
                return .some(AFError.explicitlyCancelled)
            }
        }
    }

    /// The consumer has room for more.
    func ready() {
        settle(nil)
    }

    /// The consumer cannot go on (a write failed, the consumer went away); the attempt fails with `error`.
    func fail(_ error: AFError) {
        settle(error)
    }

    /// The first answer wins: delivered to the target, or kept for the one to be attached.
    private func settle(_ error: AFError?) {
        let target = state.write { state -> (any ReadinessTarget)? in
            guard case let .waiting(target) = state else { return nil }
            guard let target else {
                state = .settled(error)
                return nil
            }
            state = .delivered
            return target
        }
        target?.settle(error)
    }
}
