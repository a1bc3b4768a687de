import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class TransportErrorTests: ServerTestCase {
    // What ended a request is told by its error, against a server whose own answer is far later than the timeout:
    // a timeout that did not fire would let the answer through. No bound on the time, so a busy machine cannot fail
    // them.

    func testRequestTimeoutFromTheConfigurationFailsWithTimedOut() async {
        let session = session { $0.timeoutIntervalForRequest = 0.5 }
        let response = await session.request(url("/delay/10")).serializingData().response
        XCTAssertEqual(response.error?.isSessionTaskError, true, "\(String(describing: response.error))")
        XCTAssertEqual(response.error?.urlErrorCode, .timedOut)
        XCTAssertNil(response.response, "the server's answer came first")
    }

    func testPerRequestTimeoutIntervalIsHonoured() async {
        let response = await session.request(url("/delay/10")) { $0.timeoutInterval = 0.5 }.serializingData().response
        XCTAssertEqual(response.error?.urlErrorCode, .timedOut, "\(String(describing: response.error))")
        XCTAssertNil(response.response, "the server's answer came first")
    }

    func testIdleTimeoutDoesNotFireWhileBytesKeepArriving() async {
        // Thirty bytes 0.1 s apart outlast the 1.5 s timeout twice over; each gap is a fifteenth of it, so a busy
        // machine that stretches the gaps still does not reach it.
        let response = await session.request(url("/drip?duration=3&numbytes=30")) { $0.timeoutInterval = 1.5 }
            .serializingData().response
        let stars = Data(repeating: UInt8(ascii: "*"), count: 30)
        XCTAssertEqual(response.value, stars, "\(String(describing: response.error))")
    }

    func testResourceTimeoutBoundsTheWholeRequest() async {
        let session = session { $0.timeoutIntervalForResource = 1 }
        // Bytes arrive every 0.5 s for 30 s, so only the whole-request deadline can stop it.
        let response = await session.request(url("/drip?duration=30&numbytes=60")).serializingData().response
        XCTAssertEqual(response.error?.urlErrorCode, .timedOut, "\(String(describing: response.error))")
    }

    func testRefusedConnectionFailsWithCannotConnectToHost() async throws {
        let closed = try await TestServer.start()
        let port = closed.port
        await closed.stop()
        let response = await session.request("http://127.0.0.1:\(port)/get").serializingData().response
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
