import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class SessionRequestTests: ServerTestCase {
    func testGETReturnsTheServersJSONWithQueryParameters() async throws {
        let response = await session.request(url("/get"), parameters: ["flower": "bluebonnet", "count": 3])
            .serializingData().response
        XCTAssertEqual(response.response?.statusCode, 200)
        let echo = try json(response.data)
        XCTAssertEqual(echo["args"] as? [String: String], ["flower": "bluebonnet", "count": "3"])
    }

    func testDefaultHeadersReachTheServer() async throws {
        let data = try await session.request(url("/headers")).serializingData().value
        let headers = try XCTUnwrap(try json(data)["headers"] as? [String: String])
        XCTAssertEqual(headers["Accept-Encoding"], "br;q=1.0, zstd;q=0.9, gzip;q=0.8, deflate;q=0.7")
        XCTAssertTrue(
            headers["User-Agent"]?.hasSuffix("Bluebonnet/\(bluebonnetVersion)") == true, headers["User-Agent"] ?? "")
        XCTAssertNotNil(headers["Accept-Language"])
    }

    func testAdvertisedGzipAndDeflateAreDecodedByTheEngine() async throws {
        let gzip = try json(try await session.request(url("/gzip")).serializingData().value)
        XCTAssertEqual(gzip["gzipped"] as? Bool, true)
        let deflate = try json(try await session.request(url("/deflate")).serializingData().value)
        XCTAssertEqual(deflate["deflated"] as? Bool, true)
    }

    func testConfigurationAdditionalHeadersAreSentAndRequestHeadersWin() async throws {
        let session = session {
            $0.headers.add(name: "X-Session", value: "session")
            $0.headers.add(name: "X-Both", value: "session")
        }
        let data = try await session.request(url("/headers"), headers: ["X-Both": "request"]).serializingData().value
        let headers = try XCTUnwrap(try json(data)["headers"] as? [String: String])
        XCTAssertEqual(headers["X-Session"], "session")
        XCTAssertEqual(headers["X-Both"], "request")
    }

    func testPOSTWithJSONEncodingSendsTheBody() async throws {
        let parameters: Parameters = ["name": "Texas", "flowers": ["bluebonnet", "paintbrush"], "state": true]
        let data = try await session.request(
            url("/post"), method: .post, parameters: parameters, encoding: JSONEncoding.default
        )
        .serializingData().value
        let echo = try json(data)
        let sent = try XCTUnwrap(echo["json"] as? [String: Any])
        XCTAssertEqual(sent["name"] as? String, "Texas")
        XCTAssertEqual(sent["flowers"] as? [String], ["bluebonnet", "paintbrush"])
        XCTAssertEqual((echo["headers"] as? [String: String])?["Content-Type"], "application/json")
    }

    func testEncodableParametersUseTheFormEncoderByDefault() async throws {
        struct Query: Encodable, Sendable { let name: String; let tags: [String]; let missing: String? }
        let data = try await session.request(
            url("/get"), parameters: Query(name: "a b&c", tags: ["x", "y"], missing: nil)
        )
        .serializingData().value
        let args = try XCTUnwrap(try json(data)["args"] as? [String: Any])
        XCTAssertEqual(args["name"] as? String, "a b&c")
        XCTAssertEqual(args["tags[]"] as? [String], ["x", "y"])
        XCTAssertNil(args["missing"])
    }

    func testJSONParameterEncoderSendsAnEncodableBody() async throws {
        struct Body: Encodable, Sendable { let id: Int }
        let data = try await session.request(
            url("/post"), method: .post, parameters: Body(id: 7), encoder: JSONParameterEncoder.default
        )
        .serializingData().value
        XCTAssertEqual((try json(data)["json"] as? [String: Int])?["id"], 7)
    }

    func testRequestModifierChangesTheURLRequest() async throws {
        let data = try await session.request(url("/headers")) { $0.setValue("yes", forHTTPHeaderField: "X-Modified") }
            .serializingData().value
        XCTAssertEqual((try json(data)["headers"] as? [String: String])?["X-Modified"], "yes")
    }

    func testEmptyURLStringFailsWithInvalidURL() async {
        let response = await session.request("").serializingData().response
        XCTAssertEqual(response.error?.isInvalidURLError, true, "\(String(describing: response.error))")
        XCTAssertNil(response.response)
    }

    func testMalformedURLStringsFailWithInvalidURL() async {
        for string in ["http://exa mple.com/", "http://[not a url"] {
            let response = await session.request(string).serializingData().response
            XCTAssertEqual(response.error?.isInvalidURLError, true, "\(string): \(String(describing: response.error))")
        }
    }

    func testAURLWithoutSchemeOrHostFailsAsAnUnsupportedURLAsInAlamofire() async {
        // `URL(string:)` accepts each of these; URLSession refuses to load them, and Alamofire reports that.
        for string in ["invalid", "not a url", "/relative/path", "http://", "mailto:a@b.example"] {
            let response = await session.request(string, parameters: ["foo": "bar"]).serializingData().response
            guard case let .sessionTaskFailed(error as URLError)? = response.error else {
                XCTFail("\(string): \(String(describing: response.error))")
                continue
            }
            XCTAssertEqual(error.code, .unsupportedURL, string)
            XCTAssertNotNil(response.request, string)
            XCTAssertNil(response.response, string)
            XCTAssertNotNil(response.taskMetrics, string)
        }
    }

    func testUnsupportedSchemeIsRefusedBeforeSending() async {
        let response = await session.request("ftp://127.0.0.1/file").serializingData().response
        guard case .urlRequestValidationFailed(.unsupportedURLScheme("ftp")) = response.error else {
            return XCTFail("\(String(describing: response.error))")
        }
    }

    func testHeaderValueWithCRLFIsRefusedBeforeAnythingIsSent() async {
        let response = await session.request(url("/headers"), headers: ["X-Evil": "a\r\nInjected: yes"])
            .serializingData().response
        guard case .urlRequestValidationFailed(.invalidHeaderValue(name: "X-Evil")) = response.error else {
            return XCTFail("\(String(describing: response.error))")
        }
        XCTAssertNil(response.response)
    }

    func testASessionHeaderWithCRLFIsRefusedOnEveryRequestThatWouldSendIt() async {
        // The session's headers are checked once when it is made, and still refused on each request that sends them.
        let evil = session(configuring: { $0.headers = ["X-Evil": "a\r\nInjected: yes", "Accept": "*/*"] })
        for _ in 0..<2 {
            let response = await evil.request(url("/headers")).serializingData().response
            guard case .urlRequestValidationFailed(.invalidHeaderValue(name: "X-Evil")) = response.error else {
                return XCTFail("\(String(describing: response.error))")
            }
        }
        // A request that sets the header itself replaces the session's, so nothing bad is sent.
        let replaced = await evil.request(url("/headers"), headers: ["X-Evil": "fine"]).serializingData().response
        XCTAssertEqual(replaced.response?.statusCode, 200, "\(String(describing: replaced.error))")
        // And good session headers do not excuse a bad one of the request's.
        let good = session(configuring: { $0.headers = ["X-Good": "yes"] })
        let own = await good.request(url("/headers"), headers: ["X-Bad": "a\nb"]).serializingData().response
        XCTAssertEqual(own.error?.isURLRequestValidationError, true)
        withExtendedLifetime((evil, good)) {}
    }

    func testHeaderValueWithNULOrBareLFIsRefused() async {
        for value in ["a\u{0}b", "a\nb", "a\rb"] {
            let response = await session.request(url("/headers"), headers: ["X-Bad": value]).serializingData().response
            XCTAssertEqual(response.error?.isURLRequestValidationError, true, "\(value.debugDescription)")
        }
    }

    func testHeaderNameWithSpaceOrColonIsRefused() async {
        for name in ["X Bad", "X:Bad", "X\r\nBad"] {
            let response = await session.request(url("/headers"), headers: [name: "v"]).serializingData().response
            guard case .urlRequestValidationFailed(.invalidHeaderName(name)) = response.error else {
                return XCTFail("\(name.debugDescription): \(String(describing: response.error))")
            }
        }
    }

    func testGETWithBodyIsRefusedAsAlamofireDoes() async {
        var request = URLRequest(url: server.url("/get"))
        request.httpBody = Data("x".utf8)
        let response = await session.request(request).serializingData().response
        guard case .urlRequestValidationFailed(.bodyDataInGETRequest) = response.error else {
            return XCTFail("\(String(describing: response.error))")
        }
    }

    func testTwoHundredConcurrentRequestsOnOneSessionAllSucceed() async {
        let session = self.session!
        let base = url("/get")
        let codes = await withTaskGroup(of: Int?.self) { group in
            for index in 0..<200 {
                group.addTask {
                    await session.request("\(base)?i=\(index)").serializingData().response.response?.statusCode
                }
            }
            var codes: [Int?] = []
            for await code in group { codes.append(code) }
            return codes
        }
        XCTAssertEqual(codes.count, 200)
        XCTAssertEqual(codes.filter { $0 == 200 }.count, 200)
    }

    func testMaximumConnectionsPerHostBoundsParallelism() async {
        let session = session { $0.httpMaximumConnectionsPerHost = 1 }
        let delayed = url("/delay/0.3")
        let start = Date()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<3 { group.addTask { _ = await session.request(delayed).serializingData().response } }
        }
        // One connection serves three 0.3 s requests one after another.
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.85)
    }

    func testDefaultSessionAFWorks() async throws {
        let data = try await AF.request(url("/get")).serializingData().value
        XCTAssertFalse(data.isEmpty)
        XCTAssertTrue(SessionManager.default === AF)
    }
}

final class SessionLifetimeTests: ServerTestCase {
    func testRequestsFailWithSessionDeinitializedWhenTheSessionGoesAway() async throws {
        var owner: Session? = Session()
        let task = owner!.request(url("/delay/10")).serializingData()
        await arrival(of: "/delay/10")
        owner = nil
        let response = await task.response
        XCTAssertEqual(response.error?.isSessionDeinitializedError, true, "\(String(describing: response.error))")
        // The server answers after ten seconds: a request that waited for it would have its response head.
        XCTAssertNil(response.response, "the request waited for the server's answer")
    }

    func testARequestOfASessionReleasedAtOnceFailsInsteadOfHanging() async {
        // The engine refuses work once its session is gone, without telling the request: it used to wait forever.
        let response = await Session().request(url("/get")).serializingData().response
        XCTAssertEqual(response.error?.isSessionDeinitializedError, true, "\(String(describing: response.error))")
    }
}
