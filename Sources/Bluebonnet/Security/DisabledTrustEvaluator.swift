import Foundation

/// Trusts any server, verifying nothing: for a development server only, never in production.
public final class DisabledTrustEvaluator: ServerTrustEvaluating {
    /// Creates an evaluator.
    public init() {}

    /// No chain verification.
    public var requiresTrustedChain: Bool { false }

    /// Accepts.
    ///
    /// - Parameters:
    ///   - trust: Ignored.
    ///   - host:  Ignored.
    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {}
}
