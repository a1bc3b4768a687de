import Bluebonnet
import Foundation
import XCTest

/// What `bonnet` got wrong side by side with httpie, each pinned as a run against the test server.
extension BonnetCommandTests {
    /// The JSON object `bonnet` printed (piped output is the body alone).
    private func body(of run: Run, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        XCTAssertEqual(run.status, 0, run.errors, file: file, line: line)
        return try json(Data(run.output.utf8), file: file, line: line)
    }

    func testPipedOutputIsTheBodyAloneByteForByte() async throws {
        let run = try await bonnet([url("/echo?content_type=text/plain")], stdin: Data("no newline at the end".utf8))
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertEqual(run.output, "no newline at the end", "no head, no added newline")
        let headers = try await bonnet(["--headers", url("/get")])
        XCTAssertTrue(headers.output.hasPrefix("HTTP/1.1 200 OK"), headers.output)
    }

    func testBinaryBodiesArePipedIntact() async throws {
        let binary = Data((0..<256).map { UInt8($0) } + [0, 0x1B, 0xFF])
        let process = try await bonnetBytes([url("/echo?content_type=application/octet-stream")], stdin: binary)
        XCTAssertEqual(process, binary, "a binary body piped to a file is the server's bytes, not a note")
    }

    func testRepeatedQueryItemsAreAllSentInOrder() async throws {
        let echo = try body(of: try await bonnet([url("/get?z=0"), "a==1", "a==2", "b==x y&z"]))
        let args = try XCTUnwrap(echo["args"] as? [String: Any])
        XCTAssertEqual(args["a"] as? [String], ["1", "2"])
        XCTAssertEqual(args["b"] as? String, "x y&z")
        XCTAssertEqual(args["z"] as? String, "0")
    }

    func testFileItemsEmbedTheFilesContents() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let text = directory.appendingPathComponent("note.txt"), object = directory.appendingPathComponent("data.json")
        try Data("hello from a file".utf8).write(to: text)
        try Data(#"{"n": [1, 2]}"#.utf8).write(to: object)
        let echo = try body(of: try await bonnet([url("/post"), "note=@\(text.path)", "data:=@\(object.path)"]))
        let json = try XCTUnwrap(echo["json"] as? [String: Any])
        XCTAssertEqual(json["note"] as? String, "hello from a file")
        XCTAssertEqual((json["data"] as? [String: Any])?["n"] as? [Int], [1, 2])
        let missing = try await bonnet([url("/post"), "note=@/nonexistent/file"])
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertTrue(missing.errors.contains("cannot read /nonexistent/file"), missing.errors)
    }

    func testAnEmptyHeaderItemRemovesTheHeaderAndSemicolonSendsItEmpty() async throws {
        let echo = try body(of: try await bonnet([url("/headers"), "User-Agent:", "Accept-Language:", "X-Empty;"]))
        let headers = try XCTUnwrap(echo["headers"] as? [String: String])
        XCTAssertNil(headers["User-Agent"], "\(headers)")
        XCTAssertNil(headers["Accept-Language"], "\(headers)")
        XCTAssertEqual(headers["X-Empty"], "")
    }

    func testALowercaseMethodIsAMethodNotAHost() async throws {
        for (arguments, method) in [
            (["get", url("/anything")], "GET"), (["put", url("/anything"), "a=1"], "PUT"),
            (["delete", url("/anything")], "DELETE"),
        ] {
            let run = try await bonnet(arguments)
            XCTAssertEqual(try body(of: run)["method"] as? String, method)
        }
    }

    func testAnErrorAfterTheHeadIsAnErrorEvenWithoutCheckStatus() async throws {
        let run = try await bonnet([url("/truncated/1000")])
        XCTAssertEqual(run.status, 1, run.output)
        XCTAssertTrue(run.errors.contains("bonnet: error:"), run.errors)
        let limited = try await bonnet(["--headers", url("/truncated/1000")])
        XCTAssertEqual(limited.status, 1)
        XCTAssertTrue(limited.output.hasPrefix("HTTP/1.1 200 OK"), "the head still shows: \(limited.output)")
    }

    func testATimeoutAndTooManyRedirectsExitAsHttpieDoes() async throws {
        let timeout = try await bonnet(["--timeout", "0.3", url("/delay/10")])
        XCTAssertEqual(timeout.status, 2, timeout.errors)
        let redirects = try await bonnet([url("/redirect/20")])
        XCTAssertEqual(redirects.status, 6, redirects.errors)
        let refused = try await bonnet(["http://127.0.0.1:1/"])
        XCTAssertEqual(refused.status, 1, refused.errors)
    }

    func testVerboseShowsTheRequestLineAndEveryHeaderSent() async throws {
        let run = try await bonnet(["-v", url("/get?q=1"), "X-Trace:abc"])
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertTrue(run.output.contains("GET /get?q=1 HTTP/1.1"), run.output)
        XCTAssertTrue(run.output.contains("Host: 127.0.0.1:\(server.port)"), run.output)
        XCTAssertTrue(run.output.contains("X-Trace: abc"), run.output)
        // The library's default, which names the program (here the test bundle, in-process) and Bluebonnet.
        XCTAssertTrue(run.output.contains("User-Agent: "), run.output)
        XCTAssertTrue(run.output.contains(" Bluebonnet/\(bluebonnetVersion)"), run.output)
        XCTAssertTrue(run.output.contains("Accept-Encoding: "), run.output)
    }

    /// Runs bonnet and returns its standard output as bytes.
    private func bonnetBytes(_ arguments: [String], stdin: Data) async throws -> Data {
        try await bonnet(arguments, stdin: stdin).data
    }
}
