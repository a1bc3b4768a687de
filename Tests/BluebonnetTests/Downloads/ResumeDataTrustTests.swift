@testable import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Resume data is untrusted input (issue 24, holes 1 and 2): a resumed download never takes the session's
/// credentials to an origin other than the one the download started on, and never writes into a file the library
/// did not make for it.
final class ResumeDataTrustTests: ServerTestCase {
    private var directory: TemporaryDirectory!
    /// A session whose every request carries credentials for the origin it starts on.
    private var credentialed: Session!

    override func setUp() async throws {
        try await super.setUp()
        directory = try TemporaryDirectory()
        credentialed = session {
            // Cookies other tests left in the shared storage are the jar's, sent by their own rules: not these.
            $0.httpCookieStorage = URLSessionConfiguration.ephemeral.httpCookieStorage
            $0.headers.add(.authorization(bearerToken: "session-secret"))
            $0.headers.add(name: "Cookie", value: "session=1")
            $0.headers.add(name: "Proxy-Authorization", value: "Basic cHJveHk6c2VjcmV0")
        }
    }

    override func tearDown() async throws {
        credentialed = nil
        directory = nil
        try await super.tearDown()
    }

    private func document(_ data: Data?) throws -> [String: Any] {
        try XCTUnwrap(try JSONSerialization.jsonObject(with: XCTUnwrap(data)) as? [String: Any])
    }

    private func rewritten(_ data: Data?, _ change: (inout [String: Any]) -> Void) throws -> Data {
        var object = try document(data)
        change(&object)
        return try JSONSerialization.data(withJSONObject: object)
    }

    /// The resume data of a cut download, continued from a URL that no longer cuts.
    private func resumable(_ data: Data?) throws -> Data {
        try rewritten(data) { object in
            object["url"] = (object["url"] as? String)?.replacingOccurrences(of: "&drop_after=1000", with: "")
        }
    }

    private func received(_ response: DownloadResponse<URL, AFError>) -> String? {
        response.response?.value(forHTTPHeaderField: "X-Received-Credentials")
    }

    private func cutDownload(_ path: String, on session: Session) async throws -> DownloadResponse<URL, AFError> {
        let response = await session.download(url(path)).serializingDownloadedFileURL().response
        XCTAssertEqual(response.error?.urlErrorCode, .networkConnectionLost)
        XCTAssertNotNil(response.resumeData)
        return response
    }

    // MARK: - Hole 1: the session's credentials stay with their origin

    func testAResumeAfterARedirectToAnotherOriginCarriesNoSessionCredentials() async throws {
        // The API on 127.0.0.1 sends the download to a "CDN" on localhost, which cuts it short.
        let cdn = "http://localhost:\(server.port)/download/3000?seed=21&drop_after=1000"
        let path = "/redirect-to?url=\(cdn.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"
        let cut = try await cutDownload(path, on: credentialed)
        XCTAssertEqual(received(cut), "none", "the redirect strips them")
        XCTAssertEqual(try document(cut.resumeData)["origin"] as? String, "http://127.0.0.1:\(server.port)")
        let resumed = await credentialed.download(resumingWith: try resumable(cut.resumeData))
            .serializingDownloadedFileURL().response
        XCTAssertEqual(resumed.response?.statusCode, 206)
        XCTAssertEqual(resumed.request?.url?.host, "localhost")
        XCTAssertEqual(received(resumed), "none", "the resume must not undo the redirect's stripping")
        let file = try XCTUnwrap(resumed.value)
        XCTAssertEqual(try Data(contentsOf: file), SeededBytes.bytes(seed: 21, offset: 0, count: 3000))
        try? FileManager.default.removeItem(at: file)
    }

    func testAResumeOnTheOriginItStartedOnStillCarriesTheSessionsCredentials() async throws {
        let cut = try await cutDownload("/download/3000?seed=22&drop_after=1000", on: credentialed)
        XCTAssertEqual(received(cut), "Authorization, Cookie, Proxy-Authorization")
        let resumed = await credentialed.download(resumingWith: try resumable(cut.resumeData))
            .serializingDownloadedFileURL().response
        XCTAssertEqual(resumed.response?.statusCode, 206)
        XCTAssertEqual(received(resumed), "Authorization, Cookie, Proxy-Authorization")
        try? FileManager.default.removeItem(at: try XCTUnwrap(resumed.value))
    }

    func testResumeDataThatNamesNoOriginResumesWithoutCredentials() async throws {
        let cut = try await cutDownload("/download/3000?seed=23&drop_after=1000", on: credentialed)
        // What version 1 wrote: no origin. Nothing says whose credentials these were.
        let legacy = try rewritten(try resumable(cut.resumeData)) { object in
            object["version"] = 1
            object["origin"] = nil
        }
        let resumed = await credentialed.download(resumingWith: legacy).serializingDownloadedFileURL().response
        XCTAssertEqual(resumed.response?.statusCode, 206)
        XCTAssertEqual(received(resumed), "none")
        // An origin that is not `scheme://host:port` (a path, a user) names nobody either.
        let cut2 = try await cutDownload("/download/3000?seed=23&drop_after=1000", on: credentialed)
        let odd = try rewritten(try resumable(cut2.resumeData)) {
            $0["origin"] = "http://127.0.0.1:\(self.server.port)/download"
        }
        let oddResumed = await credentialed.download(resumingWith: odd).serializingDownloadedFileURL().response
        XCTAssertEqual(received(oddResumed), "none")
        try? FileManager.default.removeItem(at: try XCTUnwrap(oddResumed.value))
        try? FileManager.default.removeItem(at: try XCTUnwrap(resumed.value))
    }

    func testAChallengeOnTheResumedOriginIsNotAnsweredWithTheFirstOriginsCredential() async throws {
        // The download started on 127.0.0.1 with a URL credential; the resume goes to localhost, which asks for one.
        let cut = try await cutDownload("/download/3000?seed=24&drop_after=1000", on: session)
        let foreign = try rewritten(cut.resumeData) { object in
            object["url"] = "http://localhost:\(self.server.port)/basic-auth/user/pass"
        }
        let resumed = session.download(resumingWith: foreign).authenticate(username: "user", password: "pass")
        let response = await resumed.serializingDownloadedFileURL().response
        XCTAssertEqual(response.response?.statusCode, 401, "the request's credential belongs to 127.0.0.1")
        // The 401's body was downloaded to the default destination, which is the caller's to remove.
        if let fileURL = response.value { try? FileManager.default.removeItem(at: fileURL) }
    }

    // MARK: - Hole 2: only the library's own partial file

    /// A file of the user's, which hostile resume data points at.
    private func precious() throws -> (URL, Data) {
        let file = directory.url.appendingPathComponent("precious.txt")
        let contents = Data("the user's own words\n".utf8)
        try contents.write(to: file)
        return (file, contents)
    }

    private func assertRefused(_ data: Data, file target: URL, line: UInt = #line) async {
        let response = await session.download(resumingWith: data).serializingDownloadedFileURL().response
        guard case let .createURLRequestFailed(error)? = response.error else {
            return XCTFail("expected createURLRequestFailed, got \(String(describing: response.error))", line: line)
        }
        XCTAssertEqual(error as? DownloadResumeError, .untrustedPartialFile(target), line: line)
    }

    func testResumeDataNamingAnyOtherFileIsRefusedAndTheFileUntouched() async throws {
        let cut = try await cutDownload("/download/3000?seed=25&drop_after=1000", on: session)
        let partial = try XCTUnwrap(try document(cut.resumeData)["file"] as? String)
        defer { try? FileManager.default.removeItem(atPath: partial) }
        let (file, contents) = try precious()
        // The user's file by its own name.
        await assertRefused(try rewritten(cut.resumeData) { $0["file"] = file.path }, file: file)
        // A name like the library's, but in another folder.
        let elsewhere = directory.url.appendingPathComponent("Bluebonnet_\(UUID().uuidString).tmp")
        try FileManager.default.copyItem(at: file, to: elsewhere)
        await assertRefused(try rewritten(cut.resumeData) { $0["file"] = elsewhere.path }, file: elsewhere)
        // A link with the library's name, in its folder, to the user's file.
        let link = FileManager.default.temporaryDirectory.appendingPathComponent("Bluebonnet_\(UUID().uuidString).tmp")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: file)
        defer { try? FileManager.default.removeItem(at: link) }
        await assertRefused(
            try rewritten(cut.resumeData) { object in
                object["file"] = link.path
                object["device"] = nil
                object["inode"] = nil
            }, file: link)
        // A second name (hard link) of the user's file, likewise.
        let hard = FileManager.default.temporaryDirectory.appendingPathComponent("Bluebonnet_\(UUID().uuidString).tmp")
        XCTAssertEqual(Glibc.link(file.path, hard.path), 0)
        defer { try? FileManager.default.removeItem(at: hard) }
        await assertRefused(
            try rewritten(cut.resumeData) { object in
                object["file"] = hard.path
                object["device"] = nil
                object["inode"] = nil
            }, file: hard)
        // A path that climbs out of the folder.
        let climbing =
            FileManager.default.temporaryDirectory.path + "/../"
            + FileManager.default.temporaryDirectory.lastPathComponent
            + "/x/../Bluebonnet_\(UUID().uuidString).tmp/../../" + file.path
        await assertRefused(
            try rewritten(cut.resumeData) { $0["file"] = climbing }, file: URL(fileURLWithPath: climbing))
        XCTAssertEqual(try Data(contentsOf: file), contents)
        XCTAssertEqual(try Data(contentsOf: elsewhere), contents)
        // The real partial still resumes.
        let resumed = try await session.download(resumingWith: resumable(cut.resumeData)).serializingDownloadedFileURL()
            .value
        XCTAssertEqual(try Data(contentsOf: resumed), SeededBytes.bytes(seed: 25, offset: 0, count: 3000))
        try? FileManager.default.removeItem(at: resumed)
    }

    func testAPartialFileReplacedByAnotherIsRefusedByItsIdentity() async throws {
        let cut = try await cutDownload("/download/3000?seed=26&drop_after=1000", on: session)
        let partial = URL(fileURLWithPath: try XCTUnwrap(try document(cut.resumeData)["file"] as? String))
        defer { try? FileManager.default.removeItem(at: partial) }
        // Same name, same folder, same owner, long enough: another file all the same.
        // Made before the partial goes, so it cannot reuse its inode.
        let replacement = Data(repeating: 0x41, count: 2000)
        let staged = FileManager.default.temporaryDirectory.appendingPathComponent("staged-\(UUID().uuidString)")
        try replacement.write(to: staged)
        XCTAssertEqual(rename(staged.path, partial.path), 0)
        await assertRefused(try XCTUnwrap(cut.resumeData), file: partial)
        XCTAssertEqual(try Data(contentsOf: partial), replacement, "never opened for writing, never removed")
    }

    func testAFileSwappedAfterTheResumeDataWasReadIsNotWritten() throws {
        // The writer checks the file it opened too: a partial swapped for a second name of the user's file between
        // the check and the open is refused, and not removed.
        let (file, contents) = try precious()
        let partial = FileManager.default.temporaryDirectory.appendingPathComponent(
            "Bluebonnet_\(UUID().uuidString).tmp")
        XCTAssertEqual(Glibc.link(file.path, partial.path), 0)
        defer { try? FileManager.default.removeItem(at: partial) }
        let writer = DownloadFileWriter()
        writer.adopt(partial, identity: nil)
        writer.begin(keeping: nil)
        let ended = expectation(description: "ended")
        let outcome = Recorder<Result<DownloadFileWriter.Written, AFError>>()
        writer.end { result in
            outcome.append(result)
            ended.fulfill()
        }
        wait(for: [ended], timeout: 30)
        guard case let .failure(error)? = outcome.values.first, case let .sessionTaskFailed(underlying) = error,
            let urlError = underlying as? URLError
        else { return XCTFail("\(outcome.values)") }
        XCTAssertEqual(urlError.code, .cannotWriteToFile)
        XCTAssertEqual(try Data(contentsOf: file), contents, "not truncated")
        XCTAssertTrue(FileManager.default.fileExists(atPath: partial.path), "not removed either")
    }

    func testResumeDataIsBoundedAndItsIdentityWellFormed() async throws {
        let huge = Data(repeating: 0x20, count: DownloadResumeData.maximumLength + 1)
        let response = await session.download(resumingWith: huge).serializingDownloadedFileURL().response
        guard case let .createURLRequestFailed(error)? = response.error else {
            return XCTFail("\(String(describing: response.error))")
        }
        XCTAssertEqual(error as? DownloadResumeError, .malformed)
        let cut = try await cutDownload("/download/3000?seed=27&drop_after=1000", on: session)
        defer { try? FileManager.default.removeItem(atPath: (try? document(cut.resumeData)["file"] as? String) ?? "") }
        let halfIdentity = try rewritten(cut.resumeData) { $0["inode"] = nil }
        let half = await session.download(resumingWith: halfIdentity).serializingDownloadedFileURL().response
        guard case let .createURLRequestFailed(halfError)? = half.error else {
            return XCTFail("\(String(describing: half.error))")
        }
        XCTAssertEqual(halfError as? DownloadResumeError, .malformed)
    }

    /// A resumed download's file length is what it holds plus the `Content-Length` the server declares: a hostile
    /// `Content-Length` of `Int64.max` after kept bytes overflowed the sum, which traps; it saturates.
    func testTheFileLengthAfterAHostileContentLengthSaturatesInsteadOfOverflowing() {
        XCTAssertEqual(DownloadRequest.fileLength(start: 1000, declared: .max), .max)
        XCTAssertEqual(DownloadRequest.fileLength(start: 1000, declared: 24), 1024)
        XCTAssertEqual(DownloadRequest.fileLength(start: 1000, declared: -1), -1, "not declared")
    }
}
