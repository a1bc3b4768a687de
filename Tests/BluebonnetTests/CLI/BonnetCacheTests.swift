import Foundation
import XCTest

/// `bonnet --cache` keeps responses by RFC 9111, and `--offline --cache` answers from them without the network.
extension BonnetCommandTests {
    func testOfflineWithTheCacheAnswersFromItEvenWithTheServerGone() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "bonnet-cache-\(UUID().uuidString)")
        addTeardownBlock { try? FileManager.default.removeItem(at: directory) }
        let environment = ["BONNET_CACHE_DIR": directory.path]
        let target = url("/cacheable/cli?cache_control=max-age=600")
        let first = try await bonnet(["--cache", target], environment: environment)
        XCTAssertEqual(first.status, 0, first.errors)
        XCTAssertTrue(first.output.contains("\"id\" : \"cli\""), first.output)
        let fresh = try await bonnet(["--cache", target], environment: environment)
        XCTAssertEqual(fresh.output, first.output, "served from the cache: the origin's answer count did not move")
        let uncached = try await bonnet([target], environment: environment)
        XCTAssertTrue(uncached.output.contains("\"answer\" : 2"), uncached.output)
        let missing = try await bonnet(["--offline", "--cache", url("/cacheable/other")], environment: environment)
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.errors.contains("in the cache"), missing.errors)
        await server.stop()
        let offline = try await bonnet(["--offline", "--cache", target], environment: environment)
        XCTAssertEqual(offline.status, 0, offline.errors)
        XCTAssertEqual(offline.output, first.output)
        server = nil
    }
}
