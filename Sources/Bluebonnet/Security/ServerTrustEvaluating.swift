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

/// An evaluator that chooses its host's trust roots, on top of the session's.
protocol TrustRootsProviding {
    var trustRoots: TrustRoots { get }
}
