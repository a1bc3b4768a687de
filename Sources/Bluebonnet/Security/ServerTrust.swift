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
