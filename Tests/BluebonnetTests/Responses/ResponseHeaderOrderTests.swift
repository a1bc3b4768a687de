import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `HTTPURLResponse.headers` in the order the fields arrived, which FoundationNetworking's dictionary loses.
final class ResponseHeaderOrderTests: ServerTestCase {
    func testAResponsesHeadersKeepTheirOrderAndRepeatedFieldsAreJoined() async throws {
        let response = await session.request(url("/response-headers?Zeta=1&Alpha=2&X-Many=a&X-Many=b&Middle=3"))
            .serializingData().response
        let names = try XCTUnwrap(response.response).headers.map(\.name)
        let ours = names.filter { ["Zeta", "Alpha", "X-Many", "Middle"].contains($0) }
        XCTAssertEqual(ours, ["Zeta", "Alpha", "X-Many", "Middle"])
        XCTAssertEqual(response.response?.headers.value(for: "x-many"), "a, b")
        XCTAssertEqual(response.response?.value(forHTTPHeaderField: "X-Many"), "a, b")
    }

    func testAFieldRepeatedUnderAnotherSpellingIsOneField() async throws {
        let response = await session.request(url("/response-headers?x-twice=a&X-Twice=b")).serializingData().response
        XCTAssertEqual(response.response?.value(forHTTPHeaderField: "X-Twice"), "a, b", "one of the values was lost")
        XCTAssertEqual(response.response?.headers.value(for: "x-twice"), "a, b")
    }

    func testAResponseMadeElsewhereStillHasItsHeaders() throws {
        let made = try XCTUnwrap(
            HTTPURLResponse(
                url: URL(string: "http://example.com")!, statusCode: 200, httpVersion: nil,
                headerFields: ["B": "2", "A": "1"]))
        XCTAssertEqual(Set(made.headers.map(\.name)), ["A", "B"])
    }

    func testTheSuggestedFilenameIsDarwinsNotUnknown() async throws {
        let plain = await session.request(url("/json")).serializingData().response
        XCTAssertEqual(plain.response?.suggestedFilename, "json", "the URL's last path component, as on Darwin")
        let named = await session.request(
            url("/response-headers?Content-Disposition=attachment;%20filename%3D%22report.csv%22")
        ).serializingData().response
        XCTAssertEqual(named.response?.suggestedFilename, "report.csv")
        let root = await session.request(url("/")).serializingData().response
        XCTAssertEqual(root.response?.suggestedFilename, "Unknown", "nothing usable to suggest")
    }
}
