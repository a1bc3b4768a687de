import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `Session.session`, as Alamofire code reads it: `AF.session.configuration.httpCookieStorage`, `.urlCache`, headers.
final class SessionURLSessionTests: ServerTestCase {
    func testTheURLSessionCarriesThisSessionsConfigurationObjects() async throws {
        let storage = try XCTUnwrap(URLSessionConfiguration.ephemeral.httpCookieStorage)
        let cache = Session.HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 0)
        let configuration = URLSessionConfiguration.af.default
        configuration.httpCookieStorage = storage
        configuration.urlCache = cache
        let session = Session(configuration: configuration)
        configuration.httpCookieStorage = nil
        XCTAssertTrue(session.session === session.session)
        XCTAssertTrue(
            session.session.configuration.httpCookieStorage === storage,
            "a later change to the caller's copy changes nothing")
        XCTAssertTrue(session.session.configuration.urlCache === cache)
        XCTAssertEqual(
            session.session.configuration.headers.value(for: "User-Agent"), HTTPHeaders.default.value(for: "User-Agent")
        )
        // What Alamofire's tests do: the response the session stored, read back through `session.session`.
        let request = session.request(url("/cacheable/x?cache_control=max-age=60"))
        _ = await request.serializingData().response
        let stored = session.session.configuration.urlCache?.cachedResponse(for: try XCTUnwrap(request.request))
        XCTAssertNotNil(stored)
        XCTAssertEqual(session.session.configuration.httpCookieStorage?.cookies?.count, 0)
    }
}
