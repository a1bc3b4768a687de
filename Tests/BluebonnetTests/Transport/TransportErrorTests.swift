import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class TransportErrorTests: ServerTestCase {
    func testRequestTimeoutFromTheConfigurationFailsWithTimedOut() async {
        let session = session { $0.timeoutIntervalForRequest = 0.5 }
        let start = Date()
        let response = await session.request(url("/delay/3")).serializingData().response
        XCTAssertLessThan(Date().timeIntervalSince(start), 2.5)
        XCTAssertEqual(response.error?.isSessionTaskError, true, "\(String(describing: response.error))")
        XCTAssertEqual(response.error?.urlErrorCode, .timedOut)
    }

    func testPerRequestTimeoutIntervalIsHonoured() async {
        let start = Date()
        let response = await session.request(url("/delay/3")) { $0.timeoutInterval = 0.5 }.serializingData().response
        XCTAssertLessThan(Date().timeIntervalSince(start), 2.5)
        XCTAssertEqual(response.error?.urlErrorCode, .timedOut, "\(String(describing: response.error))")
    }

    func testIdleTimeoutDoesNotFireWhileBytesKeepArriving() async {
        let response = await session.request(url("/drip?duration=1.2&numbytes=6")) { $0.timeoutInterval = 0.6 }
            .serializingData().response
        XCTAssertEqual(response.value, Data("******".utf8), "\(String(describing: response.error))")
    }

    func testResourceTimeoutBoundsTheWholeRequest() async {
        let session = session { $0.timeoutIntervalForResource = 1 }
        let start = Date()
        // Bytes arrive every 0.5 s, so only the whole-request deadline can stop it.
        let response = await session.request(url("/drip?duration=4&numbytes=8")).serializingData().response
        XCTAssertLessThan(Date().timeIntervalSince(start), 2.5)
        XCTAssertEqual(response.error?.urlErrorCode, .timedOut, "\(String(describing: response.error))")
    }

    func testRefusedConnectionFailsWithCannotConnectToHost() async throws {
        let closed = try await TestServer.start()
        let port = closed.port
        await closed.stop()
        let start = Date()
        let response = await session.request("http://127.0.0.1:\(port)/get").serializingData().response
        XCTAssertLessThan(Date().timeIntervalSince(start), 5)
        XCTAssertEqual(response.error?.urlErrorCode, .cannotConnectToHost, "\(String(describing: response.error))")
        XCTAssertNotNil((response.error?.underlyingError as? URLError)?.userInfo[NSUnderlyingErrorKey])
        XCTAssertTrue(
            response.error?.localizedDescription.contains("Could not connect to the server.") == true,
            response.error?.localizedDescription ?? "")
    }

    func testUnknownHostFailsWithCannotFindHost() async {
        let response = await session.request("http://bluebonnet-no-such-host.invalid/get").serializingData().response
        XCTAssertEqual(response.error?.urlErrorCode, .cannotFindHost, "\(String(describing: response.error))")
    }

    func testTruncatedBodyFailsWithConnectionLost() async {
        let response = await session.request(url("/truncated/2000")).serializingData().response
        XCTAssertEqual(response.error?.isSessionTaskError, true, "\(String(describing: response.error))")
        XCTAssertEqual(response.error?.urlErrorCode, .networkConnectionLost, "\(String(describing: response.error))")
    }

    func testChunkedBodyArrivesWhole() async throws {
        let data = try await session.request(url("/chunked/5000")).serializingData().value
        XCTAssertEqual(data.count, 5000)
        XCTAssertEqual(data[4999], UInt8(truncatingIfNeeded: 4999))
    }

    func testLargeBodyArrivesWhole() async throws {
        let data = try await session.request(url("/bytes/3000000?seed=7")).serializingData().value
        XCTAssertEqual(data.count, 3_000_000)
        let again = try await session.request(url("/bytes/3000000?seed=7")).serializingData().value
        XCTAssertEqual(data, again)
    }
}
