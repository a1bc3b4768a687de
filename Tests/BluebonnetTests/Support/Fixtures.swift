import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Files under `Tests/BluebonnetTests/Fixtures`, and responses made up for serializer unit tests.
enum Fixtures {
    static func data(_ path: String) throws -> Data {
        let url = try XCTUnwrapURL(Bundle.module.resourceURL?.appendingPathComponent("Fixtures/\(path)"))
        return try Data(contentsOf: url)
    }

    static func response(status: Int = 200, contentType: String? = nil) -> HTTPURLResponse {
        var headers: [String: String] = [:]
        if let contentType { headers["Content-Type"] = contentType }
        return HTTPURLResponse(
            url: URL(string: "http://127.0.0.1/fixture")!, statusCode: status, httpVersion: "HTTP/1.1",
            headerFields: headers)!
    }

    static func request(method: String = "GET") -> URLRequest {
        var request = URLRequest(url: URL(string: "http://127.0.0.1/fixture")!)
        request.httpMethod = method
        return request
    }

    struct MissingFixture: Error {}

    private static func XCTUnwrapURL(_ url: URL?) throws -> URL {
        guard let url else { throw MissingFixture() }
        return url
    }
}
