@testable import Bluebonnet
import BluebonnetTestServer
import Foundation
import NIOCore
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Issue 44 (1): a connection-level HTTP/2 error closes the connection and fails its requests at once. swift-nio-http2
/// refused a header block of endless `CONTINUATION` frames, and a control-frame buffer full of acknowledgements of
/// `SETTINGS` the server never read, but nothing closed the connection: it kept buffering what followed (past 384 MiB
/// in 2.5 s), and the request waited for its idle timeout. Over real sockets, against `HTTP2FaultServer`, a raw
/// HTTP/2 peer over TLS.
final class HTTP2ConnectionGuardTests: TLSServerTestCase {
    /// What the peer writes at most: then it closes (`CONTINUATION`) or goes silent (`SETTINGS`).
    static let peerLimit = 64 << 20
    /// What the peer may have written before the client closed: what the client read up to the error (a few KiB of
    /// header block, then the rest of that read) and what the two kernels' buffers hold on loopback (a few MiB on a
    /// connection this young), with room to spare; a quarter of `peerLimit`.
    static let bytesBeforeTheClose: Int64 = 16 << 20

    private var peer: HTTP2FaultServer?

    override func tearDown() async throws {
        await peer?.stop()
        peer = nil
        try await super.tearDown()
    }

    private func start(_ fault: HTTP2FaultServer.Fault) async throws -> HTTP2FaultServer {
        let tls = try certificates.serverConfiguration(
            presenting: certificates.leaf, chain: [certificates.intermediate])
        let server = try await HTTP2FaultServer.start(tls: tls, fault: fault)
        peer = server
        return server
    }

    /// A session that trusts the test hierarchy, whose idle timeout (an hour) is never what ends a request here.
    private func makeSession() -> Session {
        let configuration = URLSessionConfiguration.af.default
        configuration.timeoutIntervalForRequest = 3600
        return Session(
            configuration: configuration, tls: TLSSettings(trustRoots: .adding([certificates.root.certificate])))
    }

    /// `request`'s response, or `nil` when 30 s passed first: a hang guard only (the request is then cancelled).
    private static func response(of request: DataRequest) async -> AFDataResponse<Data>? {
        await withTaskGroup(of: AFDataResponse<Data>?.self) { group in
            group.addTask { await request.serializingData().response }
            group.addTask {
                try? await Task.sleep(nanoseconds: 30_000_000_000)
                return nil
            }
            let first = await group.next() ?? nil
            group.cancelAll()
            request.cancel()
            return first
        }
    }

    private static func assertConnectionLost(
        _ response: AFDataResponse<Data>?, file: StaticString = #filePath, line: UInt = #line
    ) {
        guard let response else {
            return XCTFail(
                "the request was still waiting after 30 s: the connection stayed open", file: file, line: line)
        }
        XCTAssertNil(response.response, "no response head", file: file, line: line)
        XCTAssertEqual(
            response.error?.urlErrorCode, .networkConnectionLost, "\(String(describing: response.error))", file: file,
            line: line)
    }

    func testEndlessContinuationFramesCloseTheConnectionAfterLittleWasSent() async throws {
        let server = try await start(.endlessContinuation(limit: Self.peerLimit))
        let session = makeSession()
        let response = await Self.response(of: session.request(server.url("/")))
        Self.assertConnectionLost(response)
        XCTAssertEqual(server.requestsReceived, 1, "the request went over HTTP/2")
        let closed = await server.closedConnections()
        XCTAssertTrue(closed, "the peer saw the connection close")
        // Before, the client read all the peer wrote, and the request ended only when the peer closed at its limit.
        XCTAssertLessThan(server.bytesSent, Self.bytesBeforeTheClose, "bytes the peer wrote before the client closed")
    }

    func testASettingsFloodWhoseAcknowledgementsAreNeverReadFailsTheRequestAtOnce() async throws {
        let server = try await start(.settingsFlood(limit: Self.peerLimit))
        let session = makeSession()
        // Before, the request waited for its idle timeout, here an hour: the hang guard ended it.
        let response = await Self.response(of: session.request(server.url("/")))
        Self.assertConnectionLost(response)
        XCTAssertEqual(server.requestsReceived, 1, "the request went over HTTP/2")
        let closed = await server.closedConnections()
        XCTAssertTrue(closed, "the peer saw the connection close")
    }

    /// The guard follows every frame the client writes and lets a healthy connection be: request bodies in `DATA`
    /// frames full of bytes that read as a `GOAWAY` with an error, and requests one after the other.
    func testAHealthyConnectionCarriesBodiesThatLookLikeAGoAway() async throws {
        let server = try await tlsServer(http2: true)
        let session = makeSession()
        // A GOAWAY on the connection with PROTOCOL_ERROR, 17 bytes, again and again.
        let lookalike: [UInt8] = [0, 0, 8, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
        let body = Data([[UInt8]](repeating: lookalike, count: 8192).joined())
        for _ in 0..<3 {
            let request = session.upload(body, to: server.url("/post"))
            guard let response = await Self.response(of: request) else {
                return XCTFail("the upload was still waiting after 30 s")
            }
            XCTAssertNil(response.error)
            XCTAssertEqual(response.response?.statusCode, 200)
            XCTAssertEqual(response.taskMetrics?.transactionMetrics.last?.networkProtocolName, "h2")
        }
    }
}

/// The frame follower of `HTTP2ConnectionGuard`, fed bytes as swift-nio-http2 writes them and cut anywhere.
final class HTTP2OutboundFramesTests: XCTestCase {
    private static func frame(type: UInt8, streamID: UInt32 = 0, payload: [UInt8] = []) -> [UInt8] {
        var bytes: [UInt8] = []
        for shift: UInt32 in [16, 8, 0] { bytes.append(UInt8(truncatingIfNeeded: UInt32(payload.count) >> shift)) }
        bytes += [type, 0]
        for shift: UInt32 in [24, 16, 8, 0] { bytes.append(UInt8(truncatingIfNeeded: streamID >> shift)) }
        return bytes + payload
    }

    private static func goAway(errorCode: UInt8, streamID: UInt32 = 0) -> [UInt8] {
        frame(type: 7, streamID: streamID, payload: [0x7F, 0xFF, 0xFF, 0xFF, 0, 0, 0, errorCode] + Array("why".utf8))
    }

    /// Whether any of `writes` was reported as completing a `GOAWAY` for an error, in order.
    private static func reports(_ writes: [[UInt8]]) -> [Bool] {
        var frames = HTTP2OutboundFrames()
        return writes.map { frames.scan(ByteBuffer(bytes: $0).readableBytesView) }
    }

    func testAGoAwayWithAnErrorIsSeenWhereverTheBytesAreCut() {
        let before = Self.frame(type: 4) + Self.frame(type: 8, payload: [0, 1, 0, 0])
        let stream = before + Self.goAway(errorCode: 1)
        for cut in 0...stream.count {
            let seen = Self.reports([Array(stream[..<cut]), Array(stream[cut...])])
            XCTAssertEqual(seen.filter { $0 }.count, 1, "cut at \(cut)")
            // Reported by the write that brings the error code's last byte.
            XCTAssertEqual(seen[0], cut >= before.count + 9 + 8, "cut at \(cut)")
        }
        XCTAssertEqual(Self.reports(stream.map { [$0] }).filter { $0 }.count, 1, "a byte a write")
    }

    func testAGracefulGoAwayOrOneOnAStreamIsNotAnError() {
        XCTAssertEqual(Self.reports([Self.goAway(errorCode: 0)]), [false])
        XCTAssertEqual(Self.reports([Self.goAway(errorCode: 1, streamID: 3)]), [false])
        XCTAssertEqual(Self.reports([Self.frame(type: 7, payload: [0, 0, 0, 0, 0, 0])]), [false], "too short")
    }

    func testPayloadsAreSkippedWhateverTheyHold() {
        let lookalike = Self.goAway(errorCode: 1)
        let data = Self.frame(type: 0, streamID: 1, payload: lookalike + lookalike)
        // swift-nio-http2 writes a DATA frame's header and its payload separately.
        XCTAssertEqual(
            Self.reports([Array(data[..<9]), Array(data[9...]), Self.goAway(errorCode: 2)]), [false, false, true])
        XCTAssertEqual(Self.reports([data + Self.goAway(errorCode: 11)]), [true], "several frames in one write")
    }

    func testBytesThatCannotBeReadWhereAHeaderIsLoseTheThread() {
        var frames = HTTP2OutboundFrames()
        let header = Self.frame(type: 0, streamID: 1, payload: [UInt8](repeating: 0, count: 100))
        XCTAssertFalse(frames.scan(ByteBuffer(bytes: header[..<9]).readableBytesView))
        frames.skip(100)
        XCTAssertFalse(frames.isLost, "a payload read elsewhere")
        frames.skip(20)
        XCTAssertTrue(frames.isLost)
        XCTAssertFalse(frames.scan(ByteBuffer(bytes: Self.goAway(errorCode: 1)).readableBytesView))
    }
}
