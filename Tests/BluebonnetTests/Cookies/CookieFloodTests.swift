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

    /// Proved by what happens and counted, not timed (`BluebonnetBench cookie-flood` measures the time): the storage's
    /// writer is held for the whole flood, so a response, or a plain request beside the flood, that waited for a write
    /// would never end, and a write made on the request path would show in the storage.
    func testAFloodOfCookiesIntoTheSharedStorageNeitherStallsResponsesNorOtherRequests() async throws {
        XCTAssertTrue(PendingCookieWrites.isPersistent(shared))
        let session = self.session { $0.httpCookieStorage = self.shared }
        await shared.af.waitForPendingWrites()
        let writer = PendingCookieWrites.writer(for: shared)
        let callsBefore = writer.storageCallCount
        // Other tests' cookies for this host may be evicted by the flood: each is deleted at most once.
        let heldBefore = (shared.cookies ?? []).count
        let targets = (0..<100).map(floodURL)
        let plain = url("/get")
        let floodStatuses = Recorder<Int>()
        let plainStatuses = Recorder<Int>()
        let floodEnded = Recorder<Bool>()
        let ended = expectation(description: "the flood and the plain requests beside it ended")
        ended.expectedFulfillmentCount = 2
        writer.hold()
        let flood = Task {
            for target in targets {
                let result = await session.request(target).serializingData().response
                floodStatuses.append(result.response?.statusCode ?? 0)
            }
            floodEnded.append(true)
            ended.fulfill()
        }
        // At least one, sent while changes wait for the held writer.
        let bystander = Task {
            repeat {
                let result = await session.request(plain).serializingData().response
                plainStatuses.append(result.response?.statusCode ?? 0)
            } while floodEnded.values.isEmpty
            ended.fulfill()
        }
        // A hang guard only: what is tested is that they end at all while the writer is held.
        await fulfillment(of: [ended], timeout: 60)
        let writtenWhileHeld = (shared.cookies ?? []).filter { $0.name.hasPrefix("flood-") }.count
        writer.release()
        await flood.value
        await bystander.value
        XCTAssertEqual(writtenWhileHeld, 0, "cookies were written on the request path")
        XCTAssertEqual(floodStatuses.values, Array(repeating: 200, count: 100))
        XCTAssertFalse(plainStatuses.values.isEmpty)
        XCTAssertEqual(Set(plainStatuses.values), [200])
        // The jar keeps its bounds, and what requests see is what the storage holds once written.
        let seen = shared.af.cookies(for: server.url("/")).filter { $0.name.hasPrefix("flood-") }
        XCTAssertEqual(seen.count, CookieJar.maximumCookiesPerDomain)
        XCTAssertTrue(seen.contains { $0.name == "flood-99-49" }, "the newest are kept")
        await shared.af.waitForPendingWrites()
        let stored = (shared.cookies ?? []).filter { $0.name.hasPrefix("flood-") }
        XCTAssertEqual(Set(stored.map(\.name)), Set(seen.map(\.name)))
        // The 5,000 cookies stored and 4,820 evicted while the writer waited collapsed into one file rewrite per
        // cookie the jar keeps (and one per older cookie evicted), where a rewrite per change cost about 10,000.
        let rewrites = writer.storageCallCount - callsBefore
        XCTAssertLessThanOrEqual(
            rewrites, CookieJar.maximumCookiesPerDomain + heldBefore, "\(rewrites) rewrites of the file")
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
