import Foundation
import X509

/// Trusts a server whose chain holds one of the pinned certificates.
///
/// With `acceptSelfSignedCertificates` (and `performDefaultValidation`), the pinned certificates are the chain's only
/// trust anchors, as Alamofire makes them: a pinned leaf, a pinned private CA that issued the leaf, or a pinned root
/// above the server's intermediates is enough, and the chain is still checked (validity dates, CA constraints,
/// signatures) by swift-certificates' RFC 5280 policy or by the handshake. When every pin is a self-signed root the
/// handshake verifies the chain against them; when one is not (a leaf, an intermediate), the handshake leaves the
/// chain to `evaluate`, which verifies the leaf with the pins as anchors.
///
/// Without `acceptSelfSignedCertificates`, the chain verifies to the system's roots and a pinned certificate counts
/// when it is the leaf or issued the leaf (its key signed it). The connection exposes the server's leaf only, so a
/// pin further up is honoured only as an anchor; otherwise it fails (closed), never passes.
public final class PinnedCertificatesTrustEvaluator: ServerTrustEvaluating, TrustRootsProviding {
    fileprivate let certificates: [Certificate]
    private let acceptSelfSignedCertificates: Bool
    private let performDefaultValidation: Bool
    private let validateHost: Bool
    /// Whether every pin is a self-signed root, which the handshake can anchor a chain at.
    private let pinsAreRoots: Bool

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
        pinsAreRoots = certificates.allSatisfy { pin in
            pin.subject == pin.issuer && pin.publicKey.isValidSignature(pin.signature, for: pin)
        }
    }

    /// Whether the handshake verifies the chain first: when `performDefaultValidation` is set, unless the pins are
    /// anchors the handshake cannot use (a leaf or an intermediate), which `evaluate` verifies the chain at instead.
    public var requiresTrustedChain: Bool { performDefaultValidation && !(pinsAreAnchors && !pinsAreRoots) }

    var trustRoots: TrustRoots { pinsAreAnchors && pinsAreRoots ? .replacing(certificates) : .system }

    /// Whether the pins are the chain's only anchors.
    private var pinsAreAnchors: Bool { acceptSelfSignedCertificates && performDefaultValidation }

    /// Checks the chain when the pins anchor it here, then the host, then that a server certificate is pinned.
    ///
    /// - Parameters:
    ///   - trust: What the connection showed.
    ///   - host:  The host.
    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {
        let chainFailure =
            verifiesChain(of: trust)
            ? Offload.wait { [certificates] in await trust.chainFailure(anchoredAt: certificates, forHost: host) } : nil
        try judge(trust, forHost: host, chainFailure: chainFailure)
    }

    /// Whether the pins anchor the chain here, so it is verified against them (when the rest can pass).
    fileprivate func verifiesChain(of trust: ServerTrust) -> Bool {
        !certificates.isEmpty && (!requiresTrustedChain || trust.isChainTrusted) && pinsAreAnchors && !pinsAreRoots
    }

    /// The verdict, given what verifying the chain against the pins found (`nil`: it verified, or was not verified).
    fileprivate func judge(_ trust: ServerTrust, forHost host: String, chainFailure: AFError?) throws {
        guard !certificates.isEmpty else { throw AFError.serverTrustEvaluationFailed(reason: .noCertificatesFound) }
        if requiresTrustedChain { try trust.requireTrustedChain(forHost: host) }
        var anchoredAtPin = pinsAreAnchors && trust.isChainTrusted
        if pinsAreAnchors && !pinsAreRoots {
            if let chainFailure { throw chainFailure }
            anchoredAtPin = true
        }
        if validateHost { try trust.validateHost(host) }
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

extension PinnedCertificatesTrustEvaluator: NonBlockingTrustEvaluating {
    func evaluateWithoutBlocking(_ trust: ServerTrust, forHost host: String) async throws {
        let chainFailure =
            verifiesChain(of: trust) ? await trust.chainFailure(anchoredAt: certificates, forHost: host) : nil
        try judge(trust, forHost: host, chainFailure: chainFailure)
    }
}
