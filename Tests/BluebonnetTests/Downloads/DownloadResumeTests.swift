import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Resume data: made when the network cuts a download short or when asked on cancel, and continued with `Range` and
/// `If-Range` to a file byte-identical to a straight download.
final class DownloadResumeTests: ServerTestCase {
    private var directory: TemporaryDirectory!

    override func setUp() async throws {
        try await super.setUp()
        directory = try TemporaryDirectory()
    }

    override func tearDown() async throws {
        directory = nil
        try await super.tearDown()
    }

    private func destination(_ name: String) -> DownloadRequest.Destination {
        let url = directory.url.appendingPathComponent(name)
        return { _, _ in (url, [.removePreviousFile]) }
    }

    /// The resume data as the documented JSON object.
    private func document(_ data: Data?) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: XCTUnwrap(data)) as? [String: Any])
    }

    /// The same resume data with its URL changed, as a server whose resource changed would have it.
    private func resumeData(_ data: Data?, url newURL: String) throws -> Data {
        var object = try document(data)
        object["url"] = newURL
        return try JSONSerialization.data(withJSONObject: object)
    }

    func testADroppedConnectionLeavesResumeDataAndResumingEndsByteIdentical() async throws {
        let count = 1_000_000
        let chunk = 300_000
        let path = "/download/\(count)?seed=4&drop_after=\(chunk)"
        var response = await session.download(url(path), to: destination("resumed.bin")).serializingDownloadedFileURL()
            .response
        XCTAssertEqual(response.error?.urlErrorCode, .networkConnectionLost)
        var attempts = 1
        var ranges: [String] = []
        while response.error != nil, attempts < 10 {
            let data = try XCTUnwrap(
                response.resumeData, "attempt \(attempts) left no resume data: \(String(describing: response.error))")
            let resumed = session.download(resumingWith: data, to: destination("resumed.bin"))
            response = await resumed.serializingDownloadedFileURL().response
            ranges.append(resumed.request?.value(forHTTPHeaderField: "Range") ?? "none")
            XCTAssertEqual(resumed.request?.value(forHTTPHeaderField: "If-Range"), "\"v1\"")
            attempts += 1
        }
        XCTAssertEqual(attempts, 4, "1,000,000 bytes in 300,000-byte pieces")
        XCTAssertEqual(ranges, ["bytes=300000-", "bytes=600000-", "bytes=900000-"])
        let fileURL = try XCTUnwrap(response.value)
        XCTAssertEqual(try Data(contentsOf: fileURL), SeededBytes.bytes(seed: 4, offset: 0, count: count))
        XCTAssertEqual(response.response?.statusCode, 206)
    }

    func testAResumedDownloadWithTheDefaultDestinationNeverLandsOnAFileNamedAfterItsPartial() async throws {
        // The default destination once took the temporary file's name, and a resumed download's temporary file is
        // its partial: a file left under that name (by an earlier run) made the move fail.
        let first = await session.download(url("/download/3000?seed=18&drop_after=1000")).serializingDownloadedFileURL()
            .response
        let partial = try XCTUnwrap(try document(first.resumeData)["file"] as? String)
        let bystander = FileManager.default.temporaryDirectory
            .appendingPathComponent("Bluebonnet_\(URL(fileURLWithPath: partial).lastPathComponent)")
        try Data("not yours".utf8).write(to: bystander)
        defer { try? FileManager.default.removeItem(at: bystander) }
        let data = try resumeData(first.resumeData, url: url("/download/3000?seed=18"))
        let fileURL = try await session.download(resumingWith: data).serializingDownloadedFileURL().value
        defer { try? FileManager.default.removeItem(at: fileURL) }
        XCTAssertNotEqual(fileURL.standardizedFileURL, bystander.standardizedFileURL)
        XCTAssertEqual(try Data(contentsOf: fileURL), SeededBytes.bytes(seed: 18, offset: 0, count: 3000))
        XCTAssertEqual(try Data(contentsOf: bystander), Data("not yours".utf8))
    }

    func testTheResumeDataIsTheDocumentedVersionedFormat() async throws {
        let response = await session.download(url("/download/1000?seed=2&drop_after=400"), headers: ["X-Trace": "t1"])
            .serializingDownloadedFileURL().response
        let object = try document(response.resumeData)
        XCTAssertEqual(object["version"] as? Int, 2)
        XCTAssertEqual(object["origin"] as? String, "http://127.0.0.1:\(server.port)")
        XCTAssertNotNil(object["inode"] as? Int)
        XCTAssertEqual(object["bytes"] as? Int, 400)
        XCTAssertEqual(object["etag"] as? String, "\"v1\"")
        XCTAssertEqual(object["method"] as? String, "GET")
        XCTAssertTrue((object["url"] as? String)?.hasSuffix("/download/1000?seed=2&drop_after=400") == true)
        XCTAssertTrue((object["headers"] as? [[String]])?.contains(["X-Trace", "t1"]) == true)
        let file = try XCTUnwrap(object["file"] as? String)
        XCTAssertEqual(
            try Data(contentsOf: URL(fileURLWithPath: file)), SeededBytes.bytes(seed: 2, offset: 0, count: 400))
        try? FileManager.default.removeItem(atPath: file)
    }

    func testLastModifiedServesAsTheValidatorWithoutAnETag() async throws {
        let path = "/download/2000?seed=6&etag=none&last_modified=1&drop_after=1500"
        let first = await session.download(url(path)).serializingDownloadedFileURL().response
        XCTAssertEqual(try document(first.resumeData)["lastModified"] as? String, ResumableDownloadRoute.lastModified)
        let data = try resumeData(first.resumeData, url: url("/download/2000?seed=6&etag=none&last_modified=1"))
        let resumed = session.download(resumingWith: data, to: destination("modified.bin"))
        let fileURL = try await resumed.serializingDownloadedFileURL().value
        XCTAssertEqual(resumed.request?.value(forHTTPHeaderField: "If-Range"), ResumableDownloadRoute.lastModified)
        XCTAssertEqual(try Data(contentsOf: fileURL), SeededBytes.bytes(seed: 6, offset: 0, count: 2000))
    }

    func testAChangedValidatorRestartsFromZero() async throws {
        let first = await session.download(url("/download/3000?seed=8&drop_after=1000")).serializingDownloadedFileURL()
            .response
        // The resource changed: the server's tag is now "v2", so `If-Range: "v1"` gets the whole body.
        let data = try resumeData(first.resumeData, url: url("/download/3000?seed=8&etag=v2"))
        let resumed = await session.download(resumingWith: data, to: destination("changed.bin"))
            .serializingDownloadedFileURL().response
        XCTAssertEqual(resumed.response?.statusCode, 200)
        XCTAssertEqual(
            try Data(contentsOf: try XCTUnwrap(resumed.value)), SeededBytes.bytes(seed: 8, offset: 0, count: 3000))
    }

    func testAServerThatIgnoresRangeRestartsFromZero() async throws {
        let first = await session.download(url("/download/3000?seed=10&drop_after=2000")).serializingDownloadedFileURL()
            .response
        let data = try resumeData(first.resumeData, url: url("/download/3000?seed=10&ignore_range=1"))
        let resumed = await session.download(resumingWith: data, to: destination("ignored.bin"))
            .serializingDownloadedFileURL().response
        XCTAssertEqual(resumed.response?.statusCode, 200)
        XCTAssertEqual(
            try Data(contentsOf: try XCTUnwrap(resumed.value)), SeededBytes.bytes(seed: 10, offset: 0, count: 3000))
    }

    func testAPartialResponseThatDoesNotFitTheFileFailsClearlyAndKeepsThePartialFile() async throws {
        let first = await session.download(url("/download/3000?seed=12&drop_after=1000")).serializingDownloadedFileURL()
            .response
        let data = try resumeData(first.resumeData, url: url("/download/3000?seed=12&wrong_range=1"))
        let resumed = await session.download(resumingWith: data, to: destination("wrong.bin"))
            .serializingDownloadedFileURL().response
        guard case let .sessionTaskFailed(error)? = resumed.error,
            case let .contentRangeMismatch(offset, contentRange)? = error as? DownloadResumeError
        else {
            return XCTFail("expected contentRangeMismatch, got \(String(describing: resumed.error))")
        }
        XCTAssertEqual(offset, 1000)
        XCTAssertEqual(contentRange, "bytes 1001-2999/3000")
        let file = try XCTUnwrap(try document(resumed.resumeData)["file"] as? String)
        XCTAssertEqual(
            try Data(contentsOf: URL(fileURLWithPath: file)), SeededBytes.bytes(seed: 12, offset: 0, count: 1000))
        try? FileManager.default.removeItem(atPath: file)
    }

    func testAWeakETagAloneAllowsNoResumeData() async throws {
        let response = await session.download(url("/download/3000?weak=1&drop_after=1000"))
            .serializingDownloadedFileURL().response
        XCTAssertNotNil(response.error)
        XCTAssertNil(response.resumeData)
    }

    func testMalformedResumeDataFailsClearly() async throws {
        let junk = await session.download(resumingWith: Data("not resume data".utf8)).serializingDownloadedFileURL()
            .response
        guard case let .createURLRequestFailed(error)? = junk.error else {
            return XCTFail("\(String(describing: junk.error))")
        }
        XCTAssertEqual(error as? DownloadResumeError, .malformed)

        let future = Data(
            #"{"version":9,"url":"http://x/","etag":"\"a\"","bytes":1,"file":"/nope","method":"GET","headers":[]}"#.utf8
        )
        let newer = await session.download(resumingWith: future).serializingDownloadedFileURL().response
        guard case let .createURLRequestFailed(newerError)? = newer.error else {
            return XCTFail("\(String(describing: newer.error))")
        }
        XCTAssertEqual(newerError as? DownloadResumeError, .unsupportedVersion(9))

        let outside = Data(
            #"{"version":1,"url":"http://x/","etag":"\"a\"","bytes":1,"file":"/nope/gone","method":"GET","headers":[]}"#
                .utf8)
        let refused = await session.download(resumingWith: outside).serializingDownloadedFileURL().response
        guard case let .createURLRequestFailed(refusedError)? = refused.error else {
            return XCTFail("\(String(describing: refused.error))")
        }
        XCTAssertEqual(refusedError as? DownloadResumeError, .untrustedPartialFile(URL(fileURLWithPath: "/nope/gone")))

        let path = FileManager.default.temporaryDirectory.appendingPathComponent("Bluebonnet_\(UUID().uuidString).tmp")
            .path
        let gone = Data(
            #"{"version":1,"url":"http://x/","etag":"\"a\"","bytes":1,"file":"\#(path)","method":"GET","headers":[]}"#
                .utf8)
        let missing = await session.download(resumingWith: gone).serializingDownloadedFileURL().response
        guard case let .createURLRequestFailed(missingError)? = missing.error else {
            return XCTFail("\(String(describing: missing.error))")
        }
        XCTAssertEqual(missingError as? DownloadResumeError, .partialFileMissing(URL(fileURLWithPath: path)))
    }

    func testCancellingWithResumeDataThenResumingEndsByteIdentical() async throws {
        let count = 8 * 1024 * 1024
        let request = session.download(url("/download/\(count)?seed=14"), to: destination("cancelled.bin"))
        let cancelled = expectation(description: "resume data")
        let handed = Recorder<Data?>()
        let calls = Recorder<Int>()
        request.downloadProgress { progress in
            guard progress.completedUnitCount > 0, calls.values.isEmpty else { return }
            calls.append(1)
            request.cancel(byProducingResumeData: { data in
                handed.append(data)
                cancelled.fulfill()
            })
        }
        request.resume()
        await fulfillment(of: [cancelled], timeout: 30)
        let data = try XCTUnwrap(handed.values.first ?? nil)
        XCTAssertEqual(request.resumeData, data)
        XCTAssertTrue(request.isCancelled)
        let resumed = await session.download(resumingWith: data, to: destination("cancelled.bin"))
            .serializingDownloadedFileURL().response
        XCTAssertEqual(resumed.response?.statusCode, 206)
        XCTAssertEqual(
            try Data(contentsOf: try XCTUnwrap(resumed.value)), SeededBytes.bytes(seed: 14, offset: 0, count: count))
    }

    func testAPlainCancelMakesNoResumeDataAndLeavesNoFile() async throws {
        let request = session.download(url("/download/\(8 * 1024 * 1024)?seed=1"), to: destination("plain.bin"))
        request.downloadProgress { progress in
            if progress.completedUnitCount > 0 { request.cancel() }
        }
        let response = await request.serializingDownloadedFileURL().response
        XCTAssertEqual(response.error?.isExplicitlyCancelledError, true)
        XCTAssertNil(response.resumeData)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("plain.bin").path))
    }

    func testARetriedResumeStartsAgainFromTheResumeDataNotFromWhatTheFailedAttemptAppended() async throws {
        let first = await session.download(url("/download/3000?seed=16&drop_after=1000")).serializingDownloadedFileURL()
            .response
        let data = try XCTUnwrap(first.resumeData)
        // The first resumed attempt is cut after appending 1,500 more bytes; the retry sent with the same resume data
        // asks again from byte 1,000, so what the failed attempt appended must go, or bytes are doubled.
        let attempts = Recorder<Int>()
        let interceptor = Interceptor(
            adaptHandler: { request, _, completion in
                attempts.append(1)
                var adapted = request
                if attempts.values.count > 1, let url = request.url,
                    var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
                {
                    components.queryItems = components.queryItems?.filter { $0.name != "drop_after" }
                    adapted.url = components.url
                }
                completion(.success(adapted))
            },
            retryHandler: { request, _, _, completion in
                completion(request.retryCount == 0 ? .retry : .doNotRetry)
            })
        let edited = try resumeData(data, url: url("/download/3000?seed=16&drop_after=1500"))
        let resumed = session.download(resumingWith: edited, interceptor: interceptor, to: destination("retried.bin"))
        let response = await resumed.serializingDownloadedFileURL().response
        XCTAssertEqual(resumed.retryCount, 1)
        XCTAssertEqual(response.response?.statusCode, 206)
        XCTAssertEqual(
            try Data(contentsOf: try XCTUnwrap(response.value)), SeededBytes.bytes(seed: 16, offset: 0, count: 3000))
    }

    // MARK: - The file's size (issue 24: a download to a file had no limit at all)

    private func temporaryPartials() -> Set<String> {
        Set(
            ((try? FileManager.default.contentsOfDirectory(atPath: FileManager.default.temporaryDirectory.path)) ?? [])
                .filter { $0.hasPrefix("Bluebonnet_") && $0.hasSuffix(".tmp") })
    }

    func testADeclaredLengthPastTheFileLimitIsRefusedBeforeAnythingIsWritten() async throws {
        let before = temporaryPartials()
        let response = await session.download(url("/download/100000?seed=30"), to: destination("big.bin"))
            .maximumFileSize(50_000).serializingDownloadedFileURL().response
        guard case let .responseLimitExceeded(reason: .maximumResponseSizeExceeded(limit))? = response.error else {
            return XCTFail("\(String(describing: response.error))")
        }
        XCTAssertEqual(limit, 50_000)
        XCTAssertNil(response.resumeData)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("big.bin").path))
        XCTAssertEqual(temporaryPartials().subtracting(before), [], "no partial file is left")
    }

    func testABodyWithoutALengthFailsWhenItGrowsPastTheLimit() async throws {
        let before = temporaryPartials()
        let response = await session.download(url("/chunked/200000"), to: destination("endless.bin"))
            .maximumFileSize(64 * 1024).serializingDownloadedFileURL().response
        XCTAssertTrue(response.error?.isResponseLimitError == true, "\(String(describing: response.error))")
        XCTAssertNil(response.resumeData)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("endless.bin").path))
        XCTAssertEqual(temporaryPartials().subtracting(before), [])
        // At the limit exactly, the download succeeds.
        let exact = try await session.download(url("/chunked/65536"), to: destination("exact.bin"))
            .maximumFileSize(64 * 1024).serializingDownloadedFileURL().value
        XCTAssertEqual(try Data(contentsOf: exact).count, 65536)
    }

    func testAResumedDownloadCountsTheBytesItHasAgainstTheLimit() async throws {
        let first = await session.download(url("/download/3000?seed=31&drop_after=2000")).serializingDownloadedFileURL()
            .response
        let data = try resumeData(first.resumeData, url: url("/download/3000?seed=31"))
        // 2,000 kept + 1,000 declared = 3,000 > 2,500.
        let refused = await session.download(resumingWith: data, to: destination("r.bin")).maximumFileSize(2500)
            .serializingDownloadedFileURL().response
        XCTAssertTrue(refused.error?.isResponseLimitError == true, "\(String(describing: refused.error))")
    }
}
