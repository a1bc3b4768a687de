@testable import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class UploadRequestTests: ServerTestCase {
    private struct Drained: Decodable, Equatable {
        let bytes: Int
        let crc32: Int
        let method: String
    }

    // MARK: - Bodies

    func testUploadDataSendsTheBytesAsTheBody() async throws {
        let echo = try json(
            try await session.upload(
                Data("hello upload".utf8), to: url("/post"),
                headers: ["Content-Type": "text/plain"]
            ).serializingData().value)
        XCTAssertEqual(echo["data"] as? String, "hello upload")
        XCTAssertEqual((echo["headers"] as? [String: String])?["Content-Length"], "12")
    }

    func testUploadLargeDataIsStreamedInChunksAndArrivesIntact() async throws {
        let payload = patternedData(count: 3_000_000)
        let drained = try await session.upload(payload, to: url("/drain"), method: .put).serializingDecodable(
            Drained.self
        ).value
        XCTAssertEqual(drained, Drained(bytes: payload.count, crc32: DrainRoute.checksum(payload), method: "PUT"))
    }

    func testUploadFileStreamsItFromDisk() async throws {
        let directory = try TemporaryDirectory()
        let payload = patternedData(count: 5_000_001)
        let fileURL = try directory.file("payload.bin", contents: payload)
        let drained = try await session.upload(fileURL, to: url("/drain")).serializingDecodable(Drained.self).value
        XCTAssertEqual(drained, Drained(bytes: payload.count, crc32: DrainRoute.checksum(payload), method: "POST"))
    }

    func testUploadEmptyFileSendsAnEmptyBody() async throws {
        let directory = try TemporaryDirectory()
        let fileURL = try directory.file("empty.bin", contents: Data())
        let drained = try await session.upload(fileURL, to: url("/drain")).serializingDecodable(Drained.self).value
        XCTAssertEqual(drained.bytes, 0)
    }

    func testUploadStreamUsesChunkedTransferEncoding() async throws {
        let payload = patternedData(count: 700_000)
        let drained = try await session.upload(InputStream(data: payload), to: url("/drain")).serializingDecodable(
            Drained.self
        ).value
        XCTAssertEqual(drained, Drained(bytes: payload.count, crc32: DrainRoute.checksum(payload), method: "POST"))
        let headers =
            try json(
                try await session.upload(InputStream(data: Data("abc".utf8)), to: url("/post")).serializingData().value)[
                "headers"] as? [String: String]
        XCTAssertEqual(headers?["Transfer-Encoding"], "chunked")
        XCTAssertNil(headers?["Content-Length"])
    }

    func testUploadWithURLRequestConvertibleKeepsItsMethodAndHeaders() async throws {
        var request = try URLRequest(url: url("/put"), method: .put, headers: ["Content-Type": "application/json"])
        request.setValue("yes", forHTTPHeaderField: "X-Custom")
        let echo = try json(try await session.upload(Data(#"{"a":1}"#.utf8), with: request).serializingData().value)
        XCTAssertEqual((echo["json"] as? [String: Int])?["a"], 1)
        XCTAssertEqual((echo["headers"] as? [String: String])?["X-Custom"], "yes")
    }

    func testUploadWaitsForResumeWhenTheSessionDoesNotStartRequestsImmediately() async throws {
        let session = Session(startRequestsImmediately: false)
        let request = session.upload(Data("later".utf8), to: url("/post"), headers: ["Content-Type": "text/plain"])
        let task = request.serializingData()
        session.drain()
        XCTAssertNil(request.response, "nothing is sent before resume()")
        XCTAssertTrue(server.arrivals.targets.isEmpty, "nothing is sent before resume()")
        XCTAssertEqual(request.state, .initialized)
        request.resume()
        let data = try await task.value
        XCTAssertEqual(try json(data)["data"] as? String, "later")
    }

    func testUploadableIsAvailableOnceCreated() async throws {
        let request = session.upload(Data("x".utf8), to: url("/post"))
        _ = await request.serializingData().response
        guard case let .data(data)? = request.uploadable else {
            return XCTFail("\(String(describing: request.uploadable))")
        }
        XCTAssertEqual(data, Data("x".utf8))
    }

    // MARK: - Errors

    /// As URLSession's upload task from a file it cannot read: the request is adapted and its task made, then the task
    /// fails with `URLError.fileDoesNotExist` (Alamofire's `testThatSessionCallsRequestAdaptersWhenCreatingUploadRequestWithFile`),
    /// and nothing is sent.
    func testMissingFileIsAdaptedAndFailsItsTaskWithFileDoesNotExist() async throws {
        let missing = URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString).bin")
        let adapted = Protected(0)
        let adapter = Adapter { request, _, completion in
            adapted.write { $0 += 1 }
            completion(.success(request))
        }
        let request = session.upload(missing, to: url("/drain"), interceptor: Interceptor(adapters: [adapter]))
        let response = await request.serializingData().response
        guard case let .sessionTaskFailed(error)? = response.error else {
            return XCTFail("\(String(describing: response.error))")
        }
        XCTAssertEqual((error as? URLError)?.code, .fileDoesNotExist, "\(error)")
        XCTAssertTrue(error.localizedDescription.contains(missing.path), error.localizedDescription)
        XCTAssertEqual(adapted.read(), 1, "the request is adapted before its task fails")
        XCTAssertNotNil(request.task, "the request has its task, as URLSession's upload task from a file")
        XCTAssertNil(response.response, "nothing may be sent")
        guard case .file(missing, shouldRemove: false)? = request.uploadable else {
            return XCTFail("\(String(describing: request.uploadable))")
        }
    }

    func testAFolderOrAnUnreadableFileFailsItsTaskAsURLSessionWould() async throws {
        let folder = FileManager.default.temporaryDirectory
        let response = await session.upload(folder, to: url("/drain")).serializingData().response
        guard case let .sessionTaskFailed(error)? = response.error else {
            return XCTFail("\(String(describing: response.error))")
        }
        XCTAssertEqual((error as? URLError)?.code, .fileIsDirectory, "\(error)")
        XCTAssertNil(response.response, "nothing may be sent")
    }

    func testUnreadableStreamFailsTheUpload() async throws {
        let stream = try XCTUnwrap(InputStream(url: URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString)")))
        let response = await session.upload(stream, to: url("/drain")).serializingData().response
        guard case .createUploadableFailed? = response.error else {
            return XCTFail("\(String(describing: response.error))")
        }
    }

    func testMultipartErrorSurfacesAsTheRequestError() async throws {
        let response = await session.upload(
            multipartFormData: { form in
                form.append(URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString).png"), withName: "file")
            }, to: url("/post")
        ).serializingData().response
        switch response.error {
        case .multipartEncodingFailed(reason: .bodyPartFileNotReachable)?,
            .multipartEncodingFailed(reason: .bodyPartFileNotReachableWithError)?:
            break
        default:
            XCTFail("\(String(describing: response.error))")
        }
    }

    func testStreamBodyCannotBeReplayedForATemporaryRedirect() async throws {
        let target = "\(url("/redirect-to"))?url=/post&status_code=307"
        let response = await session.upload(InputStream(data: Data("once".utf8)), to: target).serializingData().response
        XCTAssertEqual(response.error?.urlErrorCode, .requestBodyStreamExhausted)
    }

    // MARK: - Redirects

    func testTemporaryRedirectSendsTheBodyAgain() async throws {
        let directory = try TemporaryDirectory()
        let fileURL = try directory.file("again.txt", contents: Data("same body".utf8))
        for status in [307, 308] {
            let target = "\(url("/redirect-to"))?url=/post&status_code=\(status)"
            let echo = try json(try await session.upload(fileURL, to: target).serializingData().value)
            XCTAssertEqual(echo["data"] as? String, "same body", "\(status)")
        }
    }

    func testSeeOtherRedirectDropsTheBodyAndBecomesGET() async throws {
        let target = "\(url("/redirect-to"))?url=/get&status_code=303"
        let request = session.upload(Data("dropped".utf8), to: target)
        let response = await request.serializingData().response
        XCTAssertEqual(response.response?.statusCode, 200)
        XCTAssertEqual(request.lastRequest?.httpMethod, "GET")
    }

    // MARK: - Multipart

    func testMultipartFormArrivesAsFieldsAndFiles() async throws {
        let directory = try TemporaryDirectory()
        let fileURL = try directory.file("notes.txt", contents: Data("file contents".utf8))
        let echo = try json(
            try await session.upload(
                multipartFormData: { form in
                    form.append(Data("bluebonnet".utf8), withName: "flower")
                    form.append(fileURL, withName: "notes")
                    form.append(
                        Data([0x89, 0x50, 0x4E, 0x47, 0xFF]), withName: "image", fileName: "i.png",
                        mimeType: "image/png")
                }, to: url("/post")
            ).serializingData().value)
        XCTAssertEqual(echo["form"] as? [String: String], ["flower": "bluebonnet"])
        let files = try XCTUnwrap(echo["files"] as? [String: String])
        XCTAssertEqual(files["notes"], "file contents")
        XCTAssertEqual(files["image"], "data:image/png;base64,iVBOR/8=")
        let contentType = try XCTUnwrap((echo["headers"] as? [String: String])?["Content-Type"])
        XCTAssertTrue(contentType.hasPrefix("multipart/form-data; boundary=bluebonnet.boundary"), contentType)
    }

    func testMultipartValueFormUsesTheFormsBoundaryAndReplacesContentType() async throws {
        let form = MultipartFormData(boundary: "fixed-boundary")
        form.append(Data("v".utf8), withName: "k")
        let echo = try json(
            try await session.upload(
                multipartFormData: form, to: url("/put"), method: .put,
                headers: ["Content-Type": "text/plain"]
            ).serializingData().value)
        XCTAssertEqual(
            (echo["headers"] as? [String: String])?["Content-Type"], "multipart/form-data; boundary=fixed-boundary")
        XCTAssertEqual(echo["form"] as? [String: String], ["k": "v"])
    }

    func testMultipartAboveThresholdGoesThroughATemporaryFileThatIsRemoved() async throws {
        let before = Set(multipartTemporaryFiles())
        let payload = patternedData(count: 2_000_000)
        let request = session.upload(
            multipartFormData: { form in
                form.append(payload, withName: "blob", fileName: "blob.bin", mimeType: "application/octet-stream")
            }, to: url("/drain"), usingThreshold: 1_000_000)
        let drained = try await request.serializingDecodable(Drained.self).value
        guard case let .file(fileURL, shouldRemove)? = request.uploadable else {
            return XCTFail("\(String(describing: request.uploadable))")
        }
        XCTAssertTrue(shouldRemove)
        XCTAssertFalse(FileManager.default.fileExists(atPath: fileURL.path), "the temporary file must be gone")
        XCTAssertEqual(Set(multipartTemporaryFiles()), before)
        XCTAssertGreaterThan(drained.bytes, payload.count)
    }

    func testMultipartBelowThresholdIsEncodedInMemory() async throws {
        let request = session.upload(
            multipartFormData: { $0.append(Data("small".utf8), withName: "s") }, to: url("/post"))
        _ = try await request.serializingData().value
        guard case .data? = request.uploadable else { return XCTFail("\(String(describing: request.uploadable))") }
    }

    func testTemporaryFileIsRemovedWhenTheUploadFails() async throws {
        let before = Set(multipartTemporaryFiles())
        let session = session(configuring: { _ in })
        let request = session.upload(
            multipartFormData: { form in
                form.append(
                    patternedData(count: 200_000), withName: "blob", fileName: "b.bin",
                    mimeType: "application/octet-stream")
            }, to: "http://127.0.0.1:1/refused", usingThreshold: 0)
        let response = await request.serializingData().response
        XCTAssertNotNil(response.error)
        guard case let .file(fileURL, _)? = request.uploadable else { return XCTFail() }
        XCTAssertFalse(FileManager.default.fileExists(atPath: fileURL.path))
        XCTAssertEqual(Set(multipartTemporaryFiles()), before)
    }

    func testTemporaryFileIsRemovedWhenTheUploadIsCancelled() async throws {
        let before = Set(multipartTemporaryFiles())
        let started = expectation(description: "upload started")
        let request = session.upload(
            multipartFormData: { form in
                form.append(
                    patternedData(count: 20_000_000), withName: "blob", fileName: "b.bin",
                    mimeType: "application/octet-stream")
            }, to: url("/drain"), usingThreshold: 0)
        let fulfilled = Protected(false)
        request.uploadProgress(queue: .global()) { progress in
            if progress.completedUnitCount > 0, mutateOnce(fulfilled) { started.fulfill() }
        }
        request.resume()
        await fulfillment(of: [started], timeout: 30)
        request.cancel()
        let response = await request.serializingData().response
        XCTAssertEqual(response.error?.isExplicitlyCancelledError, true)
        guard case let .file(fileURL, _)? = request.uploadable else { return XCTFail() }
        XCTAssertFalse(FileManager.default.fileExists(atPath: fileURL.path))
        XCTAssertEqual(Set(multipartTemporaryFiles()), before)
    }

    func testSuspendingAnUploadPausesItsBodyUntilResumed() async throws {
        let payload = patternedData(count: 64_000_000)
        let started = expectation(description: "upload started")
        let fired = Protected(false)
        let request = session.upload(payload, to: url("/drain")).uploadProgress(queue: .global()) { progress in
            if progress.completedUnitCount > 0, mutateOnce(fired) { started.fulfill() }
        }
        request.resume()
        await fulfillment(of: [started], timeout: 30)
        request.suspend()
        let atSuspend = request.uploadProgress.completedUnitCount
        // The pause under test: a body that went on would send megabytes in it.
        try await Task.sleep(nanoseconds: 500_000_000)
        let paused = request.uploadProgress.completedUnitCount
        // What was past the gate when it was suspended (the chunk being written, the next one read) may still go out
        // and be counted, and nothing after it: a count of bytes, which holds however slow the machine.
        let sent = paused - atSuspend
        XCTAssertLessThanOrEqual(sent, Int64(4 * AHCBodyStreamer.chunkSize), "\(sent) bytes sent while suspended")
        XCTAssertLessThan(paused, Int64(payload.count))
        request.resume()
        let drained = try await request.serializingDecodable(Drained.self).value
        XCTAssertEqual(drained.bytes, payload.count)
        XCTAssertEqual(drained.crc32, DrainRoute.checksum(payload))
    }

    // MARK: - Progress

    func testUploadProgressIsMonotonicAndEndsAtExactlyOne() async throws {
        let payload = patternedData(count: 4_000_000)
        let fractions = Recorder<Double>()
        let totals = Recorder<Int64>()
        // A serial queue: handlers on a concurrent one may run, and record, out of order.
        let request = session.upload(payload, to: url("/drain")).uploadProgress(queue: DispatchQueue(label: "progress"))
        { progress in
            fractions.append(progress.fractionCompleted)
            totals.append(progress.totalUnitCount)
        }
        _ = try await request.serializingData().value
        try await waitUntil { fractions.values.last == 1.0 }
        let values = fractions.values
        XCTAssertGreaterThan(values.count, 2, "a 4 MB body reports more than once")
        XCTAssertEqual(values, values.sorted())
        XCTAssertEqual(Set(totals.values), [Int64(payload.count)])
        XCTAssertEqual(request.uploadProgress.completedUnitCount, Int64(payload.count))
    }

    func testUploadProgressOfAStreamOfUnknownLengthEndsAtOne() async throws {
        let request = session.upload(InputStream(data: patternedData(count: 600_000)), to: url("/drain"))
        _ = try await request.serializingData().value
        XCTAssertEqual(request.uploadProgress.totalUnitCount, 600_000)
        XCTAssertEqual(request.uploadProgress.fractionCompleted, 1.0)
    }

    func testDownloadProgressEndsAtOneAndCountsTheBody() async throws {
        let fractions = Recorder<Double>()
        let request = session.request(url("/bytes/500000"))
            .downloadProgress(queue: DispatchQueue(label: "progress")) { fractions.append($0.fractionCompleted) }
        let data = try await request.serializingData().value
        try await waitUntil { fractions.values.last == 1.0 }
        XCTAssertEqual(fractions.values, fractions.values.sorted())
        XCTAssertEqual(request.downloadProgress.completedUnitCount, Int64(data.count))
        XCTAssertEqual(request.downloadProgress.totalUnitCount, 500_000)
    }

    func testDownloadProgressOfAChunkedBodyEndsAtOne() async throws {
        let request = session.request(url("/chunked/20000"))
        let data = try await request.serializingData().value
        XCTAssertEqual(data.count, 20000)
        XCTAssertEqual(request.downloadProgress.fractionCompleted, 1.0)
    }

    func testProgressHandlersOfBodiesOfUnknownLengthAreCalledPerChunkOnlyAsInAlamofire() async throws {
        let queue = DispatchQueue(label: "progress")
        let downloads = Recorder<Int64>()
        let uploads = Recorder<Int64>()
        let request = session.upload(InputStream(data: patternedData(count: 300_000)), to: url("/drain"))
            .uploadProgress(queue: queue) { uploads.append($0.totalUnitCount) }
        _ = try await request.serializingData().value
        let chunked = session.request(url("/chunked/20000"))
            .downloadProgress(queue: queue) { downloads.append($0.totalUnitCount) }
        _ = try await chunked.serializingData().value
        queue.sync {}
        // Every call came with a chunk, while the length was still unknown: none after the end to report it.
        XCTAssertFalse(downloads.values.isEmpty)
        XCTAssertEqual(Set(downloads.values), [-1], "\(downloads.values)")
        XCTAssertFalse(uploads.values.isEmpty)
        XCTAssertEqual(Set(uploads.values), [-1], "\(uploads.values)")
        XCTAssertEqual(request.uploadProgress.fractionCompleted, 1.0, "the property still reads complete")
    }

    func testOnURLRequestCreationSeesTheUploadsRequest() async throws {
        let seen = Recorder<String>()
        let request = session.upload(Data("x".utf8), to: url("/post"))
            .onURLRequestCreation(on: .global()) { seen.append($0.httpMethod ?? "") }
        _ = try await request.serializingData().value
        try await waitUntil { !seen.values.isEmpty }
        XCTAssertEqual(seen.values, ["POST"])
    }

    func testCompletionHandlerAPIWorksForUploads() throws {
        let done = expectation(description: "response")
        let echoed = Recorder<String>()
        session.upload(Data("handler".utf8), to: url("/post"), headers: ["Content-Type": "text/plain"])
            .validate()
            .responseData(queue: .global()) { response in
                if let data = response.value,
                    let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
                {
                    echoed.append(object["data"] as? String ?? "")
                }
                done.fulfill()
            }
        wait(for: [done], timeout: 30)
        XCTAssertEqual(echoed.values, ["handler"])
    }
}

/// Returns `true` the first time it is called for `flag`.
func mutateOnce(_ flag: Protected<Bool>) -> Bool {
    flag.write { value in
        defer { value = true }
        return !value
    }
}

/// Polls `condition` until it holds (handlers on other queues may still be running), failing after 30 seconds: a
/// hang guard, not a bound on how long they take.
func waitUntil(_ condition: @Sendable () -> Bool, file: StaticString = #filePath, line: UInt = #line) async throws {
    for _ in 0..<3000 {
        if condition() { return }
        try await Task.sleep(nanoseconds: 10_000_000)
    }
    XCTFail("condition never held", file: file, line: line)
}
