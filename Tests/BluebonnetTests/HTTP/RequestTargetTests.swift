import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What is checked before a byte is sent: the URL's port and host, and the method on the request line. A raw-socket
/// `FaultServer` is the witness that nothing reached the network.
final class RequestTargetTests: FaultServerTestCase {
    func testPortsOutsideTheValidRangeFailWithInvalidURLInsteadOfCrashing() async {
        for string in [
            "http://127.0.0.1:65536/", "http://127.0.0.1:99999/x", "http://localhost:99999/",
            "http://localhost:65536/", "https://[::1]:70000/", "http://127.0.0.1:4294967297/",
        ] {
            let response = await session.request(string).serializingData().response
            guard case let .invalidURL(url)? = response.error else {
                XCTFail("\(string): \(String(describing: response.error))")
                continue
            }
            XCTAssertEqual((try? url.asURL())?.absoluteString, string)
            XCTAssertNil(response.response)
        }
    }

    func testAPortThatWouldWrapToALivePortConnectsNowhere() async {
        // 65536 + p narrowed to 16 bits is p: before the check, this reached the fault server.
        let response = await session.request("http://localhost:\(faults.port + 65536)/silent").serializingData()
            .response
        XCTAssertEqual(response.error?.isInvalidURLError, true, "\(String(describing: response.error))")
        XCTAssertEqual(faults.connectionCount, 0)
    }

    func testTheHighestPortIsAccepted() async {
        let response = await session.request("http://127.0.0.1:65535/").serializingData().response
        XCTAssertEqual(response.error?.isSessionTaskError, true, "\(String(describing: response.error))")
    }

    func testAMethodWithCRLFIsRefusedAndNothingIsSent() async {
        let smuggled = HTTPMethod(rawValue: "GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b")
        let response = await session.request(faults.url("/silent"), method: smuggled).serializingData().response
        guard case let .urlRequestValidationFailed(.invalidHTTPMethod(method))? = response.error else {
            return XCTFail("\(String(describing: response.error))")
        }
        XCTAssertEqual(method, smuggled.rawValue)
        XCTAssertTrue(response.error?.localizedDescription.contains("not an HTTP token") == true)
        XCTAssertEqual(faults.connectionCount, 0)
    }

    func testMethodsThatAreNotTokensAreRefused() async {
        for raw in ["", "GE T", "GET\n", "G\u{0}T", "GÉT", "GET(", "\r\n"] {
            let response = await session.request(faults.url("/silent"), method: HTTPMethod(rawValue: raw))
                .serializingData().response
            guard case .urlRequestValidationFailed(.invalidHTTPMethod(raw))? = response.error else {
                XCTFail("\(raw.debugDescription): \(String(describing: response.error))")
                continue
            }
        }
        XCTAssertEqual(faults.connectionCount, 0)
    }

    func testExtensionMethodsThatAreTokensGoOnTheRequestLineAsTheyAre() async throws {
        for raw in ["PURGE", "M-SEARCH", "X_CUSTOM.1", "propfind"] {
            let response = await session.request(
                faults.url("/content-length?value=5"), method: HTTPMethod(rawValue: raw)
            )
            .serializingData().response
            XCTAssertNil(response.error, "\(raw): \(String(describing: response.error))")
            XCTAssertEqual(
                faults.receivedHeads.last?.hasPrefix("\(raw) /content-length?value=5 HTTP/1.1\r\n"), true,
                faults.receivedHeads.last ?? "")
        }
    }
}
