import Bluebonnet
import BluebonnetTestServer
import Foundation
import X509
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A session's own trust roots, client certificates for mutual TLS, and HTTP/2 through ALPN, against HTTPS test
/// servers with a hierarchy made for this run.
final class TLSSettingsTests: TLSServerTestCase {
    private static func get(_ session: Session, _ url: URL) async -> AFDataResponse<Data> {
        await session.request(url).serializingData().response
    }

    private var clientIdentity: ClientCertificate {
        get throws {
            try ClientCertificate(
                pemCertificateChain: Data((certificates.client.pem + certificates.intermediate.pem).utf8),
                privateKey: Data(certificates.client.privateKeyPEM.utf8))
        }
    }

    func testAddedRootsAreTrustedWithFullVerification() async throws {
        let server = try await tlsServer()
        let session = Session(tls: TLSSettings(trustRoots: .adding([certificates.root.certificate])))
        let response = await Self.get(session, server.url("/get"))
        XCTAssertNil(response.error)
        let other = try TestCertificates()
        let narrowed = Session(tls: TLSSettings(trustRoots: .replacing([other.root.certificate])))
        let refused = await Self.get(narrowed, server.url("/get"))
        XCTAssertEqual(refused.error?.urlErrorCode, .secureConnectionFailed)
    }

    /// Issue 24 (9): with no `ServerTrustManager`, swift-nio-ssl matched a certificate without subjectAltName by its
    /// common name. RFC 9525, and the README, say subjectAltNames only, on every path.
    func testTheDefaultPathRefusesAHostNamedOnlyInTheCommonName() async throws {
        let server = try await tlsServer(presenting: certificates.commonNameOnlyLeaf)
        let session = Session(tls: TLSSettings(trustRoots: .adding([certificates.root.certificate])))
        let url = URL(string: "https://localhost:\(server.port)/get")!
        let refused = await Self.get(session, url)
        guard case let .serverTrustEvaluationFailed(reason: .hostValidationFailed(output))? = refused.error else {
            return XCTFail("expected hostValidationFailed, got \(String(describing: refused.error))")
        }
        XCTAssertEqual(output.host, "localhost")
        XCTAssertEqual(output.trust?.leafCertificate?.subject, certificates.commonNameOnlyLeaf.certificate.subject)
        // Through a proxy-less client of its own (a per-host identity) the rule holds too.
        let identified = Session(
            tls: TLSSettings(
                trustRoots: .adding([certificates.root.certificate]),
                clientCertificatesByHost: ["localhost": try clientIdentity]))
        let alsoRefused = await Self.get(identified, url)
        XCTAssertTrue(
            alsoRefused.error?.isServerTrustEvaluationError == true, "\(String(describing: alsoRefused.error))")
        // A certificate with subjectAltNames is still accepted on the same session.
        let good = try await tlsServer()
        let accepted = await Self.get(session, URL(string: "https://localhost:\(good.port)/get")!)
        XCTAssertNil(accepted.error)
        // And plain HTTP is untouched by the check.
        let plain = try await plainServer()
        let served = await Self.get(session, plain.url("/get"))
        XCTAssertNil(served.error)
    }

    func testAnEvaluatorBuildsOnTheSessionsRoots() async throws {
        let server = try await tlsServer()
        let session = Session(
            serverTrustManager: ServerTrustManager(evaluators: ["127.0.0.1": DefaultTrustEvaluator()]),
            tls: TLSSettings(trustRoots: .adding([certificates.root.certificate])))
        let response = await Self.get(session, server.url("/get"))
        XCTAssertNil(response.error)
    }

    func testAServerThatRequiresAClientCertificateGetsOneFromPEM() async throws {
        let server = try await tlsServer(requireClientCertificate: true)
        let roots = TrustRoots.adding([certificates.root.certificate])
        let anonymous = await Self.get(Session(tls: TLSSettings(trustRoots: roots)), server.url("/get"))
        XCTAssertNotNil(anonymous.error, "the server refuses a client without a certificate")
        let identified = await Self.get(
            Session(tls: TLSSettings(trustRoots: roots, clientCertificate: try clientIdentity)), server.url("/get"))
        XCTAssertNil(identified.error)
        XCTAssertEqual(identified.response?.statusCode, 200)
    }

    func testAPerHostIdentityGoesToThatHostOnly() async throws {
        let server = try await tlsServer(requireClientCertificate: true)
        let roots = TrustRoots.adding([certificates.root.certificate])
        let forThisHost = Session(
            tls: TLSSettings(trustRoots: roots, clientCertificatesByHost: ["127.0.0.1": try clientIdentity]))
        let served = await Self.get(forThisHost, server.url("/get"))
        XCTAssertNil(served.error)
        let forAnotherHost = Session(
            tls: TLSSettings(trustRoots: roots, clientCertificatesByHost: ["example.invalid": try clientIdentity]))
        let refused = await Self.get(forAnotherHost, server.url("/get"))
        XCTAssertNotNil(refused.error)
    }

    func testPKCS12AndEncryptedKeysLoadWithTheirPassphraseAndFailClearlyWithout() throws {
        let directory = try TemporaryDirectory()
        let certificate = directory.url.appendingPathComponent("client.pem")
        let key = directory.url.appendingPathComponent("client.key")
        try Data(certificates.client.pem.utf8).write(to: certificate)
        try Data(certificates.client.privateKeyPEM.utf8).write(to: key)
        let archive = directory.url.appendingPathComponent("client.p12")
        let encrypted = directory.url.appendingPathComponent("client-encrypted.key")
        try Self.openssl([
            "pkcs12", "-export", "-in", certificate.path, "-inkey", key.path, "-out", archive.path, "-passout",
            "pass:s3cret",
        ])
        try Self.openssl([
            "pkcs8", "-topk8", "-v2", "aes-256-cbc", "-in", key.path, "-out", encrypted.path, "-passout", "pass:s3cret",
        ])

        XCTAssertNoThrow(try ClientCertificate(pkcs12: Data(contentsOf: archive), passphrase: "s3cret"))
        XCTAssertThrowsError(try ClientCertificate(pkcs12: Data(contentsOf: archive), passphrase: "wrong")) { error in
            guard case .invalidPKCS12? = error as? ClientCertificate.LoadingError else { return XCTFail("\(error)") }
        }
        let chain = try Data(contentsOf: certificate)
        XCTAssertNoThrow(
            try ClientCertificate(
                pemCertificateChain: chain, privateKey: Data(contentsOf: encrypted), passphrase: "s3cret"))
        XCTAssertThrowsError(try ClientCertificate(pemCertificateChain: chain, privateKey: Data(contentsOf: encrypted)))
        { error in
            guard case .invalidPrivateKey? = error as? ClientCertificate.LoadingError else {
                return XCTFail("\(error)")
            }
        }
        XCTAssertThrowsError(
            try ClientCertificate(
                pemCertificateChain: Data("not a certificate".utf8), privateKey: Data(contentsOf: key))
        ) { error in
            guard case .invalidCertificateChain? = error as? ClientCertificate.LoadingError else {
                return XCTFail("\(error)")
            }
        }
    }

    func testHTTP2IsNegotiatedUnlessTurnedOffAndTrustIsEnforcedOnIt() async throws {
        let server = try await tlsServer(http2: true)
        let roots = TrustRoots.adding([certificates.root.certificate])
        let negotiated = await Self.get(Session(tls: TLSSettings(trustRoots: roots)), server.url("/get"))
        XCTAssertNil(negotiated.error)
        XCTAssertEqual(negotiated.taskMetrics?.transactionMetrics.last?.networkProtocolName, "h2")
        let http1 = await Self.get(Session(tls: TLSSettings(trustRoots: roots, allowsHTTP2: false)), server.url("/get"))
        XCTAssertEqual(http1.taskMetrics?.transactionMetrics.last?.networkProtocolName, "http/1.1")

        let other = try TestCertificates()
        let pinned = Session(
            serverTrustManager: ServerTrustManager(evaluators: [
                "127.0.0.1": PinnedCertificatesTrustEvaluator(
                    certificates: [other.leaf.certificate], performDefaultValidation: false)
            ]))
        let refused = await Self.get(pinned, server.url("/get"))
        guard case .serverTrustEvaluationFailed(reason: .certificatePinningFailed)? = refused.error else {
            return XCTFail("the pin must hold on an HTTP/2 connection too: \(String(describing: refused.error))")
        }
    }

    /// Runs the `openssl` command line tool, which makes the PKCS#12 archive and encrypted key swift-crypto cannot.
    static func openssl(_ arguments: [String]) throws {
        guard
            let path = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first(
                where: FileManager.default.isExecutableFile(atPath:))
        else {
            throw XCTSkip("openssl is not installed")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "openssl \(arguments.joined(separator: " "))")
    }
}
