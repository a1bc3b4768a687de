import Crypto
import Foundation
import NIOSSL
import SwiftASN1
import X509

/// A certificate hierarchy made fresh at run time for TLS tests: root → intermediate → leaf for `127.0.0.1` and
/// `localhost`, plus the leaves a trust check must refuse (expired, for another name, self-signed, named by its common
/// name only) and a client
/// identity for mutual TLS. Nothing is committed: each run has its own keys.
public struct TestCertificates: Sendable {
    /// A certificate with the private key of its subject.
    public struct Identity: Sendable {
        /// The certificate.
        public let certificate: Certificate
        /// The subject's key.
        public let privateKey: P256.Signing.PrivateKey

        /// The certificate, DER-encoded.
        public var der: [UInt8] { TestCertificates.der(certificate) }
        /// The certificate, PEM-encoded.
        public var pem: String { ((try? certificate.serializeAsPEM().pemString) ?? "") + "\n" }
        /// The key, PEM-encoded (PKCS#8).
        public var privateKeyPEM: String { privateKey.pemRepresentation }
    }

    /// The self-signed root.
    public let root: Identity
    /// The intermediate, issued by `root`.
    public let intermediate: Identity
    /// The server's leaf, issued by `intermediate`, for `127.0.0.1`, `::1` and `localhost`.
    public let leaf: Identity
    /// A leaf issued by `intermediate` whose validity ended yesterday.
    public let expiredLeaf: Identity
    /// A leaf issued by `intermediate` for `bluebonnet.invalid` only.
    public let wrongNameLeaf: Identity
    /// A self-signed leaf for `127.0.0.1` and `localhost`.
    public let selfSignedLeaf: Identity
    /// A leaf issued by `intermediate` that names `localhost` in its common name only, with no subjectAltName: what
    /// RFC 9525 says a client must not accept.
    public let commonNameOnlyLeaf: Identity
    /// A client identity issued by `intermediate`, for mutual TLS.
    public let client: Identity

    /// Makes a new hierarchy.
    public init() throws {
        let now = Date()
        let day: TimeInterval = 86_400
        let localNames: [GeneralName] = [
            .dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
            .ipAddress(ASN1OctetString(contentBytes: ArraySlice([UInt8](repeating: 0, count: 15) + [1]))),
        ]
        root = try Self.issue(
            name: "Bluebonnet Test Root", isAuthority: true, by: nil, from: now - day, to: now + 365 * day)
        intermediate = try Self.issue(
            name: "Bluebonnet Test Intermediate", isAuthority: true, by: root,
            from: now - day, to: now + 365 * day)
        leaf = try Self.issue(
            name: "127.0.0.1", names: localNames, by: intermediate, from: now - day, to: now + 30 * day)
        expiredLeaf = try Self.issue(
            name: "expired", names: localNames, by: intermediate, from: now - 30 * day, to: now - day)
        wrongNameLeaf = try Self.issue(
            name: "bluebonnet.invalid", names: [.dnsName("bluebonnet.invalid")], by: intermediate,
            from: now - day, to: now + 30 * day)
        selfSignedLeaf = try Self.issue(
            name: "127.0.0.1", names: localNames, by: nil, from: now - day, to: now + 30 * day)
        commonNameOnlyLeaf = try Self.issue(name: "localhost", by: intermediate, from: now - day, to: now + 30 * day)
        client = try Self.issue(
            name: "Bluebonnet Test Client", names: [], usage: .clientAuth, by: intermediate,
            from: now - day, to: now + 30 * day)
    }

    /// A server TLS configuration presenting `identity` and the certificates above it.
    ///
    /// - Parameters:
    ///   - identity:            The server's leaf.
    ///   - chain:               The certificates sent after the leaf (the intermediate, usually).
    ///   - requireClientCertificate: Whether the client must present a certificate issued under `root`.
    /// - Returns: The configuration.
    public func serverConfiguration(
        presenting identity: Identity, chain: [Identity],
        requireClientCertificate: Bool = false
    ) throws -> TLSConfiguration {
        var configuration = TLSConfiguration.makeServerConfiguration(
            certificateChain: try ([identity] + chain).map {
                .certificate(try NIOSSLCertificate(bytes: $0.der, format: .der))
            },
            privateKey: .privateKey(try NIOSSLPrivateKey(bytes: Array(identity.privateKeyPEM.utf8), format: .pem))
        )
        if requireClientCertificate {
            configuration.certificateVerification = .noHostnameVerification
            configuration.trustRoots = .certificates([try NIOSSLCertificate(bytes: root.der, format: .der)])
        }
        return configuration
    }

    private static func issue(
        name: String, names: [GeneralName] = [], isAuthority: Bool = false,
        usage: ExtendedKeyUsage.Usage = .serverAuth, by issuer: Identity?,
        from start: Date, to end: Date,
        authorityInformationAccess: AuthorityInformationAccess? = nil
    ) throws -> Identity {
        let key = P256.Signing.PrivateKey()
        let subject = try DistinguishedName { CommonName(name) }
        let extensions = try Certificate.Extensions {
            if isAuthority {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            } else {
                Critical(BasicConstraints.notCertificateAuthority)
                // A self-signed leaf names no key usage, as `openssl req -x509` and mkcert-style tools make them: a
                // usage without keyCertSign would stop it vouching for itself as a trust root.
                if issuer != nil { Critical(KeyUsage(digitalSignature: true)) }
                try ExtendedKeyUsage([usage])
                if !names.isEmpty { SubjectAlternativeNames(names) }
                if let authorityInformationAccess { authorityInformationAccess }
            }
        }
        let certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: start,
            notValidAfter: end,
            issuer: issuer?.certificate.subject ?? subject,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(issuer?.privateKey ?? key)
        )
        return Identity(certificate: certificate, privateKey: key)
    }

    /// A leaf for `127.0.0.1`, `::1` and `localhost` issued by `intermediate`, whose Authority Information Access
    /// names an OCSP responder and, when given, where its issuer's certificate is (`caIssuers`): what a revocation
    /// check follows.
    ///
    /// - Parameters:
    ///   - ocspURL:    The responder.
    ///   - issuerURL:  The intermediate's certificate.
    /// - Returns: The leaf.
    public func leaf(ocspURL: String, issuerURL: String?) throws -> Identity {
        let now = Date()
        let names: [GeneralName] = [.dnsName("localhost"), .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1]))]
        var access = [
            AuthorityInformationAccess.AccessDescription(
                method: .ocspServer, location: .uniformResourceIdentifier(ocspURL))
        ]
        if let issuerURL { access.append(.init(method: .issuingCA, location: .uniformResourceIdentifier(issuerURL))) }
        return try Self.issue(
            name: "127.0.0.1", names: names, by: intermediate, from: now - 86_400, to: now + 30 * 86_400,
            authorityInformationAccess: AuthorityInformationAccess(access))
    }

    static func der(_ certificate: Certificate) -> [UInt8] {
        var serializer = DER.Serializer()
        try? serializer.serialize(certificate)
        return serializer.serializedBytes
    }
}
