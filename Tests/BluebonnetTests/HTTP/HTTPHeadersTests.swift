@testable import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class HTTPHeadersTests: XCTestCase {
    func testNamesAreCaseInsensitiveAndOrderIsKept() {
        var headers: HTTPHeaders = ["B": "1", "a": "2"]
        headers.update(name: "b", value: "3")
        XCTAssertEqual(headers.map(\.name), ["b", "a"])
        XCTAssertEqual(headers["B"], "3")
        headers["A"] = nil
        XCTAssertEqual(headers.count, 1)
        XCTAssertEqual(headers.sorted().dictionary, ["b": "3"])
    }

    func testDefaultHeadersDescribeTheEngineAndTheProcess() {
        let headers = HTTPHeaders.default
        XCTAssertEqual(headers["Accept-Encoding"], "br;q=1.0, zstd;q=0.9, gzip;q=0.8, deflate;q=0.7")
        let agent = headers["User-Agent"] ?? ""
        XCTAssertTrue(agent.hasSuffix(") Bluebonnet/\(bluebonnetVersion)"), agent)
        XCTAssertTrue(agent.contains("; Linux ") || agent.contains("; macOS "), agent)
        // Alamofire's layout: the executable always has a version, `Unknown` when its bundle does not say.
        let executable = URL(fileURLWithPath: CommandLine.arguments.first ?? "").lastPathComponent
        XCTAssertTrue(agent.hasPrefix("\(executable)/"), agent)
        XCTAssertTrue(agent.contains("; build:"), agent)
        XCTAssertNotNil(headers["Accept-Language"])
    }

    func testAcceptLanguageFallsBackToPOSIXVariables() {
        XCTAssertEqual(
            ProcessLocale.preferredLanguages(foundation: [], environment: ["LANG": "de_DE.UTF-8"]), ["de-DE"])
        XCTAssertEqual(ProcessLocale.preferredLanguages(foundation: [], environment: ["LC_ALL": "C"]), ["en"])
        XCTAssertEqual(ProcessLocale.preferredLanguages(foundation: [], environment: [:]), ["en"])
        XCTAssertEqual(
            ProcessLocale.preferredLanguages(foundation: ["fr-FR", "en"], environment: [:]), ["fr-FR", "en"])
        XCTAssertEqual(["fr", "en"].qualityEncoded(), "fr;q=1.0, en;q=0.9")
    }

    func testAuthorizationHelpersEncodeCredentials() {
        XCTAssertEqual(HTTPHeader.authorization(username: "user", password: "pass").value, "Basic dXNlcjpwYXNz")
        XCTAssertEqual(HTTPHeader.authorization(bearerToken: "t").value, "Bearer t")
    }

    func testURLRequestBridges() throws {
        var request = try URLRequest(url: "http://example.com", method: .patch, headers: ["X": "1"])
        XCTAssertEqual(request.method, .patch)
        XCTAssertEqual(request.headers["x"], "1")
        request.headers = ["Y": "2"]
        XCTAssertEqual(request.value(forHTTPHeaderField: "Y"), "2")
        XCTAssertThrowsError(try URLRequest(url: "", method: .get))
    }

    func testHeaderValidatorAcceptsTokensAndRefusesInjection() {
        XCTAssertTrue(HeaderValidator.isValidName("X-Custom_Header.1"))
        XCTAssertFalse(HeaderValidator.isValidName(""))
        XCTAssertFalse(HeaderValidator.isValidName("Bad Name"))
        XCTAssertTrue(HeaderValidator.isValidValue("text/html; q=0.9, \"quoted\""))
        XCTAssertFalse(HeaderValidator.isValidValue("a\r\nb"))
    }
}
