import Foundation
import X509

/// What a TLS connection showed of the server, for a `ServerTrustEvaluating` to judge: the Linux counterpart of the
/// `SecTrust` Alamofire's evaluators receive.
///
/// swift-nio-ssl exposes the server's leaf certificate only, so `certificates` holds that one certificate; pinning
/// therefore matches the leaf (pin an intermediate or a root by making it a trust root instead).
public struct ServerTrust: Sendable {
    /// The server's certificates as this connection exposes them, leaf first.
    public let certificates: [Certificate]
    /// Whether the TLS handshake verified the chain up to a trusted root (system roots, the session's roots, and any
    /// an evaluator added). `false` when the evaluator asked for no chain verification.
    public let isChainTrusted: Bool
    /// Asks the leaf's OCSP responder, for `RevocationTrustEvaluator`: set by the connection that showed the trust.
    var revocationChecker: (any RevocationChecking)?

    /// Creates a trust from what a connection showed.
    ///
    /// - Parameters:
    ///   - certificates:   The server's certificates, leaf first.
    ///   - isChainTrusted: Whether the handshake verified the chain.
    public init(certificates: [Certificate], isChainTrusted: Bool) {
        self.certificates = certificates
        self.isChainTrusted = isChainTrusted
    }

    /// The server's leaf certificate, which carries its identity.
    public var leafCertificate: Certificate? { certificates.first }

    /// The public keys of `certificates`.
    public var publicKeys: [Certificate.PublicKey] { certificates.map(\.publicKey) }

    /// Whether the leaf certificate names `host`: a DNS name (a wildcard only as a whole leftmost label, matching one
    /// label) or an IP address among its subject alternative names. The common name is not consulted.
    ///
    /// - Parameter host: The host the request connected to.
    /// - Returns: Whether it matches.
    public func leafNames(_ host: String) -> Bool {
        guard let leaf = leafCertificate, let names = try? leaf.extensions.subjectAlternativeNames else { return false }
        let trimmed = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        if let address = HostAddress(trimmed) {
            return names.contains { name in
                if case let .ipAddress(bytes) = name { return Array(bytes.bytes) == address.bytes }
                return false
            }
        }
        let wanted = Self.normalised(trimmed)
        return names.contains { name in
            if case let .dnsName(pattern) = name { return Self.dnsName(Self.normalised(pattern), matches: wanted) }
            return false
        }
    }

    /// Whether the leaf certificate was signed with `key` (and names `issuer` as its issuer, when given).
    func leafIsIssued(by key: Certificate.PublicKey, named issuer: DistinguishedName?) -> Bool {
        guard let leaf = leafCertificate else { return false }
        if let issuer, leaf.issuer != issuer { return false }
        return key.isValidSignature(leaf.signature, for: leaf)
    }

    /// Verifies the leaf with `anchors` as the only trust anchors: a leaf that is itself an anchor by its validity
    /// dates, any other by swift-certificates' RFC 5280 policy (validity at this moment, CA constraints, signatures),
    /// with the certificates this trust holds beyond the leaf offered as intermediates. `.defaultEvaluationFailed` with
    /// the policy's reasons when no anchored chain verifies, `nil` when one does. Awaited, so no thread waits for it.
    func chainFailure(anchoredAt anchors: [Certificate], forHost host: String) async -> AFError? {
        guard let leaf = leafCertificate else {
            return AFError.serverTrustEvaluationFailed(reason: .noCertificatesFound)
        }
        let reasons: [String]
        if anchors.contains(leaf) {
            // A pinned leaf is trusted as itself, as SecTrust trusts an anchor it is shown: no issuer to check, but
            // its validity dates still hold. (RFC 5280's policy refuses a trust root that is not a CA as the end
            // entity, so it is not asked.)
            let now = Date()
            guard leaf.notValidBefore > now || leaf.notValidAfter < now else { return nil }
            reasons = [
                "the pinned certificate is valid from \(leaf.notValidBefore) to \(leaf.notValidAfter), not at \(now)"
            ]
        } else {
            var verifier = Verifier(rootCertificates: CertificateStore(anchors)) { RFC5280Policy() }
            let result = await verifier.validate(
                leaf: leaf, intermediates: CertificateStore(Array(certificates.dropFirst())))
            guard case let .couldNotValidate(failures) = result else { return nil }
            reasons = failures.map { String(describing: $0.policyFailureReason) }
        }
        return AFError.serverTrustEvaluationFailed(
            reason: .defaultEvaluationFailed(
                output: .init(host: host, trust: self, error: ChainVerificationError(reasons: reasons))))
    }

    /// Throws `.defaultEvaluationFailed` unless the handshake verified the chain to a trusted root: an evaluator that
    /// requires a trusted chain refuses a trust nobody verified, whoever calls it (a wrapping evaluator that asked the
    /// handshake for no chain check, or a direct call).
    ///
    /// - Parameter host: The host, for the error.
    func requireTrustedChain(forHost host: String) throws {
        guard !isChainTrusted else { return }
        throw AFError.serverTrustEvaluationFailed(
            reason: .defaultEvaluationFailed(output: .init(host: host, trust: self, error: UnverifiedChainError())))
    }

    /// Lowercased, without a trailing dot.
    private static func normalised(_ name: String) -> String {
        let lower = name.lowercased()
        return lower.hasSuffix(".") ? String(lower.dropLast()) : lower
    }

    /// RFC 6125's matching: exact, or `*` as the whole leftmost label standing for exactly one label, never for a
    /// public-suffix-like two-label name (`*.com`).
    private static func dnsName(_ pattern: String, matches host: String) -> Bool {
        guard !pattern.isEmpty, !host.isEmpty else { return false }
        if !pattern.contains("*") { return pattern == host }
        let patternLabels = pattern.split(separator: ".", omittingEmptySubsequences: false)
        let hostLabels = host.split(separator: ".", omittingEmptySubsequences: false)
        guard patternLabels.first == "*", patternLabels.count >= 3, patternLabels.count == hostLabels.count,
            !patternLabels.dropFirst().contains(where: { $0.contains("*") || $0.isEmpty }),
            let first = hostLabels.first, !first.isEmpty
        else { return false }
        return patternLabels.dropFirst().elementsEqual(hostLabels.dropFirst())
    }
}

/// The chain was not verified to a trusted root, and the evaluator requires it.
struct UnverifiedChainError: Error, Sendable, CustomStringConvertible {
    var description: String { "the server's chain was not verified to a trusted root" }
}

/// Why a chain anchored at pinned certificates did not verify: swift-certificates' policy failures, in its words.
public struct ChainVerificationError: Error, Sendable, CustomStringConvertible {
    /// One reason per candidate chain that failed; empty when no chain to an anchor could be built.
    public let reasons: [String]

    public var description: String {
        reasons.isEmpty
            ? "no chain from the server's certificate to a pinned certificate"
            : "the chain to a pinned certificate did not verify: " + reasons.joined(separator: "; ")
    }
}
