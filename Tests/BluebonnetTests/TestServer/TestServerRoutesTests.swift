import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Pins the test server's httpbin-compatible shapes, which every other suite relies on.
final class TestServerRoutesTests: ServerTestCase {
    func testEchoRoutesReportMethodOriginAndUserAgent() async throws {
        for method in [HTTPMethod.put, .patch, .delete] {
            let echo = try json(
                try await session.request(url("/\(method.rawValue.lowercased())"), method: method).serializingData()
                    .value)
            XCTAssertEqual(echo["origin"] as? String, "127.0.0.1", method.rawValue)
        }
        let wrongMethod = await session.request(url("/post")).serializingData().response
        XCTAssertEqual(wrongMethod.response?.statusCode, 405)
        let ip = try json(try await session.request(url("/ip")).serializingData().value)
        XCTAssertEqual(ip["origin"] as? String, "127.0.0.1")
        let agent = try json(
            try await session.request(url("/user-agent"), headers: [.userAgent("probe/1")]).serializingData().value)
        XCTAssertEqual(agent["user-agent"] as? String, "probe/1")
    }

    func testFormAndMultipartBodiesAreParsed() async throws {
        let form = try json(
            try await session.request(url("/post"), method: .post, parameters: ["a": "1 2", "b": ["x", "y"]])
                .serializingData().value)
        XCTAssertEqual((form["form"] as? [String: Any])?["a"] as? String, "1 2")
        XCTAssertEqual((form["form"] as? [String: Any])?["b[]"] as? [String], ["x", "y"])

        var request = URLRequest(url: server.url("/post"))
        request.httpMethod = "POST"
        request.setValue("multipart/form-data; boundary=XyZ", forHTTPHeaderField: "Content-Type")
        request.httpBody = Data(
            "--XyZ\r\nContent-Disposition: form-data; name=\"field\"\r\n\r\nvalue\r\n--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\nContent-Type: text/plain\r\n\r\nhello\r\n--XyZ--\r\n"
                .utf8)
        let multipart = try json(try await session.request(request).serializingData().value)
        XCTAssertEqual(multipart["form"] as? [String: String], ["field": "value"])
        XCTAssertEqual(multipart["files"] as? [String: String], ["file": "hello"])
    }

    func testDocumentsHaveTheirContentTypes() async throws {
        let cases = [
            "/json": "application/json", "/xml": "application/xml", "/html": "text/html; charset=utf-8",
            "/image/png": "image/png", "/image/jpeg": "image/jpeg", "/image/gif": "image/gif",
            "/image/webp": "image/webp",
        ]
        for (path, type) in cases {
            let response = await session.request(url(path)).serializingData().response
            XCTAssertEqual(response.response?.value(forHTTPHeaderField: "Content-Type"), type, path)
            XCTAssertGreaterThan(response.data?.count ?? 0, 20, path)
        }
        let png = try await session.request(url("/image/png")).serializingData().value
        XCTAssertEqual(Array(png.prefix(8)), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        let base64 = try await session.request(url("/base64/SFRUUEJJTiBpcyBhd2Vzb21l")).serializingString().value
        XCTAssertEqual(base64, "HTTPBIN is awesome")
    }

    func testStreamSendsOneJSONObjectPerLine() async throws {
        let text = try await session.request(url("/stream/3")).serializingString().value
        let lines = text.split(separator: "\n")
        XCTAssertEqual(lines.count, 3)
        let last = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(lines[2].utf8)) as? [String: Any])
        XCTAssertEqual(last["id"] as? Int, 2)
    }

    func testRangeHonoursTheRangeHeader() async throws {
        let partial = await session.request(url("/range/26"), headers: ["Range": "bytes=2-5"]).serializingString()
            .response
        XCTAssertEqual(partial.response?.statusCode, 206)
        XCTAssertEqual(partial.value, "cdef")
        XCTAssertEqual(partial.response?.value(forHTTPHeaderField: "Content-Range"), "bytes 2-5/26")
        let unsatisfiable = await session.request(url("/range/26"), headers: ["Range": "bytes=30-"])
            .serializingResponse().response
        XCTAssertEqual(unsatisfiable.response?.statusCode, 416)
    }

    func testBasicAuthCookiesETagAndResponseHeaders() async throws {
        let denied = await session.request(url("/basic-auth/user/pass")).serializingResponse().response
        XCTAssertEqual(denied.response?.statusCode, 401)
        XCTAssertNotNil(denied.response?.value(forHTTPHeaderField: "WWW-Authenticate"))
        let hidden = await session.request(url("/hidden-basic-auth/user/pass")).serializingResponse().response
        XCTAssertEqual(hidden.response?.statusCode, 404)
        let allowed = try json(
            try await session.request(
                url("/basic-auth/user/pass"), headers: [.authorization(username: "user", password: "pass")]
            )
            .serializingData().value)
        XCTAssertEqual(allowed["authenticated"] as? Bool, true)

        let setCookie = await session.request(url("/cookies/set?flavor=pecan")).redirect(using: .doNotFollow)
            .serializingResponse().response
        XCTAssertEqual(setCookie.response?.value(forHTTPHeaderField: "Set-Cookie"), "flavor=pecan; Path=/")
        let jar = try json(
            try await session.request(url("/cookies"), headers: ["Cookie": "a=1; b=2"]).serializingData().value)
        XCTAssertEqual(jar["cookies"] as? [String: String], ["a": "1", "b": "2"])

        let etag = await session.request(url("/etag/abc"), headers: ["If-None-Match": "\"abc\""]).serializingResponse()
            .response
        XCTAssertEqual(etag.response?.statusCode, 304)
        let cached = await session.request(
            url("/cache"), headers: ["If-Modified-Since": "Sat, 01 Jan 2000 00:00:00 GMT"]
        ).serializingResponse().response
        XCTAssertEqual(cached.response?.statusCode, 304)

        let headers = await session.request(url("/response-headers?X-Custom=yes")).serializingData().response
        XCTAssertEqual(headers.response?.value(forHTTPHeaderField: "X-Custom"), "yes")
    }

    func testStatusRedirectCodesPointAtARedirect() async {
        let response = await session.request(url("/status/302")).redirect(using: .doNotFollow).serializingResponse()
            .response
        XCTAssertEqual(response.response?.value(forHTTPHeaderField: "Location"), "/redirect/1")
    }
}
