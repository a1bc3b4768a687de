import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class RedirectTests: ServerTestCase {
    func redirectTo(_ target: String, status: Int) -> String {
        let escaped = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? target
        return url("/redirect-to?url=\(escaped)&status_code=\(status)")
    }

    func testEveryRedirectCodeIsFollowedForGET() async throws {
        for status in [301, 302, 303, 307, 308] {
            let response = await session.request(redirectTo("/anything/landed", status: status)).serializingData().response
            XCTAssertEqual(response.response?.statusCode, 200, "\(status)")
            let echo = try json(response.data)
            XCTAssertEqual(echo["method"] as? String, "GET", "\(status)")
            XCTAssertEqual(echo["url"] as? String, url("/anything/landed"), "\(status)")
        }
    }

    func testPOSTBecomesGETWithoutBodyOn301302And303() async throws {
        for status in [301, 302, 303] {
            let response = await session.request(redirectTo("/anything", status: status), method: .post,
                                                 parameters: ["k": "v"], encoding: JSONEncoding.default)
                .serializingData().response
            let echo = try json(response.data)
            XCTAssertEqual(echo["method"] as? String, "GET", "\(status)")
            XCTAssertEqual(echo["data"] as? String, "", "\(status)")
            XCTAssertNil((echo["headers"] as? [String: String])?["Content-Type"], "\(status)")
        }
    }

    func testPOSTKeepsMethodAndBodyOn307And308() async throws {
        for status in [307, 308] {
            let response = await session.request(redirectTo("/anything", status: status), method: .post,
                                                 parameters: ["k": "v"], encoding: JSONEncoding.default)
                .serializingData().response
            let echo = try json(response.data)
            XCTAssertEqual(echo["method"] as? String, "POST", "\(status)")
            XCTAssertEqual(echo["json"] as? [String: String], ["k": "v"], "\(status)")
        }
    }

    func testSixteenRedirectsAreFollowedAndTheSeventeenthFails() async {
        let ok = await session.request(url("/redirect/16")).serializingData().response
        XCTAssertEqual(ok.response?.statusCode, 200)
        let tooMany = await session.request(url("/redirect/17")).serializingData().response
        guard case .redirectFailed(.tooManyRedirects(limit: 16)) = tooMany.error else {
            return XCTFail("\(String(describing: tooMany.error))")
        }
    }

    func testARedirectorLimitIsHonoured() async {
        let request = session.request(url("/redirect/3")).redirect(using: Redirector(behavior: .follow, maximumRedirects: 2))
        let response = await request.serializingData().response
        guard case .redirectFailed(.tooManyRedirects(limit: 2)) = response.error else {
            return XCTFail("\(String(describing: response.error))")
        }
        XCTAssertEqual(request.redirectCount, 2)
    }

    func testDoNotFollowDeliversTheRedirectResponse() async {
        let response = await session.request(url("/redirect/1")).redirect(using: .doNotFollow).serializingData(emptyResponseCodes: [302]).response
        XCTAssertEqual(response.response?.statusCode, 302)
        XCTAssertEqual(response.response?.value(forHTTPHeaderField: "Location"), "/get")
    }

    func testSessionWideRedirectHandlerApplies() async {
        let session = Session(redirectHandler: Redirector.doNotFollow)
        let response = await session.request(url("/redirect/1")).serializingResponse().response
        XCTAssertEqual(response.response?.statusCode, 302)
    }

    func testModifyingRedirectorCanChangeTheNextRequest() async throws {
        let modifier = Redirector.modify { _, request, _ in
            var request = request
            request.setValue("added", forHTTPHeaderField: "X-Hop")
            return request
        }
        let data = try await session.request(redirectTo("/headers", status: 302)).redirect(using: modifier).serializingData().value
        XCTAssertEqual((try json(data)["headers"] as? [String: String])?["X-Hop"], "added")
    }

    func testCredentialsAreDroppedWhenTheRedirectLeavesTheOrigin() async throws {
        let otherOrigin = "http://localhost:\(server.port)/headers"
        let data = try await session.request(redirectTo(otherOrigin, status: 302),
                                             headers: [.authorization(bearerToken: "secret"), HTTPHeader(name: "Cookie", value: "a=b")])
            .serializingData().value
        let headers = try XCTUnwrap(try json(data)["headers"] as? [String: String])
        XCTAssertNil(headers["Authorization"])
        XCTAssertNil(headers["Cookie"])
        XCTAssertEqual(headers["Host"], "localhost:\(server.port)")
    }

    func testCredentialsAreKeptOnASameOriginRedirect() async throws {
        let data = try await session.request(redirectTo("/headers", status: 302), headers: [.authorization(bearerToken: "secret")])
            .serializingData().value
        XCTAssertEqual((try json(data)["headers"] as? [String: String])?["Authorization"], "Bearer secret")
    }

    func testRedirectToANonHTTPSchemeIsRefused() async {
        let response = await session.request(redirectTo("file:///etc/passwd", status: 302)).serializingData().response
        guard case .redirectFailed(.unsupportedScheme) = response.error else {
            return XCTFail("\(String(describing: response.error))")
        }
    }

    func testAbsoluteAndRelativeChainsBothArrive() async {
        for path in ["/absolute-redirect/3", "/relative-redirect/3", "/redirect/3?absolute=true"] {
            let request = session.request(url(path))
            let response = await request.serializingData().response
            XCTAssertEqual(response.response?.statusCode, 200, path)
            XCTAssertEqual(request.requests.count, 4, path)
            XCTAssertEqual(request.firstRequest?.url?.absoluteString, url(path))
            XCTAssertEqual(response.request?.url?.path, "/get", path)
        }
    }
}
