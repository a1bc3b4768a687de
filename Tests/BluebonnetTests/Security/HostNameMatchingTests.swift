@testable import Bluebonnet
import Crypto
import Foundation
import SwiftASN1
import X509
import XCTest

/// Which hosts a leaf names. Bluebonnet keeps its own matcher rather than swift-certificates' `ServerIdentityPolicy`,
/// which (at 1.21) falls back to the common name, lets `*` stand inside a label and lets `*.com` name every `.com`
/// host; RFC 9525 forbids the first two and no CA may issue the third. These tests hold both to the same leaves, so
/// the choice is re-made the day the package changes.
final class HostNameMatchingTests: XCTestCase {
    private static func leaf(commonName: String, names: [GeneralName]) throws -> Certificate {
        let key = P256.Signing.PrivateKey()
        let subject = try DistinguishedName { CommonName(commonName) }
        let extensions = try Certificate.Extensions {
            // Not critical: the package's verifier below runs only the identity policy, which handles no other.
            BasicConstraints.notCertificateAuthority
            if !names.isEmpty { SubjectAlternativeNames(names) }
        }
        return try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: Date(), notValidAfter: Date().addingTimeInterval(3600), issuer: subject,
            subject: subject, signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(key))
    }

    private static func trust(_ certificate: Certificate) -> ServerTrust {
        ServerTrust(certificates: [certificate], isChainTrusted: true)
    }

    /// Whether swift-certificates' verifier, with the leaf as its own root and only `ServerIdentityPolicy`, accepts it.
    private static func packageAccepts(_ certificate: Certificate, _ host: String) async -> Bool {
        var verifier = Verifier(rootCertificates: CertificateStore([certificate])) {
            ServerIdentityPolicy(serverHostname: host, serverIP: nil)
        }
        if case .validCertificate = await verifier.validate(leaf: certificate, intermediates: CertificateStore()) {
            return true
        }
        return false
    }

    func testAWildcardIsAWholeLeftmostLabelOverAtLeastTwoMore() throws {
        let leaf = try Self.leaf(
            commonName: "cn.example", names: [.dnsName("*.example.org"), .dnsName("Exact.Example.")])
        let trust = Self.trust(leaf)
        XCTAssertTrue(trust.leafNames("api.example.org"))
        XCTAssertTrue(trust.leafNames("exact.example"), "case and a trailing dot do not matter")
        XCTAssertFalse(trust.leafNames("a.b.example.org"), "a wildcard stands for exactly one label")
        XCTAssertFalse(trust.leafNames("example.org"))
        XCTAssertFalse(trust.leafNames("cn.example"), "the common name is never consulted when names exist")
    }

    func testWhereTheSwiftCertificatesPolicyIsLooserThanOurs() async throws {
        let topLevel = try Self.leaf(commonName: "x", names: [.dnsName("*.com")])
        XCTAssertFalse(Self.trust(topLevel).leafNames("example.com"))
        let acceptsTopLevel = await Self.packageAccepts(topLevel, "example.com")
        XCTAssertTrue(acceptsTopLevel, "ServerIdentityPolicy now refuses *.com: reconsider it")

        let partial = try Self.leaf(commonName: "x", names: [.dnsName("f*.example.org")])
        XCTAssertFalse(Self.trust(partial).leafNames("foo.example.org"))
        let acceptsPartial = await Self.packageAccepts(partial, "foo.example.org")
        XCTAssertTrue(acceptsPartial, "ServerIdentityPolicy now refuses partial labels")

        let commonNameOnly = try Self.leaf(commonName: "cn.example", names: [])
        XCTAssertFalse(Self.trust(commonNameOnly).leafNames("cn.example"))
        let acceptsCommonNameOnly = await Self.packageAccepts(commonNameOnly, "cn.example")
        XCTAssertTrue(acceptsCommonNameOnly, "ServerIdentityPolicy now ignores the common name")
    }

    func testAnIPAddressMatchesOnlyAnIPAddressName() throws {
        let leaf = try Self.leaf(
            commonName: "127.0.0.1",
            names: [
                .ipAddress(ASN1OctetString(contentBytes: [127, 0, 0, 1])),
                .dnsName("localhost"),
            ])
        let trust = Self.trust(leaf)
        XCTAssertTrue(trust.leafNames("127.0.0.1"))
        XCTAssertFalse(trust.leafNames("127.0.0.2"))
        XCTAssertTrue(trust.leafNames("localhost"))
    }
}
