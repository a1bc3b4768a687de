import Foundation

/// Trusts a server whose chain verifies to a trusted root and, by default, whose certificate names the host.
public final class DefaultTrustEvaluator: ServerTrustEvaluating {
    private let validateHost: Bool

    /// Creates an evaluator.
    ///
    /// - Parameter validateHost: Whether the certificate must name the host. `true` by default.
    public init(validateHost: Bool = true) {
        self.validateHost = validateHost
    }

    /// Checks that the chain was verified (by the handshake, in a connection), then the host.
    ///
    /// - Parameters:
    ///   - trust: What the connection showed.
    ///   - host:  The host.
    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {
        try trust.requireTrustedChain(forHost: host)
        if validateHost { try trust.validateHost(host) }
    }
}

extension ServerTrust {
    /// Throws `.hostValidationFailed` unless the leaf certificate names `host`.
    func validateHost(_ host: String) throws {
        guard leafNames(host) else {
            throw AFError.serverTrustEvaluationFailed(
                reason: .hostValidationFailed(output: .init(host: host, trust: self, error: nil)))
        }
    }
}
