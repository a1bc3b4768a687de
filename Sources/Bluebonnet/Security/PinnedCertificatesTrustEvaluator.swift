import Foundation
import X509

/// Trusts a server whose chain holds one of the pinned certificates.
///
/// The connection exposes the server's leaf certificate only, so a pinned certificate counts as in the chain when it
/// is the leaf, when it issued the leaf (its key signed it), or, with `acceptSelfSignedCertificates` and
/// `performDefaultValidation`, when the handshake verified the chain against the pinned certificates as the only
/// roots. A pinned root above an intermediate is therefore honoured only with `acceptSelfSignedCertificates`; without
/// it such a pin fails (closed), never passes.
public final class PinnedCertificatesTrustEvaluator: ServerTrustEvaluating, TrustRootsProviding {
    private let certificates: [Certificate]
    private let acceptSelfSignedCertificates: Bool
    private let performDefaultValidation: Bool
    private let validateHost: Bool

    /// Creates an evaluator.
    ///
    /// - Parameters:
    ///   - certificates:                 The pinned certificates. Those in `Bundle.main` by default.
    ///   - acceptSelfSignedCertificates: Whether the pinned certificates are also trust roots for the chain check, so
    ///                                   a self-signed (or privately issued) certificate passes it. `false` by default.
    ///   - performDefaultValidation:     Whether the chain must verify to a trusted root. `true` by default.
    ///   - validateHost:                 Whether the certificate must name the host. `true` by default.
    public init(
        certificates: [Certificate] = Bundle.main.af.certificates,
        acceptSelfSignedCertificates: Bool = false,
        performDefaultValidation: Bool = true,
        validateHost: Bool = true
    ) {
        self.certificates = certificates
        self.acceptSelfSignedCertificates = acceptSelfSignedCertificates
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
    }

    /// Whether the chain is verified first: when `performDefaultValidation` is set.
    public var requiresTrustedChain: Bool { performDefaultValidation }

    var trustRoots: TrustRoots { acceptSelfSignedCertificates ? .replacing(certificates) : .system }

    /// Checks the host, then that a server certificate is pinned.
    ///
    /// - Parameters:
    ///   - trust: What the connection showed.
    ///   - host:  The host.
    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {
        guard !certificates.isEmpty else { throw AFError.serverTrustEvaluationFailed(reason: .noCertificatesFound) }
        if validateHost { try trust.validateHost(host) }
        let anchoredAtPin = acceptSelfSignedCertificates && performDefaultValidation && trust.isChainTrusted
        guard
            anchoredAtPin || trust.certificates.contains(where: certificates.contains)
                || certificates.contains(where: { trust.leafIsIssued(by: $0.publicKey, named: $0.subject) })
        else {
            throw AFError.serverTrustEvaluationFailed(
                reason: .certificatePinningFailed(
                    host: host, trust: trust, pinnedCertificates: certificates, serverCertificates: trust.certificates))
        }
    }
}
