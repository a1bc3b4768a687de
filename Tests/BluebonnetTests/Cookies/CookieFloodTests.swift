@testable import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Issue 24 (3): with the default configuration (`HTTPCookieStorage.shared`), FoundationNetworking rewrites its
/// whole cookie file for every cookie stored, and each response waited for its cookies: 100 responses of 50
/// `Set-Cookie` fields took over 60 s, and every other request of the session stalled behind them.
final class CookieFloodTests: ServerTestCase {
    private let shared = HTTPCookieStorage.shared

    override func tearDown() async throws {
        // The shared storage outlives the test: leave it as it was found.
        await shared.af.waitForPendingWrites()
        for cookie in shared.cookies ?? [] where cookie.name.hasPrefix("flood-") { shared.deleteCookie(cookie) }
        try await super.tearDown()
    }

    private func floodURL(_ response: Int) -> String {
        let fields = (0..<CookieJar.maximumFieldsPerResponse).map { index in
            "Set-Cookie=" + "flood-\(response)-\(index)=v; Max-Age=3600; Path=/".addingPercentEncoding(
                withAllowedCharacters: .alphanumerics)!
        }
        return url("/response-headers?" + fields.joined(separator: "&"))
    }

    func testAFloodOfCookiesIntoTheSharedStorageNeitherStallsResponsesNorOtherRequests() async throws {
        XCTAssertTrue(PendingCookieWrites.isPersistent(shared))
        let session = self.session { $0.httpCookieStorage = self.shared }
        // Other requests of the same session, timed while the flood goes on.
        let latencies = Recorder<TimeInterval>()
        let flooding = Recorder<Bool>()
        flooding.append(true)
        let plain = url("/get")
        let bystander = Task {
            while flooding.values.count == 1 {
                let start = Date()
                _ = await session.request(plain).serializingData().response
                latencies.append(Date().timeIntervalSince(start))
            }
        }
        let start = Date()
        for response in 0..<100 {
            let result = await session.request(floodURL(response)).serializingData().response
            XCTAssertEqual(result.response?.statusCode, 200)
        }
        let elapsed = Date().timeIntervalSince(start)
        flooding.append(false)
        await bystander.value
        // Release builds take well under 2 s (BluebonnetBench cookie-flood); a debug build a few times that.
        XCTAssertLessThan(elapsed, 10, "100 × 50 cookies took \(elapsed) s")
        let slowest = latencies.values.max() ?? 0
        XCTAssertFalse(latencies.values.isEmpty)
        XCTAssertLessThan(slowest, 1, "a plain request took \(slowest) s during the flood")
        // The jar keeps its bounds, and what requests see is what the storage holds once written.
        let seen = shared.af.cookies(for: server.url("/")).filter { $0.name.hasPrefix("flood-") }
        XCTAssertEqual(seen.count, CookieJar.maximumCookiesPerDomain)
        XCTAssertTrue(seen.contains { $0.name == "flood-99-49" }, "the newest are kept")
        await shared.af.waitForPendingWrites()
        let stored = (shared.cookies ?? []).filter { $0.name.hasPrefix("flood-") }
        XCTAssertEqual(Set(stored.map(\.name)), Set(seen.map(\.name)))
        let echoed = await session.request(url("/cookies")).serializingData().response
        XCTAssertEqual(
            (try json(echoed.data)["cookies"] as? [String: String])?.count, CookieJar.maximumCookiesPerDomain)
    }

    func testChangesArriveInTheStorageInTheOrderMadeAndTheLastOneWins() async throws {
        let session = self.session { $0.httpCookieStorage = self.shared }
        for value in ["1", "2", "3"] {
            _ = await session.request(url("/response-headers?Set-Cookie=flood-order%3D\(value)")).serializingData()
                .response
        }
        _ = await session.request(url("/response-headers?Set-Cookie=flood-gone%3D1")).serializingData().response
        _ = await session.request(url("/response-headers?Set-Cookie=flood-gone%3D%3B%20Max-Age%3D0")).serializingData()
            .response
        XCTAssertEqual(
            shared.af.cookies(for: server.url("/")).filter { $0.name.hasPrefix("flood-") }.map(\.value), ["3"])
        await shared.af.waitForPendingWrites()
        XCTAssertEqual(
            (shared.cookies ?? []).filter { $0.name.hasPrefix("flood-") }.map { "\($0.name)=\($0.value)" },
            ["flood-order=3"])
    }

    func testImportingCookiesIsOneBatch() async throws {
        let storage = URLSessionConfiguration.ephemeral.httpCookieStorage!
        let cookies = (0..<5).map {
            CookieJar.makeCookie(
                name: "flood-\($0)", value: "v", domain: "example.com", path: "/",
                expires: Date(timeIntervalSinceNow: 600), secure: false, httpOnly: false)!
        }
        for cookie in cookies { storage.setCookie(cookie) }
        let data = try storage.af.exportedCookies()
        XCTAssertEqual(try shared.af.importCookies(from: data), 5)
        XCTAssertEqual(
            shared.af.cookies(for: URL(string: "http://example.com/")!).filter { $0.name.hasPrefix("flood-") }.count, 5)
        await shared.af.waitForPendingWrites()
        XCTAssertEqual((shared.cookies ?? []).filter { $0.name.hasPrefix("flood-") }.count, 5)
    }
}
