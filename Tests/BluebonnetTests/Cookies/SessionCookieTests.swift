@testable import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Cookies through a `Session` against the test server: stored from each hop's `Set-Cookie` fields, sent on each
/// hop by that hop's URL, and governed by the configuration and the request as URLSession governs them.
final class SessionCookieTests: ServerTestCase {
    var storage: HTTPCookieStorage!

    override func setUp() async throws {
        try await super.setUp()
        storage = URLSessionConfiguration.ephemeral.httpCookieStorage
        session = session { $0.httpCookieStorage = storage }
    }

    func cookiesEchoed(_ response: AFDataResponse<Data>) throws -> [String: String] {
        try XCTUnwrap(try json(response.data)["cookies"] as? [String: String])
    }

    func testCookiesSetOnARedirectAreSentOnTheNextHopAndLaterRequests() async throws {
        let response = await session.request(url("/cookies/set?a=1&b=2")).serializingData().response
        XCTAssertEqual(try cookiesEchoed(response), ["a": "1", "b": "2"])
        XCTAssertEqual(response.taskMetrics?.redirectCount, 1)
        let later = await session.request(url("/cookies")).serializingData().response
        XCTAssertEqual(try cookiesEchoed(later), ["a": "1", "b": "2"])
        let deleted = await session.request(url("/cookies/delete?a")).serializingData().response
        XCTAssertEqual(try cookiesEchoed(deleted), ["b": "2"])
        XCTAssertEqual(storage.cookies?.map(\.name), ["b"])
    }

    func testEverySetCookieFieldIsReadApartEvenWithCommasInDates() async throws {
        let query = [
            "Set-Cookie=one%3D1%3B%20Expires%3DWed%2C%2009%20Jun%202100%2010%3A18%3A14%20GMT",
            "Set-Cookie=two%3D2%3B%20Path%3D%2F",
            "Set-Cookie=three%3D3%3B%20Max-Age%3D60%3B%20HttpOnly",
        ].joined(separator: "&")
        let response = await session.request(url("/response-headers?\(query)")).serializingData().response
        XCTAssertEqual(response.response?.statusCode, 200)
        XCTAssertEqual(Set(storage.cookies!.map(\.name)), ["one", "two", "three"])
        let one = try XCTUnwrap(storage.cookies?.first { $0.name == "one" })
        // 2100 is past the 400 days a cookie may live.
        let expires = try XCTUnwrap(one.expiresDate)
        XCTAssertEqual(expires.timeIntervalSinceNow, CookieJar.maximumLifetime, accuracy: 60)
        let echoed = await session.request(url("/cookies")).serializingData().response
        XCTAssertEqual(try cookiesEchoed(echoed), ["one": "1", "two": "2", "three": "3"])
    }

    func testCookiesAreStoredBeforeTheCompletionHandlerRuns() async throws {
        let expectation = expectation(description: "done")
        let seen = Recorder<Int>()
        session.request(url("/response-headers?Set-Cookie=token%3Dx")).response(queue: .global()) { [storage] _ in
            seen.append(storage?.cookies?.count ?? -1)
            expectation.fulfill()
        }
        await fulfillment(of: [expectation], timeout: 30)
        XCTAssertEqual(seen.values, [1])
    }

    func testACookieOfOneHostIsNotSentToAnotherAfterARedirect() async throws {
        _ = await session.request(url("/cookies/set?mine=1")).serializingData().response
        let other = server.url("/cookies").absoluteString.replacingOccurrences(of: "127.0.0.1", with: "localhost")
        let escaped = other.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let response = await session.request(url("/redirect-to?url=\(escaped)")).serializingData().response
        XCTAssertEqual(response.response?.url?.host, "localhost")
        XCTAssertEqual(try cookiesEchoed(response), [:])
    }

    func testTheRequestsOwnCookieHeaderWinsOverTheJar() async throws {
        _ = await session.request(url("/cookies/set?jar=1")).serializingData().response
        let response = await session.request(url("/cookies"), headers: ["Cookie": "own=2"]).serializingData().response
        XCTAssertEqual(try cookiesEchoed(response), ["own": "2"])
    }

    func testHTTPShouldSetCookiesFalseSendsNoneButStillStores() async throws {
        storage.setCookie(HTTPCookie(properties: [.name: "pre", .value: "1", .domain: "127.0.0.1", .path: "/"])!)
        let quiet = session {
            $0.httpCookieStorage = storage; $0.httpShouldSetCookies = false
        }
        let response = await quiet.request(url("/cookies/set?new=1")).serializingData().response
        XCTAssertEqual(try cookiesEchoed(response), [:])
        XCTAssertEqual(Set(storage.cookies!.map(\.name)), ["pre", "new"])
    }

    func testTheNeverAcceptPolicyStoresNothingButSendsWhatIsThere() async throws {
        storage.setCookie(HTTPCookie(properties: [.name: "pre", .value: "1", .domain: "127.0.0.1", .path: "/"])!)
        let closed = session {
            $0.httpCookieStorage = storage; $0.httpCookieAcceptPolicy = .never
        }
        let response = await closed.request(url("/cookies/set?new=1")).serializingData().response
        XCTAssertEqual(try cookiesEchoed(response), ["pre": "1"])
        XCTAssertEqual(storage.cookies?.map(\.name), ["pre"])
    }

    func testARequestThatDoesNotHandleCookiesNeitherSendsNorStoresThem() async throws {
        storage.setCookie(HTTPCookie(properties: [.name: "pre", .value: "1", .domain: "127.0.0.1", .path: "/"])!)
        var request = URLRequest(url: server.url("/cookies/set?new=1"))
        request.httpShouldHandleCookies = false
        let response = await session.request(request).serializingData().response
        XCTAssertEqual(try cookiesEchoed(response), [:])
        XCTAssertEqual(storage.cookies?.map(\.name), ["pre"])
    }

    func testNoStorageMeansNoCookies() async throws {
        let none = session { $0.httpCookieStorage = nil }
        let response = await none.request(url("/cookies/set?a=1")).serializingData().response
        XCTAssertEqual(try cookiesEchoed(response), [:])
    }

    func testCookiesSetWhileAResponseStreamsToAFileAreStoredToo() async throws {
        let destination: DownloadRequest.Destination = { _, _ in
            (
                FileManager.default.temporaryDirectory.appendingPathComponent("cookie-\(UUID().uuidString)"),
                [.removePreviousFile]
            )
        }
        let response = await session.download(url("/response-headers?Set-Cookie=dl%3D1"), to: destination)
            .serializingData().response
        XCTAssertNil(response.error)
        if let file = response.fileURL { try? FileManager.default.removeItem(at: file) }
        XCTAssertEqual(storage.cookies?.map(\.name), ["dl"])
    }
}
