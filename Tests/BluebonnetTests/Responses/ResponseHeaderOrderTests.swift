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

    func testAResponseMadeElsewhereStillHasItsHeaders() throws {
        let made = try XCTUnwrap(
            HTTPURLResponse(
                url: URL(string: "http://example.com")!, statusCode: 200, httpVersion: nil,
                headerFields: ["B": "2", "A": "1"]))
        XCTAssertEqual(Set(made.headers.map(\.name)), ["A", "B"])
    }
}
