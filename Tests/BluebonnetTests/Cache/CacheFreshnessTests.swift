@testable import Bluebonnet
import Foundation
import XCTest

/// RFC 9111's directives and arithmetic: `Cache-Control` parsing, freshness lifetimes and ages.
final class CacheFreshnessTests: XCTestCase {
    func entry(_ headers: [String: String], status: Int = 200, requestTime: Double, responseTime: Double) -> CacheEntry
    {
        CacheEntry(
            key: "GET http://example.com/", url: URL(string: "http://example.com/")!, statusCode: status,
            headers: headers.map { [$0.key, $0.value] }, protocolName: "http/1.1", varyValues: [:],
            requestTime: requestTime, responseTime: responseTime, bodyLength: 0)
    }

    func http(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    func testCacheControlDirectivesAreReadTolerantly() {
        let control = CacheControl(
            #"Public, MAX-AGE=60, no-cache="Set-Cookie, X", s-maxage=5, max-stale, min-fresh=x, private"#)
        XCTAssertEqual(control.maxAge, 60)
        XCTAssertTrue(control.isPublic)
        XCTAssertTrue(control.isPrivate)
        XCTAssertTrue(control.noCache, "a field-named no-cache is taken as plain no-cache: stricter, never wrong")
        XCTAssertEqual(control.sharedMaxAge, 5)
        XCTAssertEqual(control.maxStale, .max)
        XCTAssertNil(control.minFresh)
        XCTAssertEqual(CacheControl("max-age=99999999999999999999").maxAge, Int(Int32.max))
        XCTAssertNil(CacheControl("max-age=-1").maxAge)
        XCTAssertNil(CacheControl("max-age=\"\"").maxAge)
        XCTAssertTrue(CacheControl(nil, pragma: "no-cache").noCache)
        XCTAssertFalse(CacheControl("max-age=1", pragma: "no-cache").noCache, "Cache-Control prevails over Pragma")
        XCTAssertTrue(CacheControl("no-store,must-revalidate").noStore)
        XCTAssertTrue(CacheControl("no-store,must-revalidate").mustRevalidate)
    }

    func testMaxAgePrevailsOverExpiresAndExpiresCountsFromDate() {
        let now = Date().timeIntervalSince1970.rounded()
        let date = Date(timeIntervalSince1970: now - 100)
        XCTAssertEqual(
            CacheFreshness.lifetime(
                of: entry(
                    ["Cache-Control": "max-age=30", "Expires": http(date.addingTimeInterval(500))],
                    requestTime: now, responseTime: now)), 30)
        XCTAssertEqual(
            CacheFreshness.lifetime(
                of: entry(
                    ["Date": http(date), "Expires": http(date.addingTimeInterval(500))],
                    requestTime: now, responseTime: now)), 500)
        XCTAssertEqual(
            CacheFreshness.lifetime(of: entry(["Expires": "0"], requestTime: now, responseTime: now)), 0,
            "an Expires that does not parse is in the past")
    }

    func testTheHeuristicIsATenthOfTheTimeSinceLastModifiedForCacheableStatusesOnly() {
        let now = Date().timeIntervalSince1970.rounded()
        let headers = [
            "Date": http(Date(timeIntervalSince1970: now)),
            "Last-Modified": http(Date(timeIntervalSince1970: now - 1000)),
        ]
        XCTAssertEqual(CacheFreshness.lifetime(of: entry(headers, requestTime: now, responseTime: now)), 100)
        XCTAssertEqual(CacheFreshness.lifetime(of: entry(headers, status: 302, requestTime: now, responseTime: now)), 0)
        let ancient = ["Last-Modified": http(Date(timeIntervalSince1970: 0))]
        XCTAssertEqual(
            CacheFreshness.lifetime(of: entry(ancient, requestTime: now, responseTime: now)),
            CacheFreshness.maximumHeuristicLifetime)
    }

    func testTheAgeCountsAgeHeaderDelayAndResidence() {
        let now = Date().timeIntervalSince1970.rounded()
        // Received 10 s ago after a 2 s round trip, saying it was already 30 s old.
        let aged = entry(
            ["Age": "30", "Date": http(Date(timeIntervalSince1970: now - 10))], requestTime: now - 12,
            responseTime: now - 10)
        XCTAssertEqual(CacheFreshness.currentAge(of: aged, now: Date(timeIntervalSince1970: now)), 42, accuracy: 0.001)
        // A Date 60 s before receipt (a slow clock or an old response) makes it at least 60 s old.
        let old = entry(["Date": http(Date(timeIntervalSince1970: now - 60))], requestTime: now, responseTime: now)
        XCTAssertEqual(CacheFreshness.currentAge(of: old, now: Date(timeIntervalSince1970: now)), 60, accuracy: 0.001)
        let garbage = entry(["Age": "soon"], requestTime: now, responseTime: now)
        XCTAssertEqual(
            CacheFreshness.currentAge(of: garbage, now: Date(timeIntervalSince1970: now + 5)), 5, accuracy: 0.001)
    }

    func testVariantsMatchOnTheFieldsVaryNames() {
        var stored = entry([:], requestTime: 0, responseTime: 0)
        stored.varyValues = CacheEntry.varyValues(["accept-language", "x-absent"], in: [("Accept-Language", "en, fr")])
        XCTAssertTrue(stored.matches([("accept-language", "en,fr")]), "whitespace around commas does not count")
        XCTAssertFalse(stored.matches([("Accept-Language", "fr")]))
        XCTAssertFalse(
            stored.matches([("Accept-Language", "en, fr"), ("X-Absent", "1")]), "a field absent then must be absent now"
        )
        XCTAssertEqual(CacheEntry.varyNames("Accept-Encoding, *"), ["accept-encoding", "*"])
    }
}
