import Bluebonnet
import BluebonnetTestServer
import Crypto
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Downloads to a file over a real socket: destinations, options, serializers reading the file, validation.
final class DownloadRequestTests: ServerTestCase {
    private var directory: TemporaryDirectory!

    override func setUp() async throws {
        try await super.setUp()
        directory = try TemporaryDirectory()
    }

    override func tearDown() async throws {
        directory = nil
        try await super.tearDown()
    }

    private func destination(_ name: String, options: DownloadRequest.Options = []) -> DownloadRequest.Destination {
        let url = directory.url.appendingPathComponent(name)
        return { _, _ in (url, options) }
    }

    func testDownloadWritesTheBodyToTheDestinationByteForByte() async throws {
        let count = 5 * 1024 * 1024 + 17
        let request = session.download(url("/download/\(count)?seed=9"), to: destination("five.bin"))
        let response = await request.serializingDownloadedFileURL().response
        let fileURL = try XCTUnwrap(response.value)
        XCTAssertEqual(fileURL, directory.url.appendingPathComponent("five.bin"))
        XCTAssertEqual(request.fileURL, fileURL)
        XCTAssertEqual(try Data(contentsOf: fileURL), SeededBytes.bytes(seed: 9, offset: 0, count: count))
        XCTAssertEqual(request.downloadProgress.completedUnitCount, Int64(count))
        XCTAssertEqual(request.downloadProgress.fractionCompleted, 1)
        XCTAssertNil(response.resumeData)
    }

    func testWithoutADestinationTheFileIsMovedToAFileOfItsOwnInTheTemporaryDirectory() async throws {
        let response = await session.download(url("/bytes/1000?seed=3")).serializingDownloadedFileURL().response
        let fileURL = try XCTUnwrap(response.value)
        defer { try? FileManager.default.removeItem(at: fileURL) }
        XCTAssertEqual(
            fileURL.deletingLastPathComponent().standardizedFileURL.path,
            FileManager.default.temporaryDirectory.standardizedFileURL.path)
        XCTAssertTrue(fileURL.lastPathComponent.hasPrefix("Bluebonnet_"))
        XCTAssertEqual(try Data(contentsOf: fileURL), SeededBytes.bytes(seed: 3, offset: 0, count: 1000))
    }

    func testAnExistingFileFailsTheMoveUnlessRemovePreviousFileIsSet() async throws {
        _ = try directory.file("taken.bin", contents: Data("old".utf8))
        let refused = await session.download(url("/bytes/10?seed=1"), to: destination("taken.bin"))
            .serializingDownloadedFileURL().response
        guard case let .downloadedFileMoveFailed(_, source, target)? = refused.error else {
            return XCTFail("expected downloadedFileMoveFailed, got \(String(describing: refused.error))")
        }
        XCTAssertEqual(target, directory.url.appendingPathComponent("taken.bin"))
        XCTAssertFalse(FileManager.default.fileExists(atPath: source.path), "the temporary file is not left behind")
        XCTAssertEqual(try Data(contentsOf: target), Data("old".utf8), "nothing the user had is lost")

        let replaced = await session.download(
            url("/bytes/10?seed=1"), to: destination("taken.bin", options: .removePreviousFile)
        )
        .serializingDownloadedFileURL().response
        XCTAssertEqual(
            try Data(contentsOf: try XCTUnwrap(replaced.value)), SeededBytes.bytes(seed: 1, offset: 0, count: 10))
    }

    func testCreateIntermediateDirectoriesMakesTheDestinationsDirectories() async throws {
        let nested = "a/b/c/file.bin"
        let missing = await session.download(url("/bytes/10?seed=1"), to: destination(nested))
            .serializingDownloadedFileURL().response
        XCTAssertNotNil(missing.error?.isDownloadedFileMoveFailed ?? nil)
        let made = await session.download(
            url("/bytes/10?seed=1"), to: destination(nested, options: .createIntermediateDirectories)
        )
        .serializingDownloadedFileURL().response
        XCTAssertEqual(made.value, directory.url.appendingPathComponent(nested))
    }

    func testResponseHandlersReadTheDownloadedFile() async throws {
        struct Echo: Decodable, Sendable { let url: String }
        let decoded = try await session.download(url("/get?x=1"), to: destination("get.json")).serializingDecodable(
            Echo.self
        ).value
        XCTAssertTrue(decoded.url.hasSuffix("/get?x=1"))
        let string = try await session.download(url("/encoding/utf8"), to: destination("utf8.html")).serializingString()
            .value
        XCTAssertTrue(string.contains("∑"))

        let json = expectation(description: "json")
        let data = expectation(description: "data")
        let request = session.download(url("/json"), to: destination("doc.json"))
        let documentURL = directory.url.appendingPathComponent("doc.json")
        request.responseJSON { response in
            XCTAssertNotNil(response.value as? [String: Any])
            XCTAssertNotNil(response.fileURL)
            json.fulfill()
        }
        request.responseData { response in
            XCTAssertEqual(response.value, try? Data(contentsOf: documentURL))
            data.fulfill()
        }
        await fulfillment(of: [json, data], timeout: 30, enforceOrder: true)
    }

    func testValidationFailsAnUnacceptableStatusAfterTheFileWasMoved() async throws {
        let response = await session.download(url("/status/404"), to: destination("missing")).validate()
            .serializingDownloadedFileURL().response
        XCTAssertEqual(response.error?.responseCode, 404)
        XCTAssertEqual(response.response?.statusCode, 404)
        XCTAssertTrue(FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("missing").path))

        let typed = await session.download(url("/json"), to: destination("typed")).validate(contentType: ["text/html"])
            .serializingDownloadedFileURL().response
        XCTAssertNotNil(typed.error?.isResponseValidationError == true ? typed.error : nil)
        let custom = await session.download(url("/bytes/4?seed=1"), to: destination("custom"))
            .validate { _, _, fileURL in
                fileURL.flatMap { try? Data(contentsOf: $0) }?.count == 4
                    ? .success(()) : .failure(URLError(.badServerResponse))
            }
            .serializingDownloadedFileURL().response
        XCTAssertNotNil(custom.value)
    }

    func testARedirectsBodyIsNotWrittenOnlyTheFinalResponses() async throws {
        struct Echo: Decodable, Sendable { let url: String }
        let request = session.download(url("/redirect/2"), to: destination("final.json"))
        let echo = try await request.serializingDecodable(Echo.self).value
        XCTAssertTrue(echo.url.hasSuffix("/get"))
        XCTAssertEqual(request.redirectCount, 2)
    }

    func testAnUnfollowedRedirectsBodyIsWhatIsDownloaded() async throws {
        let request = session.download(url("/redirect/1"), to: destination("redirect.html")).redirect(
            using: Redirector.doNotFollow)
        let response = await request.serializingDownloadedFileURL().response
        XCTAssertEqual(response.response?.statusCode, 302)
        XCTAssertNotNil(response.value)
    }

    func testSuggestedDestinationTakesASanitisedNameFromContentDisposition() throws {
        let destination = DownloadRequest.suggestedDownloadDestination(for: .cachesDirectory)
        func name(_ disposition: String?, url: String = "http://h/path/fallback.bin") -> String {
            var headers: [String: String] = [:]
            headers["Content-Disposition"] = disposition
            let response = HTTPURLResponse(
                url: URL(string: url)!, statusCode: 200, httpVersion: nil, headerFields: headers)!
            return destination(URL(fileURLWithPath: "/tmp/Bluebonnet_x.tmp"), response).destinationURL.lastPathComponent
        }
        XCTAssertEqual(name("attachment; filename=\"report.pdf\""), "report.pdf")
        XCTAssertEqual(name("attachment; filename=\"../../etc/passwd\""), "passwd")
        XCTAssertEqual(name("attachment; filename=\"..\\\\..\\\\boot.ini\""), "boot.ini")
        XCTAssertEqual(name("attachment; filename=\"a\u{1B}]0;x\u{07}b.txt\""), "a]0;xb.txt")
        XCTAssertEqual(
            name("attachment; filename=\"plain.txt\"; filename*=UTF-8''na%C3%AFve%20r%C3%A9sum%C3%A9.txt"),
            "naïve résumé.txt")
        XCTAssertEqual(name("attachment; filename*=iso-8859-1'en'%A3%20rates.txt"), "£ rates.txt")
        XCTAssertEqual(name("attachment; filename=\"..\""), "fallback.bin")
        XCTAssertEqual(name("attachment; filename=\".hidden\""), "hidden")
        XCTAssertEqual(name(nil), "fallback.bin")
        XCTAssertEqual(name(nil, url: "http://h/"), "Bluebonnet_x.tmp")
        XCTAssertEqual(name("attachment; filename=\"\(String(repeating: "é", count: 300))\"").utf8.count, 254)
    }

    /// Issue 24 (10): a right-to-left override makes `invoice\u{202E}fdp.exe` show as `invoice` + `exe.pdf`.
    func testSuggestedNamesLoseBidirectionalFormattingCharacters() throws {
        let destination = DownloadRequest.suggestedDownloadDestination(for: .cachesDirectory)
        let ascii = CharacterSet(charactersIn: "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.")
        func name(_ filename: String) -> String {
            let disposition =
                "attachment; filename*=UTF-8''" + filename.addingPercentEncoding(withAllowedCharacters: ascii)!
            let response = HTTPURLResponse(
                url: URL(string: "http://h/x")!, statusCode: 200, httpVersion: nil,
                headerFields: ["Content-Disposition": disposition])!
            return destination(URL(fileURLWithPath: "/tmp/Bluebonnet_x.tmp"), response).destinationURL.lastPathComponent
        }
        XCTAssertEqual(name("invoice\u{202E}fdp.exe"), "invoicefdp.exe")
        for scalar in [0x061C, 0x200E, 0x200F, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E, 0x2066, 0x2067, 0x2068, 0x2069] {
            let character = String(Character(Unicode.Scalar(scalar)!))
            XCTAssertEqual(name("a\(character)b.txt"), "ab.txt", String(format: "U+%04X", scalar))
        }
        XCTAssertEqual(
            name("\u{05E9}\u{05DC}\u{05D5}\u{05DD}.txt"), "\u{05E9}\u{05DC}\u{05D5}\u{05DD}.txt",
            "right-to-left letters stay")
    }

    func testServerSuggestedNameIsUsedEndToEnd() async throws {
        let directoryURL = directory.url
        let destination: DownloadRequest.Destination = { temporaryURL, response in
            let base = DownloadRequest.suggestedDownloadDestination(for: .cachesDirectory)(temporaryURL, response)
            return (directoryURL.appendingPathComponent(base.destinationURL.lastPathComponent), [])
        }
        let fileURL = try await session.download(url("/download/10?filename=..%2Fsecret.txt"), to: destination)
            .serializingDownloadedFileURL().value
        XCTAssertEqual(fileURL.lastPathComponent, "secret.txt")
        XCTAssertEqual(fileURL.deletingLastPathComponent().path, directory.url.path)
    }

    func testAFailedRequestMovesNothingAndReportsTheTransportError() async throws {
        let response = await session.download("http://127.0.0.1:1/nothing", to: destination("never"))
            .serializingDownloadedFileURL().response
        XCTAssertEqual(response.error?.urlErrorCode, .cannotConnectToHost)
        XCTAssertNil(response.resumeData)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("never").path))
    }

    func testALargeDownloadNeverHoldsTheBodyInMemory() async throws {
        let count = 64 * 1024 * 1024
        let sampler = ResidentMemorySampler()
        let fileURL = try await session.download(url("/download/\(count)?seed=5"), to: destination("large.bin"))
            .serializingDownloadedFileURL().value
        let growth = sampler.stop()
        let attributes = try FileManager.default.attributesOfItem(atPath: fileURL.path)
        XCTAssertEqual((attributes[.size] as? NSNumber)?.intValue, count)
        XCTAssertLessThan(
            growth, 32 * 1024 * 1024,
            "resident memory grew \(growth / 1024 / 1024) MiB for a \(count / 1024 / 1024) MiB download")
        let handle = try FileHandle(forReadingFrom: fileURL)
        defer { try? handle.close() }
        try handle.seek(toOffset: UInt64(count - 4096))
        XCTAssertEqual(handle.readData(ofLength: 4096), SeededBytes.bytes(seed: 5, offset: count - 4096, count: 4096))
    }
}

extension AFError {
    var isDownloadedFileMoveFailed: Bool? {
        if case .downloadedFileMoveFailed = self { return true }
        return nil
    }
}
