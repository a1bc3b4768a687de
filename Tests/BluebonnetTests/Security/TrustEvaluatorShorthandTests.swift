import Bluebonnet
import BluebonnetTestServer
import Foundation
import SwiftASN1
import X509
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Alamofire's shorthands for the evaluators (`.pinnedCertificates(...)`, `.publicKeys(...)`, `.composite(...)`) and
/// `[Certificate].af`, written as Alamofire code writes them, against an HTTPS test server.
final class TrustEvaluatorShorthandTests: TLSServerTestCase {
    private func get(_ evaluators: [String: any ServerTrustEvaluating], path: String = "/get") async throws
        -> AFDataResponse<Data>
    {
        let server = try await tlsServer()
        let session = Session(serverTrustManager: ServerTrustManager(evaluators: evaluators))
        return await session.request(server.url(path)).serializingData().response
    }

    func testTheShorthandsPinAsTheirInitializersDo() async throws {
        let leaf = certificates.leaf.certificate
        let other = try TestCertificates().leaf.certificate
        let pinned = try await get([
            "127.0.0.1": .pinnedCertificates(certificates: [leaf], performDefaultValidation: false)
        ])
        XCTAssertNil(pinned.error, "\(String(describing: pinned.error))")
        let keys = try await get(["127.0.0.1": .publicKeys(keys: [leaf].af.publicKeys, performDefaultValidation: false)]
        )
        XCTAssertNil(keys.error, "\(String(describing: keys.error))")
        let wrongPin = try await get([
            "127.0.0.1": .pinnedCertificates(certificates: [other], performDefaultValidation: false)
        ])
        guard case .serverTrustEvaluationFailed(reason: .certificatePinningFailed)? = wrongPin.error else {
            return XCTFail("\(String(describing: wrongPin.error))")
        }
        let wrongKey = try await get([
            "127.0.0.1": .publicKeys(keys: [other].af.publicKeys, performDefaultValidation: false)
        ])
        guard case .serverTrustEvaluationFailed(reason: .publicKeyPinningFailed)? = wrongKey.error else {
            return XCTFail("\(String(describing: wrongKey.error))")
        }
    }

    func testACompositePassesOnlyWhenEveryEvaluatorDoes() async throws {
        let leaf = certificates.leaf.certificate
        let other = try TestCertificates().leaf.certificate
        let both = try await get([
            "127.0.0.1": .composite(evaluators: [
                .pinnedCertificates(certificates: [leaf], performDefaultValidation: false),
                .publicKeys(keys: [leaf.publicKey], performDefaultValidation: false),
            ])
        ])
        XCTAssertNil(both.error, "\(String(describing: both.error))")
        let oneFails = try await get([
            "127.0.0.1": .composite(evaluators: [
                .pinnedCertificates(certificates: [leaf], performDefaultValidation: false),
                .publicKeys(keys: [other.publicKey], performDefaultValidation: false),
            ])
        ])
        XCTAssertNotNil(oneFails.error?.isServerTrustEvaluationError == true ? oneFails.error : nil)
    }

    func testTheDefaultsReadTheMainBundleAndTheCertificatesDataIsTheirDER() throws {
        // `Bundle.main` of a test runner holds no certificates: the defaults read it, as Alamofire's do, and pin nothing.
        let trust = ServerTrust(certificates: [certificates.leaf.certificate], isChainTrusted: true)
        let pins: PinnedCertificatesTrustEvaluator = .pinnedCertificates
        let keys: PublicKeysTrustEvaluator = .publicKeys
        XCTAssertThrowsError(try pins.evaluate(trust, forHost: "127.0.0.1"))
        XCTAssertThrowsError(try keys.evaluate(trust, forHost: "127.0.0.1")) { error in
            guard case .serverTrustEvaluationFailed(reason: .noPublicKeysFound)? = error as? AFError else {
                return XCTFail("\(error)")
            }
        }
        let revocation: RevocationTrustEvaluator = .revocationChecking
        XCTAssertTrue(revocation.requiresTrustedChain)
        let chain = [certificates.leaf.certificate, certificates.intermediate.certificate]
        let data = chain.af.data
        XCTAssertEqual(data.count, 2)
        XCTAssertEqual(try data.map { try Certificate(derEncoded: Array($0)) }, chain)
        XCTAssertEqual(chain.af.publicKeys, chain.map(\.publicKey))
        XCTAssertEqual(chain[0].af.publicKey, chain[0].publicKey)
    }
}
