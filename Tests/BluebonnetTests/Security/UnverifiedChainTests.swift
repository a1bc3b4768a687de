@testable import Bluebonnet
import Crypto
import Foundation
import SwiftASN1
import X509
import XCTest

/// An evaluator that requires a trusted chain refuses a trust whose chain nobody verified, whoever calls it: a
/// wrapping evaluator that asked the handshake for no chain check, or a direct call (as Alamofire's own tests make).
final class UnverifiedChainTests: XCTestCase {
    private static func leaf(named host: String) throws -> Certificate {
        let key = P256.Signing.PrivateKey()
        let subject = try DistinguishedName { CommonName(host) }
        let extensions = try Certificate.Extensions {
            BasicConstraints.notCertificateAuthority
            SubjectAlternativeNames([.dnsName(host)])
        }
        return try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: Date(), notValidAfter: Date().addingTimeInterval(3600), issuer: subject,
            subject: subject, signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(key))
    }

    private func assertRefusedAsUnverified(
        _ evaluator: any ServerTrustEvaluating, _ trust: ServerTrust, file: StaticString = #filePath, line: UInt = #line
    ) {
        XCTAssertThrowsError(try evaluator.evaluate(trust, forHost: "example.test"), file: file, line: line) { error in
            guard case let .serverTrustEvaluationFailed(reason: .defaultEvaluationFailed(output))? = error as? AFError
            else { return XCTFail("\(error)", file: file, line: line) }
            XCTAssertTrue(output.error is UnverifiedChainError, file: file, line: line)
        }
    }

    func testEvaluatorsThatRequireATrustedChainRefuseAnUnverifiedOne() throws {
        let leaf = try Self.leaf(named: "example.test")
        let unverified = ServerTrust(certificates: [leaf], isChainTrusted: false)
        let verified = ServerTrust(certificates: [leaf], isChainTrusted: true)

        assertRefusedAsUnverified(DefaultTrustEvaluator(), unverified)
        XCTAssertNoThrow(try DefaultTrustEvaluator().evaluate(verified, forHost: "example.test"))

        assertRefusedAsUnverified(PublicKeysTrustEvaluator(keys: [leaf.publicKey]), unverified)
        XCTAssertNoThrow(
            try PublicKeysTrustEvaluator(keys: [leaf.publicKey]).evaluate(verified, forHost: "example.test"))
        XCTAssertNoThrow(
            try PublicKeysTrustEvaluator(keys: [leaf.publicKey], performDefaultValidation: false)
                .evaluate(unverified, forHost: "example.test"))

        assertRefusedAsUnverified(PinnedCertificatesTrustEvaluator(certificates: [leaf]), unverified)
        XCTAssertNoThrow(
            try PinnedCertificatesTrustEvaluator(certificates: [leaf]).evaluate(verified, forHost: "example.test"))
        XCTAssertNoThrow(
            try PinnedCertificatesTrustEvaluator(certificates: [leaf], performDefaultValidation: false)
                .evaluate(unverified, forHost: "example.test"))

        assertRefusedAsUnverified(CompositeTrustEvaluator(evaluators: [DefaultTrustEvaluator()]), unverified)
        XCTAssertNoThrow(try DisabledTrustEvaluator().evaluate(unverified, forHost: "example.test"))
    }
}
