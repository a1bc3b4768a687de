import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The connection under a WebSocket has what every request of the session has: its trust roots, its server trust
/// evaluators (enforced on the very connection that carries the socket, before the upgrade is written), client
/// certificates, and its proxies (a `CONNECT` tunnel, SOCKS5).
final class WebSocketConnectionTests: XCTestCase {
    typealias Kind = WebSocketRequest.Event<URLSessionWebSocketTask.Message, Never>.Kind

    private static let sharedCertificates = Result { try TestCertificates() }
    private var certificates: TestCertificates!
    private var servers: [WebSocketServer] = []
    private var sessions: [Session] = []

    override func setUp() async throws {
        try await super.setUp()
        certificates = try Self.sharedCertificates.get()
    }

    override func tearDown() async throws {
        for server in servers { await server.stop() }
        servers = []
        sessions = []
        try await super.tearDown()
    }

    private func tlsServer(requireClientCertificate: Bool = false) async throws -> WebSocketServer {
        let server = try await WebSocketServer.start(
            tls: certificates.serverConfiguration(
                presenting: certificates.leaf, chain: [certificates.intermediate],
                requireClientCertificate: requireClientCertificate))
        servers.append(server)
        return server
    }

    private func plainServer() async throws -> WebSocketServer {
        let server = try await WebSocketServer.start()
        servers.append(server)
        return server
    }

    private func session(
        trust: ServerTrustManager? = nil, tls: TLSSettings? = nil, proxy: [AnyHashable: Any]? = nil
    ) -> Session {
        let configuration = URLSessionConfiguration.af.default
        configuration.connectionProxyDictionary = proxy
        let session = Session(
            configuration: configuration, serverTrustManager: trust,
            tls: tls ?? TLSSettings(trustRoots: .adding([certificates.root.certificate])))
        sessions.append(session)
        return session
    }

    /// The events of a socket that closes itself once connected.
    private func run(_ request: WebSocketRequest) async -> [Kind] {
        let recorder = Recorder<Kind>()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            request.streamMessageEvents(on: DispatchQueue(label: "events")) { event in
                recorder.append(event.kind)
                if case .connected = event.kind { event.close(sending: .normalClosure) }
                if case .completed = event.kind { continuation.resume() }
            }
        }
        return recorder.values
    }

    private func error(_ events: [Kind]) -> AFError? {
        guard case let .completed(completion)? = events.last else { return nil }
        return completion.error
    }

    private func connected(_ events: [Kind]) -> Bool {
        if case .connected? = events.first { return true }
        return false
    }

    func testASecureSocketTrustsTheSessionsRoots() async throws {
        let server = try await tlsServer()
        let events = await run(session().webSocketRequest(to: server.url("/echo")))

        XCTAssertTrue(connected(events), "\(events)")
        XCTAssertNil(error(events))
    }

    func testASecureSocketRefusesAnUntrustedChain() async throws {
        let server = try await tlsServer()
        let events = await run(session(tls: .default).webSocketRequest(to: server.url("/echo")))

        XCTAssertFalse(connected(events))
        XCTAssertNotNil(error(events))
        XCTAssertTrue(server.upgradeHeads.isEmpty, "nothing was sent to an untrusted server")
    }

    func testAPinnedLeafIsEnforcedOnTheSocketsConnection() async throws {
        let server = try await tlsServer()
        let pinned = ServerTrustManager(evaluators: [
            "localhost": PinnedCertificatesTrustEvaluator(certificates: [certificates.leaf.certificate])
        ])
        let events = await run(session(trust: pinned).webSocketRequest(to: server.url("/echo")))

        XCTAssertTrue(connected(events), "\(events)")
        XCTAssertNil(error(events))
    }

    func testAPinOfAnotherCertificateStopsTheUpgradeBeforeItIsWritten() async throws {
        let server = try await tlsServer()
        let pinned = ServerTrustManager(evaluators: [
            "localhost": PinnedCertificatesTrustEvaluator(certificates: [certificates.selfSignedLeaf.certificate])
        ])
        let events = await run(session(trust: pinned).webSocketRequest(to: server.url("/echo")))

        XCTAssertFalse(connected(events))
        guard case .serverTrustEvaluationFailed(.certificatePinningFailed)? = error(events) else {
            return XCTFail("\(String(describing: error(events)))")
        }
        XCTAssertTrue(server.upgradeHeads.isEmpty, "the upgrade, with its cookies and credentials, was never sent")
    }

    func testAHostWithoutARequiredEvaluatorIsRefused() async throws {
        let server = try await tlsServer()
        let manager = ServerTrustManager(evaluators: ["elsewhere.example": DefaultTrustEvaluator()])
        let events = await run(session(trust: manager).webSocketRequest(to: server.url("/echo")))

        guard case .serverTrustEvaluationFailed(.noRequiredEvaluator(host: "localhost"))? = error(events) else {
            return XCTFail("\(String(describing: error(events)))")
        }
    }

    func testTheClientCertificateIsPresented() async throws {
        let server = try await tlsServer(requireClientCertificate: true)
        let identity = try ClientCertificate(
            pemCertificateChain: Data((certificates.client.pem + certificates.intermediate.pem).utf8),
            privateKey: Data(certificates.client.privateKeyPEM.utf8))
        let withCertificate = session(
            tls: TLSSettings(trustRoots: .adding([certificates.root.certificate]), clientCertificate: identity))
        let events = await run(withCertificate.webSocketRequest(to: server.url("/echo")))
        XCTAssertTrue(connected(events), "\(events)")

        let without = await run(session().webSocketRequest(to: server.url("/echo")))
        XCTAssertFalse(connected(without))
    }

    func testAnHTTPProxyCarriesTheSocketThroughATunnel() async throws {
        let server = try await plainServer()
        let proxy = try Tinyproxy()
        let events = await run(session(proxy: proxy.dictionary()).webSocketRequest(to: server.url("/echo")))

        XCTAssertTrue(connected(events), "\(events)")
        XCTAssertEqual(proxy.tunnels, ["127.0.0.1:\(server.port)"])
    }

    func testAProxysCredentialsGoToTheProxyOnly() async throws {
        let server = try await plainServer()
        let proxy = try Tinyproxy(credentials: ("walker", "s3cret"))
        let dictionary = proxy.dictionary(user: "walker", password: "s3cret")
        let events = await run(session(proxy: dictionary).webSocketRequest(to: server.url("/echo")))

        XCTAssertTrue(connected(events), "\(events)")
        XCTAssertFalse(server.upgradeHeads.joined().contains("Proxy-Authorization"))
    }

    func testAProxyThatRefusesTheTunnelIsNamedWithItsStatus() async throws {
        let server = try await plainServer()
        let proxy = try Tinyproxy(connectPorts: [443])
        let events = await run(session(proxy: proxy.dictionary()).webSocketRequest(to: server.url("/echo")))

        guard case let .sessionTaskFailed(failure as URLError)? = error(events) else {
            return XCTFail("\(String(describing: error(events)))")
        }
        XCTAssertEqual(failure.code, .cannotConnectToHost)
        XCTAssertTrue(
            failure.localizedDescription.contains("127.0.0.1:\(proxy.port) refused"), failure.localizedDescription)
        XCTAssertTrue(failure.localizedDescription.contains("HTTP/1."), failure.localizedDescription)
        XCTAssertTrue(server.upgradeHeads.isEmpty)
    }

    func testASecureSocketThroughAProxyIsStillJudgedByItsPin() async throws {
        let server = try await tlsServer()
        let proxy = try Tinyproxy()
        let pinned = ServerTrustManager(evaluators: [
            "localhost": PinnedCertificatesTrustEvaluator(certificates: [certificates.selfSignedLeaf.certificate])
        ])
        let events = await run(
            session(trust: pinned, proxy: proxy.dictionary()).webSocketRequest(to: server.url("/echo")))

        XCTAssertEqual(proxy.tunnels, ["localhost:\(server.port)"])
        guard case .serverTrustEvaluationFailed(.certificatePinningFailed)? = error(events) else {
            return XCTFail("\(String(describing: error(events)))")
        }
    }

    func testASOCKSProxyCarriesTheSocket() async throws {
        let server = try await plainServer()
        let proxy = try Microsocks()
        let events = await run(session(proxy: proxy.dictionary()).webSocketRequest(to: server.url("/echo")))

        XCTAssertTrue(connected(events), "\(events)")
        XCTAssertNil(error(events))
    }

    func testAnExceptionGoesDirect() async throws {
        let server = try await plainServer()
        let proxy = try Tinyproxy()
        let events = await run(
            session(proxy: proxy.dictionary(exceptions: ["127.0.0.1"])).webSocketRequest(to: server.url("/echo")))

        XCTAssertTrue(connected(events), "\(events)")
        XCTAssertTrue(proxy.tunnels.isEmpty)
    }
}
