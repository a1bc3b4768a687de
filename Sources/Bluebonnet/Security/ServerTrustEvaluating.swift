import Foundation
import X509

/// Decides whether a server's TLS identity is trusted for a host. Evaluation runs on the connection that will carry
/// the request, after its handshake and before its first request, off the event loop; a thrown error fails the
/// connection and every request waiting for it.
public protocol ServerTrustEvaluating: Sendable {
    /// Evaluates `trust` for `host`; throws to refuse it.
    ///
    /// - Parameters:
    ///   - trust: What the connection showed of the server.
    ///   - host:  The host the request is for.
    func evaluate(_ trust: ServerTrust, forHost host: String) throws

    /// Whether the TLS handshake must verify the server's chain up to a trusted root before `evaluate` runs (the
    /// default); a chain that does not verify then fails as `.defaultEvaluationFailed`. Return `false` to judge
    /// certificates the system would refuse (self-signed ones, say) in `evaluate` alone.
    var requiresTrustedChain: Bool { get }
}

extension ServerTrustEvaluating {
    /// `true`: the chain is verified before `evaluate` runs.
    public var requiresTrustedChain: Bool { true }
}

/// Bluebonnet's own evaluators, whose checks wait without holding a thread: a chain verification and an OCSP query
/// are awaited. The engine runs such an evaluator as a task, so a burst of handshakes, or a responder that is slow to
/// answer, holds no thread; a user's evaluator, whose `evaluate` may block, runs on `Offload`'s bounded queue.
protocol NonBlockingTrustEvaluating: ServerTrustEvaluating {
    /// Whether the evaluator, and every evaluator it asks, never blocks: not a composite with a user's evaluator.
    var evaluatesWithoutBlocking: Bool { get }

    /// `evaluate(_:forHost:)`, awaiting what it waits for.
    ///
    /// - Parameters:
    ///   - trust: What the connection showed of the server.
    ///   - host:  The host the request is for.
    func evaluateWithoutBlocking(_ trust: ServerTrust, forHost host: String) async throws
}

extension NonBlockingTrustEvaluating {
    var evaluatesWithoutBlocking: Bool { true }

    /// For an evaluator whose `evaluate` only computes: it is itself.
    func evaluateWithoutBlocking(_ trust: ServerTrust, forHost host: String) async throws {
        try evaluate(trust, forHost: host)
    }
}

extension DefaultTrustEvaluator: NonBlockingTrustEvaluating {}
extension DisabledTrustEvaluator: NonBlockingTrustEvaluating {}
extension PublicKeysTrustEvaluator: NonBlockingTrustEvaluating {}

/// An evaluator that chooses its host's trust roots, on top of the session's.
protocol TrustRootsProviding {
    var trustRoots: TrustRoots { get }
}
