import Bluebonnet
import BluebonnetTestServer
import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import X509
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Server trust enforced on the connection that carries the request, against HTTPS test servers presenting a
/// hierarchy made for this run: pins that hold and pins that fail, host names, expired and self-signed leaves,
/// custom evaluators, and the pool surviving many failed connections at once.
final class ServerTrustTests: TLSServerTestCase {
    /// A session whose trust manager has `evaluator` for 127.0.0.1.
    private func session(_ evaluator: any ServerTrustEvaluating, allHostsMustBeEvaluated: Bool = true) -> Session {
        Session(
            serverTrustManager: ServerTrustManager(
                allHostsMustBeEvaluated: allHostsMustBeEvaluated,
                evaluators: ["127.0.0.1": evaluator]))
    }

    private static func get(_ session: Session, _ server: TestServer, _ path: String = "/get") async -> AFDataResponse<
        Data
    > {
        await session.request(server.url(path)).serializingData().response
    }

    private func reason(_ response: AFDataResponse<Data>, file: StaticString = #filePath, line: UInt = #line) -> AFError
        .ServerTrustFailureReason?
    {
        guard case let .serverTrustEvaluationFailed(reason)? = response.error else {
            XCTFail(
                "expected a server trust failure, got \(String(describing: response.error))", file: file, line: line)
            return nil
        }
        return reason
    }

    func testWithoutATrustManagerAnUnknownRootIsRefused() async throws {
        let server = try await tlsServer()
        let response = await Self.get(Session(), server)
        XCTAssertEqual(response.error?.urlErrorCode, .secureConnectionFailed, String(describing: response.error))
    }

    func testAPinnedLeafIsTrustedWithoutTheSystemsRoots() async throws {
        let server = try await tlsServer()
        let evaluator = PinnedCertificatesTrustEvaluator(
            certificates: [certificates.leaf.certificate], performDefaultValidation: false)
        let response = await Self.get(session(evaluator), server, "/bytes/1000?seed=3")
        XCTAssertNil(response.error)
        XCTAssertEqual(response.value, SeededBytes.bytes(seed: 3, offset: 0, count: 1000))
    }

    func testAPinnedRootWithAcceptSelfSignedVerifiesTheChainThroughTheServersIntermediate() async throws {
        let server = try await tlsServer()
        let evaluator = PinnedCertificatesTrustEvaluator(
            certificates: [certificates.root.certificate], acceptSelfSignedCertificates: true)
        let response = await Self.get(session(evaluator), server)
        XCTAssertNil(response.error)
        XCTAssertEqual(response.response?.statusCode, 200)
    }

    func testAPinnedIssuerIsTrustedBecauseItSignedTheLeaf() async throws {
        let server = try await tlsServer()
        let evaluator = PinnedCertificatesTrustEvaluator(
            certificates: [certificates.intermediate.certificate], performDefaultValidation: false)
        let response = await Self.get(session(evaluator), server)
        XCTAssertNil(response.error)
    }

    func testAnotherCertificateFailsThePinWithWhatWasSeen() async throws {
        let server = try await tlsServer()
        let other = try TestCertificates()
        let evaluator = PinnedCertificatesTrustEvaluator(
            certificates: [other.leaf.certificate, other.intermediate.certificate],
            performDefaultValidation: false)
        let response = await Self.get(session(evaluator), server)
        guard case let .certificatePinningFailed(host, trust, pinned, seen)? = reason(response) else {
            return XCTFail("expected certificatePinningFailed, got \(String(describing: response.error))")
        }
        XCTAssertEqual(host, "127.0.0.1")
        XCTAssertEqual(pinned, [other.leaf.certificate, other.intermediate.certificate])
        XCTAssertEqual(seen, [certificates.leaf.certificate])
        XCTAssertEqual(trust.leafCertificate, certificates.leaf.certificate)
        XCTAssertNil(response.response, "a refused connection carries no request")
    }

    func testAPinnedRootAboveAnIntermediateFailsClosedWithoutAcceptSelfSigned() async throws {
        let server = try await tlsServer()
        let evaluator = PinnedCertificatesTrustEvaluator(
            certificates: [certificates.root.certificate], performDefaultValidation: false)
        let response = await Self.get(session(evaluator), server)
        guard case .certificatePinningFailed? = reason(response) else {
            return XCTFail("\(String(describing: response.error))")
        }
    }

    func testPublicKeyPinsHoldForTheLeafsKeyOrItsIssuersAndFailForOthers() async throws {
        let server = try await tlsServer()
        let leafKey = await Self.get(
            session(
                PublicKeysTrustEvaluator(
                    keys: [certificates.leaf.certificate.publicKey],
                    performDefaultValidation: false)), server)
        XCTAssertNil(leafKey.error)
        let issuerKey = await Self.get(
            session(
                PublicKeysTrustEvaluator(
                    keys: [certificates.intermediate.certificate.publicKey],
                    performDefaultValidation: false)), server)
        XCTAssertNil(issuerKey.error)
        let other = try TestCertificates()
        let wrong = await Self.get(
            session(
                PublicKeysTrustEvaluator(
                    keys: [other.leaf.certificate.publicKey],
                    performDefaultValidation: false)), server)
        guard case let .publicKeyPinningFailed(host, _, pinned, seen)? = reason(wrong) else {
            return XCTFail("\(String(describing: wrong.error))")
        }
        XCTAssertEqual(host, "127.0.0.1")
        XCTAssertEqual(pinned, [other.leaf.certificate.publicKey])
        XCTAssertEqual(seen, [certificates.leaf.certificate.publicKey])
    }

    func testEmptyPinsAreAClearError() async throws {
        let server = try await tlsServer()
        let noCertificates = await Self.get(
            session(PinnedCertificatesTrustEvaluator(certificates: [], performDefaultValidation: false)), server)
        guard case .noCertificatesFound? = reason(noCertificates) else { return XCTFail() }
        let noKeys = await Self.get(
            session(PublicKeysTrustEvaluator(keys: [], performDefaultValidation: false)), server)
        guard case .noPublicKeysFound? = reason(noKeys) else { return XCTFail() }
    }

    func testTheDefaultEvaluatorRefusesAChainTheSystemDoesNotTrust() async throws {
        let server = try await tlsServer()
        let response = await Self.get(session(DefaultTrustEvaluator()), server)
        guard case let .defaultEvaluationFailed(output)? = reason(response) else {
            return XCTFail("\(String(describing: response.error))")
        }
        XCTAssertEqual(output.host, "127.0.0.1")
        XCTAssertNotNil(output.error)
    }

    func testAPinnedLeafOrIntermediateIsTheChainsAnchorWithAcceptSelfSigned() async throws {
        // As in Alamofire, the pins become the only anchors: a pinned leaf, or the private CA that issued it, is
        // enough although no root anyone trusts stands above it (the handshake alone refused both).
        let server = try await tlsServer()
        for pin in [certificates.leaf, certificates.intermediate] {
            let evaluator = PinnedCertificatesTrustEvaluator(
                certificates: [pin.certificate], acceptSelfSignedCertificates: true)
            XCTAssertFalse(
                evaluator.requiresTrustedChain, "the handshake cannot anchor at a certificate not self-signed")
            let response = await Self.get(session(evaluator), server, "/bytes/100?seed=5")
            XCTAssertNil(response.error, "pinned \(pin.certificate.subject): \(String(describing: response.error))")
            XCTAssertEqual(response.value, SeededBytes.bytes(seed: 5, offset: 0, count: 100))
        }
        let mixed = PinnedCertificatesTrustEvaluator(
            certificates: [certificates.root.certificate, certificates.leaf.certificate],
            acceptSelfSignedCertificates: true)
        let mixedResponse = await Self.get(session(mixed), server)
        XCTAssertNil(mixedResponse.error, String(describing: mixedResponse.error))
    }

    func testAChainAnchoredAtAPinStillHasItsDatesItsNameAndItsPinChecked() async throws {
        let other = try TestCertificates()
        let elsewhere = await Self.get(
            session(
                PinnedCertificatesTrustEvaluator(
                    certificates: [other.intermediate.certificate], acceptSelfSignedCertificates: true)),
            try await tlsServer())
        guard case let .defaultEvaluationFailed(output)? = reason(elsewhere) else {
            return XCTFail("\(String(describing: elsewhere.error))")
        }
        XCTAssertEqual(output.host, "127.0.0.1")
        XCTAssertEqual(output.trust?.leafCertificate, certificates.leaf.certificate)
        XCTAssertNotNil(output.error as? ChainVerificationError)

        let expired = await Self.get(
            session(
                PinnedCertificatesTrustEvaluator(
                    certificates: [certificates.expiredLeaf.certificate], acceptSelfSignedCertificates: true)),
            try await tlsServer(presenting: certificates.expiredLeaf))
        guard case let .defaultEvaluationFailed(expiredOutput)? = reason(expired) else {
            return XCTFail("\(String(describing: expired.error))")
        }
        let why = try XCTUnwrap(expiredOutput.error as? ChainVerificationError)
        XCTAssertFalse(why.reasons.isEmpty, "a pinned leaf past its notAfter is not trusted")

        let wrongName = await Self.get(
            session(
                PinnedCertificatesTrustEvaluator(
                    certificates: [certificates.wrongNameLeaf.certificate], acceptSelfSignedCertificates: true)),
            try await tlsServer(presenting: certificates.wrongNameLeaf))
        guard case .hostValidationFailed? = reason(wrongName) else {
            return XCTFail("\(String(describing: wrongName.error))")
        }

        let noDefaultValidation = PinnedCertificatesTrustEvaluator(
            certificates: [other.intermediate.certificate], acceptSelfSignedCertificates: true,
            performDefaultValidation: false)
        let unanchored = await Self.get(session(noDefaultValidation), try await tlsServer())
        guard case .certificatePinningFailed? = reason(unanchored) else {
            return XCTFail(
                "without default validation the pins are matched, not anchored: \(String(describing: unanchored.error))"
            )
        }
    }

    func testACertificateForAnotherNameFailsHostValidationUnlessItIsOff() async throws {
        let server = try await tlsServer(presenting: certificates.wrongNameLeaf)
        let root = [certificates.root.certificate]
        let checked = await Self.get(
            session(PinnedCertificatesTrustEvaluator(certificates: root, acceptSelfSignedCertificates: true)), server)
        guard case let .hostValidationFailed(output)? = reason(checked) else {
            return XCTFail("\(String(describing: checked.error))")
        }
        XCTAssertEqual(output.host, "127.0.0.1")
        XCTAssertEqual(output.trust?.leafCertificate, certificates.wrongNameLeaf.certificate)
        let unchecked = await Self.get(
            session(
                PinnedCertificatesTrustEvaluator(
                    certificates: root, acceptSelfSignedCertificates: true,
                    validateHost: false)), server)
        XCTAssertNil(unchecked.error)
    }

    func testLocalhostAndIPv4NamesMatch() async throws {
        let server = try await tlsServer()
        let evaluator = PinnedCertificatesTrustEvaluator(
            certificates: [certificates.root.certificate], acceptSelfSignedCertificates: true)
        let session = Session(serverTrustManager: ServerTrustManager(evaluators: ["localhost": evaluator]))
        let response = await session.request("https://localhost:\(server.port)/get").serializingData().response
        XCTAssertNil(response.error)
    }

    func testAnExpiredLeafFailsTheChainCheck() async throws {
        let server = try await tlsServer(presenting: certificates.expiredLeaf)
        let evaluator = PinnedCertificatesTrustEvaluator(
            certificates: [certificates.root.certificate], acceptSelfSignedCertificates: true)
        let response = await Self.get(session(evaluator), server)
        guard case .defaultEvaluationFailed? = reason(response) else {
            return XCTFail("\(String(describing: response.error))")
        }
    }

    func testASelfSignedLeafPassesWhenPinnedAsSelfSignedOrWhenTrustIsDisabled() async throws {
        let server = try await tlsServer(presenting: certificates.selfSignedLeaf, chain: [])
        let pinned = await Self.get(
            session(
                PinnedCertificatesTrustEvaluator(
                    certificates: [certificates.selfSignedLeaf.certificate],
                    acceptSelfSignedCertificates: true)), server)
        XCTAssertNil(pinned.error)
        let disabled = await Self.get(session(DisabledTrustEvaluator()), server)
        XCTAssertNil(disabled.error)
        let defaulted = await Self.get(session(DefaultTrustEvaluator()), server)
        guard case .defaultEvaluationFailed? = reason(defaulted) else {
            return XCTFail("\(String(describing: defaulted.error))")
        }
    }

    func testAHostWithoutAnEvaluatorFailsWhenEveryHostMustBeEvaluatedButPlainHTTPIsUnaffected() async throws {
        let server = try await tlsServer()
        let manager = ServerTrustManager(evaluators: ["example.invalid": DisabledTrustEvaluator()])
        let session = Session(serverTrustManager: manager)
        let response = await Self.get(session, server)
        guard case let .noRequiredEvaluator(host)? = reason(response) else {
            return XCTFail("\(String(describing: response.error))")
        }
        XCTAssertEqual(host, "127.0.0.1")
        let plain = try await plainServer()
        let plainResponse = await session.request(plain.url("/get")).serializingData().response
        XCTAssertNil(plainResponse.error)
        let optional = await Self.get(
            Session(serverTrustManager: ServerTrustManager(allHostsMustBeEvaluated: false, evaluators: [:])), server)
        XCTAssertEqual(
            optional.error?.urlErrorCode, .secureConnectionFailed, "no evaluator and none required: the system decides")
    }

    func testACustomEvaluatorRunsOffTheEventLoopAndItsErrorIsKept() async throws {
        struct Refused: Error, Equatable {}
        final class Refusing: ServerTrustEvaluating, @unchecked Sendable {
            let onEventLoop = Recorder<Bool>()
            let seen = Recorder<Certificate>()
            let askedOnEventLoop = Recorder<Bool>()
            var requiresTrustedChain: Bool {
                askedOnEventLoop.append(MultiThreadedEventLoopGroup.currentEventLoop != nil)
                return false
            }
            func evaluate(_ trust: ServerTrust, forHost host: String) throws {
                onEventLoop.append(MultiThreadedEventLoopGroup.currentEventLoop != nil)
                if let leaf = trust.leafCertificate { seen.append(leaf) }
                throw Refused()
            }
        }
        let server = try await tlsServer()
        let evaluator = Refusing()
        let response = await Self.get(session(evaluator), server)
        guard case let .customEvaluationFailed(error)? = reason(response) else {
            return XCTFail("\(String(describing: response.error))")
        }
        XCTAssertEqual(error as? Refused, Refused())
        XCTAssertEqual(evaluator.onEventLoop.values, [false])
        XCTAssertFalse(evaluator.askedOnEventLoop.values.isEmpty)
        XCTAssertFalse(
            evaluator.askedOnEventLoop.values.contains(true), "requiresTrustedChain was read on an event loop")
        XCTAssertEqual(evaluator.seen.values, [certificates.leaf.certificate])
    }

    func testACompositeNeedsEveryEvaluator() async throws {
        let server = try await tlsServer()
        let root = PinnedCertificatesTrustEvaluator(
            certificates: [certificates.root.certificate], acceptSelfSignedCertificates: true)
        let other = try TestCertificates()
        let passing = CompositeTrustEvaluator(evaluators: [root, DefaultTrustEvaluator()])
        let passed = await Self.get(session(passing), server)
        XCTAssertNil(passed.error, "the pinned root is the chain's only root, so the default check passes too")
        let failing = CompositeTrustEvaluator(evaluators: [
            root, PublicKeysTrustEvaluator(keys: [other.leaf.certificate.publicKey]),
        ])
        let failed = await Self.get(session(failing), server)
        guard case .publicKeyPinningFailed? = reason(failed) else {
            return XCTFail("\(String(describing: failed.error))")
        }
    }

    func testManyConnectionsRefusedAtOnceFailEveryRequestAndLeaveThePoolWorking() async throws {
        let server = try await tlsServer()
        let other = try TestCertificates()
        let failing = session(
            PinnedCertificatesTrustEvaluator(certificates: [other.leaf.certificate], performDefaultValidation: false))
        for _ in 0..<3 {
            let errors = await withTaskGroup(of: AFError?.self) { group in
                for _ in 0..<40 { group.addTask { await Self.get(failing, server).error } }
                return await group.reduce(into: [AFError?]()) { $0.append($1) }
            }
            XCTAssertEqual(errors.count, 40)
            XCTAssertTrue(errors.allSatisfy { $0?.isServerTrustEvaluationError == true }, "\(errors)")
        }
        let passing = session(
            PinnedCertificatesTrustEvaluator(
                certificates: [certificates.leaf.certificate], performDefaultValidation: false))
        let results = await withTaskGroup(of: Int?.self) { group in
            for _ in 0..<40 { group.addTask { await Self.get(passing, server).response?.statusCode } }
            return await group.reduce(into: [Int?]()) { $0.append($1) }
        }
        XCTAssertEqual(results, Array(repeating: 200, count: 40))
    }
}
