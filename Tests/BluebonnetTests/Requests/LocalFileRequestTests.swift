import Bluebonnet
import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `file:` URL a data or download request is made with is read from the disk, as URLSession loads it for
/// Alamofire (which fails on Linux); a server never leads a request to a local file.
final class LocalFileRequestTests: ServerTestCase {
    private var directory: URL!

    override func setUp() async throws {
        try await super.setUp()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("local-file-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    override func tearDown() async throws {
        try? FileManager.default.removeItem(at: directory)
        try await super.tearDown()
    }

    private func file(_ contents: Data) throws -> URL {
        let url = directory.appendingPathComponent("body.json")
        try contents.write(to: url)
        return url
    }

    func testADataRequestReadsTheFileWithNoHTTPResponse() async throws {
        let contents = Data(#"{"local":true}"#.utf8)
        let url = try file(contents)
        let response = await session.request(url).serializingData().response
        XCTAssertEqual(response.data, contents)
        XCTAssertNil(response.error)
        XCTAssertNil(response.response, "a file has no HTTP response")
        struct Body: Decodable { let local: Bool }
        let decoded = try await session.request(url).serializingDecodable(Body.self).value
        XCTAssertTrue(decoded.local)
    }

    func testADownloadCopiesTheFileToAFileOfItsOwn() async throws {
        let contents = Data(repeating: 7, count: 300_000)
        let url = try file(contents)
        let response = await session.download(url).serializingDownloadedFileURL().response
        let downloaded = try XCTUnwrap(response.fileURL)
        defer { try? FileManager.default.removeItem(at: downloaded) }
        XCTAssertNotEqual(downloaded, url)
        XCTAssertEqual(try Data(contentsOf: downloaded), contents)
        XCTAssertTrue(FileManager.default.fileExists(atPath: url.path), "the source stays")
    }

    func testAMissingFileADirectoryAndAFileOverTheLimitFailWithoutReadingOn() async throws {
        let missing = await session.request(directory.appendingPathComponent("none")).serializingData().response
        XCTAssertEqual((missing.error?.underlyingError as? URLError)?.code, .fileDoesNotExist)
        let folder = await session.request(directory).serializingData().response
        XCTAssertEqual((folder.error?.underlyingError as? URLError)?.code, .fileIsDirectory)
        let device = await session.request(URL(fileURLWithPath: "/dev/zero")).serializingData().response
        XCTAssertEqual((device.error?.underlyingError as? URLError)?.code, .cannotOpenFile, "never read without end")
        // A pipe with no writer: opening it for reading would wait for ever.
        let fifo = directory.appendingPathComponent("pipe")
        XCTAssertEqual(mkfifo(fifo.path, 0o600), 0)
        let pipe = await session.request(fifo).serializingData().response
        XCTAssertEqual((pipe.error?.underlyingError as? URLError)?.code, .cannotOpenFile, "never blocked on")
        let url = try file(Data(repeating: 1, count: 600_000))
        let limited = await session.request(url).maximumResponseSize(100_000).serializingData().response
        XCTAssertEqual(limited.error?.isResponseLimitError, true, "\(String(describing: limited.error))")
        XCTAssertNil(limited.data)
    }

    func testARedirectToALocalFileIsNeverFollowedToTheDisk() async throws {
        let secret = try file(Data("secret".utf8))
        let target = url(
            "/redirect-to?url=\(secret.absoluteString.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)")
        let response = await session.request(target).serializingData().response
        XCTAssertNotEqual(response.data, Data("secret".utf8))
        XCTAssertNotNil(response.error, "the hop to file: is refused")
    }

    func testUploadsAndStreamsToALocalFileAreRefused() async throws {
        let url = try file(Data("x".utf8))
        let upload = await session.upload(Data("body".utf8), to: url).serializingData().response
        XCTAssertEqual((upload.error?.underlyingError as? URLError)?.code, .unsupportedURL)
        XCTAssertEqual(try Data(contentsOf: url), Data("x".utf8), "nothing written")
        let stream = session.streamRequest(url)
        for await _ in stream.streamTask().streamingData() {}
        XCTAssertEqual((stream.error?.underlyingError as? URLError)?.code, .unsupportedURL)
    }
}
