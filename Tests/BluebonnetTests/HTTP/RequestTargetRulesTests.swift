@testable import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The target rules on their own: which URLs the engine may be handed, and what a `Location` resolves to.
final class RequestTargetRulesTests: XCTestCase {
    func problem(_ string: String) -> RequestTarget.Problem? {
        guard let url = URL(string: string) else { return .invalidHost }
        return RequestTarget.problem(with: url)
    }

    func testPortBoundaries() {
        XCTAssertNil(problem("http://127.0.0.1:0/"))
        XCTAssertNil(problem("http://127.0.0.1:65535/"))
        XCTAssertNil(problem("https://example.com/"))
        XCTAssertEqual(problem("http://127.0.0.1:65536/"), .invalidPort)
        XCTAssertEqual(problem("http://localhost:131072/"), .invalidPort)
        XCTAssertEqual(problem("http://[::1]:99999/"), .invalidPort)
    }

    func testHostsWithControlBytesOrSpacesAreRefusedEscapedOrNot() {
        XCTAssertEqual(problem("http://%00/"), .invalidHost)
        XCTAssertEqual(problem("http://a%0D%0Ab/"), .invalidHost)
        XCTAssertEqual(problem("http://exa%20mple.com/"), .invalidHost)
        XCTAssertNil(problem("http://xn--bcher-kva.example/"))
        XCTAssertNil(problem("http://[::1]:8080/"))
    }

    func testSchemes() {
        XCTAssertNil(problem("HTTPS://example.com/"))
        XCTAssertEqual(problem("ftp://example.com/"), .unsupportedScheme)
        XCTAssertEqual(problem("file:///etc/passwd"), .unsupportedScheme)
    }

    func redirect(_ location: String, from start: String = "http://example.com:8080/a/b") -> Result<
        URLRequest, AFError
    >? {
        var request = URLRequest(url: URL(string: start)!)
        request.setValue("Bearer t", forHTTPHeaderField: "Authorization")
        let response = HTTPURLResponse(
            url: request.url!, statusCode: 302, httpVersion: "HTTP/1.1",
            headerFields: ["Location": location])!
        return RedirectRules.redirectedRequest(from: request, response: response)
    }

    func testLocationResolution() throws {
        guard case let .success(relative)? = redirect("../c?d=1") else { return XCTFail() }
        XCTAssertEqual(relative.url?.absoluteString, "http://example.com:8080/c?d=1")
        XCTAssertEqual(relative.value(forHTTPHeaderField: "Authorization"), "Bearer t")

        guard case let .success(schemeRelative)? = redirect("//other.example/x") else { return XCTFail() }
        XCTAssertEqual(schemeRelative.url?.absoluteString, "http://other.example/x")
        XCTAssertNil(schemeRelative.value(forHTTPHeaderField: "Authorization"))

        guard case let .success(otherPort)? = redirect("http://example.com:8081/") else { return XCTFail() }
        XCTAssertNil(otherPort.value(forHTTPHeaderField: "Authorization"), "another port is another origin")
    }

    func testBadLocations() {
        guard case .failure(.redirectFailed(.invalidPort))? = redirect("http://example.com:70000/") else {
            return XCTFail()
        }
        guard case .failure(.redirectFailed(.invalidHost))? = redirect("http://%00/") else { return XCTFail() }
        guard case .failure(.redirectFailed(.unsupportedScheme))? = redirect("gopher://example.com/") else {
            return XCTFail()
        }
        XCTAssertNil(redirect(""), "an empty Location is no redirect: the 3xx is the response")
    }
}
