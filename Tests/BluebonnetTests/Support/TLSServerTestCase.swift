import BluebonnetTestServer
import Foundation
import XCTest

/// A test case with HTTPS test servers on a certificate hierarchy made once per run, stopped after each test.
class TLSServerTestCase: XCTestCase {
    private static let sharedCertificates = Result { try TestCertificates() }
    var certificates: TestCertificates!
    private var servers: [TestServer] = []

    override func setUp() async throws {
        try await super.setUp()
        certificates = try Self.sharedCertificates.get()
    }

    override func tearDown() async throws {
        for server in servers { await server.stop() }
        servers = []
        try await super.tearDown()
    }

    /// An HTTPS server presenting `leaf` (the hierarchy's own by default) and `chain` after it (the intermediate).
    func tlsServer(
        presenting leaf: TestCertificates.Identity? = nil, chain: [TestCertificates.Identity]? = nil,
        requireClientCertificate: Bool = false, http2: Bool = false
    ) async throws -> TestServer {
        let tls = try certificates.serverConfiguration(
            presenting: leaf ?? certificates.leaf, chain: chain ?? [certificates.intermediate],
            requireClientCertificate: requireClientCertificate)
        let server = try await TestServer.start(tls: tls, http2: http2)
        servers.append(server)
        return server
    }

    /// A plain HTTP server, stopped with the test.
    func plainServer() async throws -> TestServer {
        let server = try await TestServer.start()
        servers.append(server)
        return server
    }
}
