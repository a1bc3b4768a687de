@testable import Bluebonnet
import Foundation
import XCTest

final class MultipartFormDataTests: XCTestCase {
    private func text(_ data: Data) -> String { String(decoding: data, as: UTF8.self) }

    func testEncodesFieldsAndFilesWithExactBoundariesHeadersAndCRLFs() throws {
        let form = MultipartFormData(boundary: "B")
        form.append(Data("bar".utf8), withName: "foo")
        form.append(Data("PNG".utf8), withName: "image", fileName: "a.png", mimeType: "image/png")
        let encoded = try form.encode()
        XCTAssertEqual(
            text(encoded),
            """
            --B\r
            Content-Disposition: form-data; name="foo"\r
            \r
            bar\r
            --B\r
            Content-Disposition: form-data; name="image"; filename="a.png"\r
            Content-Type: image/png\r
            \r
            PNG\r
            --B--\r

            """)
        XCTAssertEqual(form.encodedLength, UInt64(encoded.count))
        XCTAssertEqual(form.contentType, "multipart/form-data; boundary=B")
    }

    func testEmptyFormEncodesToNothing() throws {
        let form = MultipartFormData()
        XCTAssertEqual(try form.encode(), Data())
        XCTAssertEqual(form.contentLength, 0)
    }

    func testDefaultBoundaryIsRandomAndNamesTheLibrary() {
        let first = MultipartFormData().boundary
        let second = MultipartFormData().boundary
        XCTAssertNotEqual(first, second)
        XCTAssertTrue(first.hasPrefix("bluebonnet.boundary"))
        XCTAssertEqual(first.count, "alamofire.boundary.".count + 16, "as long as Alamofire's")
    }

    func testQuotesCarriageReturnsAndLineFeedsInNamesCannotBreakTheForm() throws {
        let form = MultipartFormData(boundary: "B")
        form.append(
            Data("x".utf8), withName: "evil\"\r\nX-Injected: 1", fileName: "a\".txt\r\n",
            mimeType: "text/plain\r\nX-Other: 2")
        let encoded = text(try form.encode())
        XCTAssertTrue(encoded.contains(#"name="evil%22%0D%0AX-Injected: 1"; filename="a%22.txt%0D%0A""#), encoded)
        XCTAssertTrue(encoded.contains("Content-Type: text/plain%0D%0AX-Other: 2\r\n"), encoded)
        XCTAssertFalse(encoded.contains("\r\nX-Injected"))
        XCTAssertFalse(encoded.contains("\r\nX-Other"))
    }

    func testUnicodeNamesAreSentAsUTF8() throws {
        let form = MultipartFormData(boundary: "B")
        form.append(Data("1".utf8), withName: "名前", fileName: "résumé.txt", mimeType: "text/plain")
        XCTAssertTrue(text(try form.encode()).contains(#"name="名前"; filename="résumé.txt""#))
    }

    func testFileNameAndTypeComeFromTheFileURL() throws {
        let directory = try TemporaryDirectory()
        let fileURL = try directory.file("photo.JPG", contents: Data([0xFF, 0xD8, 0xFF]))
        let form = MultipartFormData(boundary: "B")
        form.append(fileURL, withName: "upload")
        let encoded = try form.encode()
        XCTAssertTrue(
            text(encoded).contains(
                #"Content-Disposition: form-data; name="upload"; filename="photo.JPG""#
                    + "\r\nContent-Type: image/jpeg\r\n\r\n"))
        XCTAssertEqual(form.encodedLength, UInt64(encoded.count))
        XCTAssertNotNil(encoded.range(of: Data([0xFF, 0xD8, 0xFF])))
    }

    func testMIMETypeTableKnowsCommonTypesAndFallsBackToOctetStream() {
        XCTAssertEqual(MIMETypeTable.mimeType(forPathExtension: "json"), "application/json")
        XCTAssertEqual(MIMETypeTable.mimeType(forPathExtension: "PDF"), "application/pdf")
        XCTAssertEqual(MIMETypeTable.mimeType(forPathExtension: "txt"), "text/plain")
        XCTAssertEqual(MIMETypeTable.mimeType(forPathExtension: "webp"), "image/webp")
        XCTAssertEqual(MIMETypeTable.mimeType(forPathExtension: "mp4"), "video/mp4")
        XCTAssertEqual(MIMETypeTable.mimeType(forPathExtension: "zip"), "application/zip")
        XCTAssertEqual(MIMETypeTable.mimeType(forPathExtension: "unknownext"), "application/octet-stream")
    }

    func testStreamPartsAreReadInChunksWithCustomHeaders() throws {
        let payload = patternedData(count: 300_000)
        let form = MultipartFormData(boundary: "B")
        form.append(
            InputStream(data: payload), withLength: UInt64(payload.count),
            headers: ["Content-Disposition": #"form-data; name="blob""#, "X-Part": "1"])
        let encoded = try form.encode()
        let head = Data("--B\r\nContent-Disposition: form-data; name=\"blob\"\r\nX-Part: 1\r\n\r\n".utf8)
        XCTAssertEqual(encoded.prefix(head.count), head)
        XCTAssertEqual(encoded.dropFirst(head.count).prefix(payload.count), payload)
        XCTAssertEqual(form.encodedLength, UInt64(encoded.count))
    }

    func testWriteEncodedDataProducesTheSameBytesAsEncode() throws {
        let directory = try TemporaryDirectory()
        let fileURL = try directory.file("big.bin", contents: patternedData(count: 1_000_000))
        func makeForm() -> MultipartFormData {
            let form = MultipartFormData(boundary: "same")
            form.append(Data("v".utf8), withName: "k")
            form.append(fileURL, withName: "file")
            return form
        }
        let output = directory.url.appendingPathComponent("form.out")
        try makeForm().writeEncodedData(to: output)
        XCTAssertEqual(try Data(contentsOf: output), try makeForm().encode())
    }

    func testContentTypeCanBeReplaced() {
        let form = MultipartFormData(boundary: "B")
        form.contentType = "multipart/mixed; boundary=B"
        XCTAssertEqual(form.contentType, "multipart/mixed; boundary=B")
    }

    // MARK: - Errors

    private func reason(_ body: () throws -> Void, file: StaticString = #filePath, line: UInt = #line) -> AFError
        .MultipartEncodingFailureReason?
    {
        do {
            try body()
            XCTFail("expected an error", file: file, line: line)
        } catch let AFError.multipartEncodingFailed(reason) {
            return reason
        } catch {
            XCTFail("unexpected \(error)", file: file, line: line)
        }
        return nil
    }

    func testNonFileURLFailsWithBodyPartURLInvalid() {
        let form = MultipartFormData()
        form.append(URL(string: "https://example.com/a.png")!, withName: "f")
        guard case .bodyPartURLInvalid? = reason({ _ = try form.encode() }) else { return XCTFail() }
    }

    func testFileWithoutExtensionFailsWithBodyPartFilenameInvalid() throws {
        let directory = try TemporaryDirectory()
        let fileURL = try directory.file("README", contents: Data("x".utf8))
        let form = MultipartFormData()
        form.append(fileURL, withName: "f")
        guard case let .bodyPartFilenameInvalid(url)? = reason({ _ = try form.encode() }) else { return XCTFail() }
        XCTAssertEqual(url, fileURL)
    }

    func testMissingFileFailsAsNotReachable() {
        let form = MultipartFormData()
        form.append(URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString).txt"), withName: "f")
        switch reason({ _ = try form.encode() }) {
        case .bodyPartFileNotReachable?, .bodyPartFileNotReachableWithError?: break
        case let other: XCTFail("\(String(describing: other))")
        }
    }

    func testDirectoryFailsWithBodyPartFileIsDirectory() throws {
        let directory = try TemporaryDirectory()
        let form = MultipartFormData()
        form.append(directory.url, withName: "f", fileName: "d.bin", mimeType: "application/octet-stream")
        guard case .bodyPartFileIsDirectory? = reason({ _ = try form.encode() }) else { return XCTFail() }
    }

    func testFirstAppendErrorIsKeptAndLaterPartsDoNotHideIt() throws {
        let form = MultipartFormData()
        form.append(URL(string: "https://example.com/a.png")!, withName: "first")
        form.append(URL(fileURLWithPath: "/nonexistent/b.png"), withName: "second")
        form.append(Data("ok".utf8), withName: "third")
        guard case .bodyPartURLInvalid? = reason({ _ = try form.encode() }) else { return XCTFail() }
    }

    func testStreamShorterThanItsLengthFailsWithInputStreamReadFailed() {
        let form = MultipartFormData()
        form.append(
            InputStream(data: Data("short".utf8)), withLength: 100, name: "s", fileName: "s.bin",
            mimeType: "application/octet-stream")
        guard case let .inputStreamReadFailed(error)? = reason({ _ = try form.encode() }) else { return XCTFail() }
        let mismatch = error as? AFError.UnexpectedInputStreamLength
        XCTAssertEqual(mismatch?.bytesExpected, 100)
        XCTAssertEqual(mismatch?.bytesRead, 5)
    }

    func testStreamLongerThanItsLengthSendsTheDeclaredLengthAsAlamofireDoes() throws {
        let form = MultipartFormData(boundary: "b")
        form.append(
            InputStream(data: Data("longer than four".utf8)), withLength: 4, name: "s", fileName: "s.bin",
            mimeType: "text/plain")
        let encoded = try form.encode()
        XCTAssertEqual(UInt64(encoded.count), form.encodedLength, "the length announced is the length sent")
        let text = String(decoding: encoded, as: UTF8.self)
        XCTAssertTrue(text.contains("\r\n\r\nlong\r\n--b--"), text)
    }

    func testAFileThatGrewAfterItWasAddedFails() throws {
        let directory = try TemporaryDirectory()
        let file = try directory.file("grows.txt", contents: Data("four".utf8))
        let form = MultipartFormData()
        form.append(file, withName: "f")
        try Data("four and more".utf8).write(to: file)
        guard case .inputStreamReadFailed? = reason({ _ = try form.encode() }) else { return XCTFail() }
    }

    func testWritingOverAnExistingFileFailsAndKeepsIt() throws {
        let directory = try TemporaryDirectory()
        let existing = try directory.file("exists.bin", contents: Data("keep me".utf8))
        let form = MultipartFormData()
        form.append(Data("x".utf8), withName: "a")
        guard case let .outputStreamFileAlreadyExists(url)? = reason({ try form.writeEncodedData(to: existing) }) else {
            return XCTFail()
        }
        XCTAssertEqual(url, existing)
        XCTAssertEqual(try Data(contentsOf: existing), Data("keep me".utf8))
    }

    func testWritingToANonFileURLFailsWithOutputStreamURLInvalid() {
        let form = MultipartFormData()
        form.append(Data("x".utf8), withName: "a")
        guard
            case .outputStreamURLInvalid? = reason({
                try form.writeEncodedData(to: URL(string: "https://example.com/out")!)
            })
        else { return XCTFail() }
    }

    func testWritingIntoAMissingDirectoryFailsWithOutputStreamCreationFailed() {
        let form = MultipartFormData()
        form.append(Data("x".utf8), withName: "a")
        let target = URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString)/out.bin")
        guard case .outputStreamCreationFailed? = reason({ try form.writeEncodedData(to: target) }) else {
            return XCTFail()
        }
    }

    func testFailedWriteRemovesThePartialFile() throws {
        let directory = try TemporaryDirectory()
        let form = MultipartFormData()
        form.append(Data("first".utf8), withName: "a")
        form.append(
            InputStream(data: Data("short".utf8)), withLength: 50, name: "b", fileName: "b.bin", mimeType: "text/plain")
        let output = directory.url.appendingPathComponent("partial.out")
        guard case .inputStreamReadFailed? = reason({ try form.writeEncodedData(to: output) }) else { return XCTFail() }
        XCTAssertFalse(FileManager.default.fileExists(atPath: output.path))
    }

    func testErrorsDescribeTheFailureInPlainWords() {
        let form = MultipartFormData()
        form.append(URL(string: "https://example.com/a.png")!, withName: "f")
        do {
            _ = try form.encode()
        } catch {
            XCTAssertTrue(error.localizedDescription.contains("https://example.com/a.png"), error.localizedDescription)
        }
    }

    // MARK: - File system failures, injected through the FileManager

    func testFileWithoutASizeFailsWithBodyPartFileSizeNotAvailable() throws {
        let directory = try TemporaryDirectory()
        let fileURL = try directory.file("a.txt", contents: Data("x".utf8))
        let fileManager = ScriptedFileManager()
        fileManager.attributes = .withoutSize
        let form = MultipartFormData(fileManager: fileManager)
        form.append(fileURL, withName: "f")
        guard case .bodyPartFileSizeNotAvailable? = reason({ _ = try form.encode() }) else { return XCTFail() }
    }

    func testFailingSizeQueryFailsWithBodyPartFileSizeQueryFailedWithError() throws {
        let directory = try TemporaryDirectory()
        let fileURL = try directory.file("a.txt", contents: Data("x".utf8))
        let fileManager = ScriptedFileManager()
        fileManager.attributes = .failing
        let form = MultipartFormData(fileManager: fileManager)
        form.append(fileURL, withName: "f")
        guard case let .bodyPartFileSizeQueryFailedWithError(url, error)? = reason({ _ = try form.encode() }) else {
            return XCTFail()
        }
        XCTAssertEqual(url, fileURL)
        XCTAssertEqual((error as? CocoaError)?.code, .fileReadNoPermission)
    }

    func testUnreadableFileFailsWithBodyPartInputStreamCreationFailed() throws {
        let directory = try TemporaryDirectory()
        let fileURL = try directory.file("a.txt", contents: Data("x".utf8))
        let fileManager = ScriptedFileManager()
        fileManager.readable = false
        let form = MultipartFormData(fileManager: fileManager)
        form.append(fileURL, withName: "f")
        guard case .bodyPartInputStreamCreationFailed? = reason({ _ = try form.encode() }) else { return XCTFail() }
    }

    func testFileRemovedAfterAppendingFailsWhenEncoded() throws {
        let directory = try TemporaryDirectory()
        let fileURL = try directory.file("gone.txt", contents: Data("soon gone".utf8))
        let form = MultipartFormData()
        form.append(fileURL, withName: "f")
        try FileManager.default.removeItem(at: fileURL)
        guard case .bodyPartInputStreamCreationFailed? = reason({ _ = try form.encode() }) else { return XCTFail() }
    }

    func testFullDiskFailsWithOutputStreamWriteFailed() throws {
        // /dev/full accepts the open and fails every write with ENOSPC; the scripted manager lets the form treat it
        // as a new file, and records (never performs) the clean-up removal.
        try XCTSkipUnless(FileManager.default.fileExists(atPath: "/dev/full"), "this system has no /dev/full")
        let fileManager = ScriptedFileManager()
        fileManager.pretendMissing = "/dev/full"
        let form = MultipartFormData(fileManager: fileManager)
        form.append(Data(count: 200_000), withName: "zeros")
        guard
            case .outputStreamWriteFailed? = reason({ try form.writeEncodedData(to: URL(fileURLWithPath: "/dev/full")) }
            )
        else { return XCTFail() }
        XCTAssertEqual(fileManager.removed, ["/dev/full"])
    }
}

/// A `FileManager` whose answers a test scripts.
private final class ScriptedFileManager: FileManager, @unchecked Sendable {
    enum Attributes { case real, withoutSize, failing }

    var attributes = Attributes.real
    var readable = true
    /// A path that `fileExists` denies and `createFile` pretends to create.
    var pretendMissing: String?
    private(set) var removed: [String] = []

    override func attributesOfItem(atPath path: String) throws -> [FileAttributeKey: Any] {
        switch attributes {
        case .real: return try super.attributesOfItem(atPath: path)
        case .withoutSize: return [.type: FileAttributeType.typeRegular]
        case .failing: throw CocoaError(.fileReadNoPermission)
        }
    }

    override func isReadableFile(atPath path: String) -> Bool {
        readable && super.isReadableFile(atPath: path)
    }

    override func fileExists(atPath path: String) -> Bool {
        path == pretendMissing ? false : super.fileExists(atPath: path)
    }

    override func createFile(atPath path: String, contents data: Data?, attributes attr: [FileAttributeKey: Any]? = nil)
        -> Bool
    {
        path == pretendMissing ? true : super.createFile(atPath: path, contents: data, attributes: attr)
    }

    override func removeItem(at url: URL) throws {
        guard url.path == pretendMissing else { return try super.removeItem(at: url) }
        removed.append(url.path)
    }

    func testContentLengthIsTheSumOfThePartsBodiesAsInAlamofire() {
        let form = MultipartFormData()
        let first = Data("Lorem ipsum dolor sit amet.".utf8)
        let second = Data("Vim at integre alterum.".utf8)
        form.append(first, withName: "first")
        form.append(second, withName: "second", fileName: "second.txt", mimeType: "text/plain")
        XCTAssertEqual(form.contentLength, UInt64(first.count + second.count))
        XCTAssertGreaterThan(form.encodedLength, form.contentLength, "boundaries and part headers come on top")
    }
}
