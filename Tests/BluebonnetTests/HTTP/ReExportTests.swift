import Bluebonnet
import XCTest

// This file imports only Bluebonnet and XCTest, as code ported from Alamofire does: it compiles only because
// Bluebonnet re-exports FoundationNetworking.

/// What `import Bluebonnet` brings along.
final class ReExportTests: ServerTestCase {
    func testURLRequestAndHTTPURLResponseNeedOnlyTheLibraryImport() async throws {
        var request = try URLRequest(url: url("/get"), method: .get)
        request.timeoutInterval = 10
        let configuration: URLSessionConfiguration = URLSessionConfiguration.af.default
        XCTAssertGreaterThan(configuration.timeoutIntervalForRequest, 0)
        let response: HTTPURLResponse? = await session.request(request).serializingData().response.response
        XCTAssertEqual(response?.statusCode, 200)
    }
}
