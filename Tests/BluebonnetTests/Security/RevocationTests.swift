import Bluebonnet
import BluebonnetTestServer
import Foundation
import X509
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `RevocationTrustEvaluator` against the test server's OCSP responder (issue 24): the issuer fetched from the leaf's
/// `caIssuers` URL, the leaf's status asked of its responder, on the connection that carries the request.
final class RevocationTests: ServerTestCase {
    private var certificates: TestCertificates!
    private var responder: String!
    private var tlsServers: [TestServer] = []

    override func setUp() async throws {
        try await super.setUp()
        certificates = try TestCertificates()
        responder = url("/ocsp/\(OCSPResponder.register(certificates.intermediate))")
    }

    override func tearDown() async throws {
        for server in tlsServers { await server.stop() }
        tlsServers = []
        try await super.tearDown()
    }

    /// An HTTPS server whose leaf names `ocspURL` as its responder and this server's issuer route.
    private func server(ocspURL: String, issuerURL: String? = nil) async throws -> TestServer {
        let leaf = try certificates.leaf(ocspURL: ocspURL, issuerURL: issuerURL ?? "\(responder!)/issuer")
        let server = try await TestServer.start(
            tls: try certificates.serverConfiguration(presenting: leaf, chain: [certificates.intermediate]))
        tlsServers.append(server)
        return server
    }

    private func get(_ server: TestServer, _ evaluator: any ServerTrustEvaluating) async -> AFDataResponse<Data> {
        let session = Session(
            serverTrustManager: ServerTrustManager(evaluators: ["127.0.0.1": evaluator]),
            tls: TLSSettings(trustRoots: .adding([certificates.root.certificate])))
        return await session.request(server.url("/get")).serializingData().response
    }

    private func assertRevocationFailure(_ response: AFDataResponse<Data>, mentioning text: String, line: UInt = #line)
    {
        guard case let .serverTrustEvaluationFailed(reason: .revocationCheckFailed(output, _))? = response.error else {
            return XCTFail("expected revocationCheckFailed, got \(String(describing: response.error))", line: line)
        }
        XCTAssertEqual(output.host, "127.0.0.1", line: line)
        XCTAssertTrue(
            String(describing: output.error).contains(text), "\(String(describing: output.error))", line: line)
    }

    func testAGoodAnswerIsAccepted() async throws {
        let good = try await server(ocspURL: "\(responder!)/good")
        let response = await get(good, RevocationTrustEvaluator())
        XCTAssertNil(response.error)
        XCTAssertEqual(response.response?.statusCode, 200)
        let required = await get(good, .revocationChecking(options: [.ocsp, .requirePositiveResponse]))
        XCTAssertNil(required.error)
    }

    func testARevokedCertificateIsRefusedWhateverTheOptions() async throws {
        let revoked = try await server(ocspURL: "\(responder!)/revoked")
        assertRevocationFailure(await get(revoked, RevocationTrustEvaluator()), mentioning: "revoked")
        assertRevocationFailure(
            await get(revoked, RevocationTrustEvaluator(options: [.ocsp, .requirePositiveResponse])),
            mentioning: "revoked")
        // Composed with a pin that holds, the revocation still decides.
        let pinned = CompositeTrustEvaluator(evaluators: [
            PinnedCertificatesTrustEvaluator(
                certificates: [certificates.intermediate.certificate], performDefaultValidation: false),
            RevocationTrustEvaluator(),
        ])
        assertRevocationFailure(await get(revoked, pinned), mentioning: "revoked")
    }

    func testAnUnknownStatusPassesUnlessAPositiveAnswerIsRequired() async throws {
        let unknown = try await server(ocspURL: "\(responder!)/unknown")
        let passed1 = await get(unknown, RevocationTrustEvaluator())
        XCTAssertNil(passed1.error)
        assertRevocationFailure(
            await get(unknown, RevocationTrustEvaluator(options: [.ocsp, .requirePositiveResponse])),
            mentioning: "unknown")
    }

    func testAnUnreachableResponderSoftFailsOrHardFails() async throws {
        let unreachable = try await server(ocspURL: "http://127.0.0.1:1/ocsp")
        let passed1 = await get(unreachable, RevocationTrustEvaluator())
        XCTAssertNil(passed1.error, "soft-fail: no answer is a pass")
        assertRevocationFailure(
            await get(unreachable, RevocationTrustEvaluator(options: [.any, .requirePositiveResponse])),
            mentioning: "refused")
        // An issuer that cannot be fetched is no answer either.
        let noIssuer = try await server(ocspURL: "\(responder!)/revoked", issuerURL: "http://127.0.0.1:1/issuer.der")
        let passed2 = await get(noIssuer, RevocationTrustEvaluator())
        XCTAssertNil(passed2.error)
        assertRevocationFailure(
            await get(noIssuer, RevocationTrustEvaluator(options: [.ocsp, .requirePositiveResponse])),
            mentioning: "issuer could not be fetched")
    }

    func testOptionsLinuxCannotHonourFailClearly() async throws {
        let good = try await server(ocspURL: "\(responder!)/good")
        assertRevocationFailure(await get(good, RevocationTrustEvaluator(options: .crl)), mentioning: "only OCSP")
        let passed1 = await get(good, RevocationTrustEvaluator(options: [.ocsp, .networkAccessDisabled]))
        XCTAssertNil(passed1.error)
        assertRevocationFailure(
            await get(
                good, RevocationTrustEvaluator(options: [.ocsp, .networkAccessDisabled, .requirePositiveResponse])),
            mentioning: "network access is disabled")
    }
}
