@testable import Bluebonnet
import BluebonnetTestServer
import Foundation
import X509
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Bluebonnet's own trust evaluators await what they wait for (issue 46, item 4): a handshake waiting for an OCSP
/// responder, or for a chain verification, holds no thread; a user's evaluator, which may block, runs on `Offload`.
final class NonBlockingTrustTests: ServerTestCase {
    /// A user's evaluator: Bluebonnet cannot know whether it blocks.
    struct UsersEvaluator: ServerTrustEvaluating {
        func evaluate(_ trust: ServerTrust, forHost host: String) throws {}
    }

    func testBluebonnetsEvaluatorsRunWithoutBlockingAndAUsersDoesNot() throws {
        let certificate = try TestCertificates().root.certificate
        let own: [any ServerTrustEvaluating] = [
            DefaultTrustEvaluator(), DisabledTrustEvaluator(), RevocationTrustEvaluator(),
            PinnedCertificatesTrustEvaluator(certificates: [certificate]),
            PublicKeysTrustEvaluator(keys: [certificate.publicKey]),
            CompositeTrustEvaluator(evaluators: [DefaultTrustEvaluator(), RevocationTrustEvaluator()]),
        ]
        for evaluator in own {
            let nonBlocking = evaluator as? any NonBlockingTrustEvaluating
            XCTAssertEqual(nonBlocking?.evaluatesWithoutBlocking, true, "\(type(of: evaluator))")
        }
        XCTAssertNil(UsersEvaluator() as Any as? any NonBlockingTrustEvaluating)
        let mixed = CompositeTrustEvaluator(evaluators: [DefaultTrustEvaluator(), UsersEvaluator()])
        XCTAssertFalse(mixed.evaluatesWithoutBlocking, "a composite asking a user's evaluator may block")
    }

    func testHandshakesWaitingForTheirOCSPResponderHoldNoThreadOfOffload() async throws {
        let certificates = try TestCertificates()
        let responder = url("/ocsp/\(OCSPResponder.register(certificates.intermediate))")
        let silent = try await FaultServer.start()
        // The leaf's responder never answers: each handshake's check waits for it until the test ends.
        let leaf = try certificates.leaf(
            ocspURL: silent.url("/silent").absoluteString, issuerURL: "\(responder)/issuer")
        let tls = try await TestServer.start(
            tls: try certificates.serverConfiguration(presenting: leaf, chain: [certificates.intermediate]))
        // One session each, so each request makes a connection of its own, and each connection a handshake.
        let handshakes = 3
        var sessions: [Session] = []
        var requests: [DataRequest] = []
        for _ in 0..<handshakes {
            let session = Session(
                serverTrustManager: ServerTrustManager(evaluators: ["127.0.0.1": RevocationTrustEvaluator()]),
                tls: TLSSettings(trustRoots: .adding([certificates.root.certificate])))
            sessions.append(session)
            requests.append(session.request(tls.url("/get")).response(queue: .global()) { _ in })
        }
        let waiting = await silent.arrivals.wait(forPath: "/silent", count: handshakes, timeout: 30)
        XCTAssertTrue(waiting, "the handshakes never asked the responder")
        // Each blocked a worker of Offload before; other work may pass through, but not one per handshake.
        let workers = Offload.backlog.read { $0.workers }
        XCTAssertLessThan(workers, handshakes, "handshakes waiting for their responder hold \(workers) threads")
        for request in requests { request.cancel() }
        await silent.stop()
        await tls.stop()
        withExtendedLifetime(sessions) {}
    }

    func testAChainVerifiedAgainstPinsIsAwaitedAndJudgedAsTheBlockingPathJudgesIt() async throws {
        let certificates = try TestCertificates()
        let leaf = try certificates.leaf(ocspURL: "http://127.0.0.1:1/", issuerURL: nil)
        // The leaf's chain, anchored at the pinned intermediate; and a pin the chain does not reach.
        let trust = ServerTrust(
            certificates: [leaf.certificate, certificates.intermediate.certificate], isChainTrusted: false)
        let anchored = PinnedCertificatesTrustEvaluator(
            certificates: [certificates.intermediate.certificate], acceptSelfSignedCertificates: true)
        let stranger = PinnedCertificatesTrustEvaluator(
            certificates: [try TestCertificates().intermediate.certificate], acceptSelfSignedCertificates: true)
        for (evaluator, trusted) in [(anchored, true), (stranger, false)] {
            let awaited: Bool
            do {
                try await evaluator.evaluateWithoutBlocking(trust, forHost: "127.0.0.1")
                awaited = true
            } catch {
                awaited = false
            }
            // The synchronous `evaluate` a user's wrapping evaluator calls, on Offload, where it may wait.
            let blocked = await withCheckedContinuation { continuation in
                Offload.run {
                    continuation.resume(returning: (try? evaluator.evaluate(trust, forHost: "127.0.0.1")) != nil)
                }
            }
            XCTAssertEqual(awaited, trusted)
            XCTAssertEqual(blocked, trusted)
        }
    }
}
