import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `AsyncSequence` views of a request's events: each yields what the closure form would see, then ends with the
/// request.
final class RequestAsyncStreamsTests: ServerTestCase {
    func testDownloadProgressRisesToCompletionThenEnds() async throws {
        let request = session.request(url("/bytes/300000"))
        let serialized = request.serializingData()
        var fractions: [Double] = []
        for await progress in request.downloadProgress() { fractions.append(progress.fractionCompleted) }
        _ = await serialized.response
        XCTAssertFalse(fractions.isEmpty)
        XCTAssertEqual(fractions, fractions.sorted())
        XCTAssertEqual(fractions.last, 1.0)
    }

    func testUploadProgressCountsTheBodySent() async throws {
        let body = Data(repeating: 7, count: 256 * 1024)
        let request = session.upload(body, to: url("/post"))
        var completed: [Int64] = []
        for await progress in request.uploadProgress() { completed.append(progress.completedUnitCount) }
        XCTAssertEqual(completed.last, Int64(body.count))
        XCTAssertEqual(completed, completed.sorted())
    }

    func testURLRequestsYieldsTheFirstRequestAndEachRedirect() async throws {
        let request = session.request(url("/redirect/2"))
        var paths: [String] = []
        for await urlRequest in request.urlRequests() { paths.append(urlRequest.url?.path ?? "") }
        XCTAssertEqual(paths, ["/redirect/2", "/relative-redirect/1", "/get"])
    }

    func testCURLDescriptionsYieldsTheCommand() async throws {
        let request = session.request(url("/get"), headers: ["X-Check": "1"])
        var commands: [String] = []
        for await command in request.cURLDescriptions() { commands.append(command) }
        XCTAssertEqual(commands.count, 1)
        XCTAssertTrue(commands.first?.contains("X-Check: 1") == true, commands.first ?? "")
    }

    func testLeavingTheLoopEarlyDoesNotCancelTheRequest() async throws {
        let request = session.request(url("/bytes/500000"))
        for await _ in request.downloadProgress() { break }
        let response = await request.serializingData().response
        XCTAssertEqual(response.value?.count, 500_000)
    }
}
