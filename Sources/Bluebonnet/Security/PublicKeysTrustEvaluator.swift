import Foundation
import X509

/// Trusts a server whose chain holds one of the pinned public keys (SPKI pinning), which survives the certificate
/// being reissued for the same key.
///
/// The connection exposes the server's leaf certificate only, so a pinned key counts as in the chain when it is the
/// leaf's or when it signed the leaf; a key further up fails (closed), never passes.
public final class PublicKeysTrustEvaluator: ServerTrustEvaluating {
    private let keys: [Certificate.PublicKey]
    private let performDefaultValidation: Bool
    private let validateHost: Bool

    /// Creates an evaluator.
    ///
    /// - Parameters:
    ///   - keys:                     The pinned keys. Those of the certificates in `Bundle.main` by default.
    ///   - performDefaultValidation: Whether the chain must verify to a trusted root. `true` by default.
    ///   - validateHost:             Whether the certificate must name the host. `true` by default.
    public init(
        keys: [Certificate.PublicKey] = Bundle.main.af.publicKeys,
        performDefaultValidation: Bool = true,
        validateHost: Bool = true
    ) {
        self.keys = keys
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
    }

    /// Whether the chain is verified first: when `performDefaultValidation` is set.
    public var requiresTrustedChain: Bool { performDefaultValidation }

    /// Checks the host, then that a server key is pinned.
    ///
    /// - Parameters:
    ///   - trust: What the connection showed.
    ///   - host:  The host.
    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {
        guard !keys.isEmpty else { throw AFError.serverTrustEvaluationFailed(reason: .noPublicKeysFound) }
        if performDefaultValidation { try trust.requireTrustedChain(forHost: host) }
        if validateHost { try trust.validateHost(host) }
        guard
            trust.publicKeys.contains(where: keys.contains)
                || keys.contains(where: { trust.leafIsIssued(by: $0, named: nil) })
        else {
            throw AFError.serverTrustEvaluationFailed(
                reason: .publicKeyPinningFailed(
                    host: host, trust: trust, pinnedKeys: keys, serverKeys: trust.publicKeys))
        }
    }
}
