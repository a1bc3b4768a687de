import Foundation
import XCTest

/// What `bonnet` got wrong side by side with httpie, each pinned as a process run against the test server.
extension BonnetProcessTests {
    /// The JSON object `bonnet` printed (piped output is the body alone).
    private func body(of run: Run, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        XCTAssertEqual(run.status, 0, run.errors, file: file, line: line)
        return try json(Data(run.output.utf8), file: file, line: line)
    }

    func testPipedOutputIsTheBodyAloneByteForByte() throws {
        let run = try bonnet([url("/echo?content_type=text/plain")], stdin: Data("no newline at the end".utf8))
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertEqual(run.output, "no newline at the end", "no head, no added newline")
        let headers = try bonnet(["--headers", url("/get")])
        XCTAssertTrue(headers.output.hasPrefix("HTTP/1.1 200 OK"), headers.output)
    }

    func testBinaryBodiesArePipedIntact() throws {
        let binary = Data((0..<256).map { UInt8($0) } + [0, 0x1B, 0xFF])
        let process = try bonnetBytes([url("/echo?content_type=application/octet-stream")], stdin: binary)
        XCTAssertEqual(process, binary, "a binary body piped to a file is the server's bytes, not a note")
    }

    func testPipedStdinIsTheRequestBody() throws {
        let echo = try body(of: try bonnet([url("/anything")], stdin: Data("from stdin".utf8)))
        XCTAssertEqual(echo["method"] as? String, "POST")
        XCTAssertEqual(echo["data"] as? String, "from stdin")
        let ignored = try body(of: try bonnet(["--ignore-stdin", url("/anything")], stdin: Data("ignored".utf8)))
        XCTAssertEqual(ignored["method"] as? String, "GET")
    }

    func testRepeatedQueryItemsAreAllSentInOrder() throws {
        let echo = try body(of: try bonnet([url("/get?z=0"), "a==1", "a==2", "b==x y&z"]))
        let args = try XCTUnwrap(echo["args"] as? [String: Any])
        XCTAssertEqual(args["a"] as? [String], ["1", "2"])
        XCTAssertEqual(args["b"] as? String, "x y&z")
        XCTAssertEqual(args["z"] as? String, "0")
    }

    func testFileItemsEmbedTheFilesContents() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let text = directory.appendingPathComponent("note.txt"), object = directory.appendingPathComponent("data.json")
        try Data("hello from a file".utf8).write(to: text)
        try Data(#"{"n": [1, 2]}"#.utf8).write(to: object)
        let echo = try body(of: try bonnet([url("/post"), "note=@\(text.path)", "data:=@\(object.path)"]))
        let json = try XCTUnwrap(echo["json"] as? [String: Any])
        XCTAssertEqual(json["note"] as? String, "hello from a file")
        XCTAssertEqual((json["data"] as? [String: Any])?["n"] as? [Int], [1, 2])
        let missing = try bonnet([url("/post"), "note=@/nonexistent/file"])
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertTrue(missing.errors.contains("cannot read /nonexistent/file"), missing.errors)
    }

    func testAnEmptyHeaderItemRemovesTheHeaderAndSemicolonSendsItEmpty() throws {
        let echo = try body(of: try bonnet([url("/headers"), "User-Agent:", "Accept-Language:", "X-Empty;"]))
        let headers = try XCTUnwrap(echo["headers"] as? [String: String])
        XCTAssertNil(headers["User-Agent"], "\(headers)")
        XCTAssertNil(headers["Accept-Language"], "\(headers)")
        XCTAssertEqual(headers["X-Empty"], "")
    }

    func testALowercaseMethodIsAMethodNotAHost() throws {
        XCTAssertEqual(try body(of: try bonnet(["get", url("/anything")]))["method"] as? String, "GET")
        XCTAssertEqual(try body(of: try bonnet(["put", url("/anything"), "a=1"]))["method"] as? String, "PUT")
        XCTAssertEqual(try body(of: try bonnet(["delete", url("/anything")]))["method"] as? String, "DELETE")
    }

    func testAnErrorAfterTheHeadIsAnErrorEvenWithoutCheckStatus() throws {
        let run = try bonnet([url("/truncated/1000")])
        XCTAssertEqual(run.status, 1, run.output)
        XCTAssertTrue(run.errors.contains("bonnet: error:"), run.errors)
        let limited = try bonnet(["--headers", url("/truncated/1000")])
        XCTAssertEqual(limited.status, 1)
        XCTAssertTrue(limited.output.hasPrefix("HTTP/1.1 200 OK"), "the head still shows: \(limited.output)")
    }

    func testATimeoutAndTooManyRedirectsExitAsHttpieDoes() throws {
        let timeout = try bonnet(["--timeout", "0.3", url("/delay/3")])
        XCTAssertEqual(timeout.status, 2, timeout.errors)
        let redirects = try bonnet([url("/redirect/20")])
        XCTAssertEqual(redirects.status, 6, redirects.errors)
        let refused = try bonnet(["http://127.0.0.1:1/"])
        XCTAssertEqual(refused.status, 1, refused.errors)
    }

    func testVerboseShowsTheRequestLineAndEveryHeaderSent() throws {
        let run = try bonnet(["-v", url("/get?q=1"), "X-Trace:abc"])
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertTrue(run.output.contains("GET /get?q=1 HTTP/1.1"), run.output)
        XCTAssertTrue(run.output.contains("Host: 127.0.0.1:\(server.port)"), run.output)
        XCTAssertTrue(run.output.contains("X-Trace: abc"), run.output)
        XCTAssertTrue(run.output.contains("User-Agent: bonnet"), run.output)
        XCTAssertTrue(run.output.contains("Accept-Encoding: "), run.output)
    }

    func testOnATerminalEscapesAreShownNotObeyedAndLatin1IsDecoded() throws {
        let script = URL(fileURLWithPath: "/usr/bin/script")
        guard FileManager.default.isExecutableFile(atPath: script.path) else {
            throw XCTSkip("no /usr/bin/script for a terminal")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let body = directory.appendingPathComponent("body.bin")
        // "café" in ISO-8859-1, then an escape sequence that would set the terminal's title.
        try (Data("caf".utf8) + Data([0xE9]) + Data("\u{1B}]0;pwned\u{07}".utf8)).write(to: body)
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "bonnet")
        let target = url("/echo?content_type=text/plain;%20charset=iso-8859-1")
        let process = Process()
        process.executableURL = script
        process.arguments = ["-qec", "\(binary.path) --no-color '\(target)' < \(body.path)", "/dev/null"]
        let output = Pipe()
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = output
        try process.run()
        process.waitUntilExit()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertTrue(text.contains("HTTP/1.1 200 OK"), "a terminal gets the head: \(text)")
        XCTAssertTrue(text.contains("café"), text)
        XCTAssertFalse(text.contains("\u{1B}]0;"), "the escape sequence reached the terminal")
        XCTAssertTrue(text.contains("\\u{1b}]0;pwned\\u{7}"), text)
    }

    /// Runs bonnet and returns its standard output as bytes.
    private func bonnetBytes(_ arguments: [String], stdin: Data) throws -> Data {
        try BonnetRunner.run(arguments, stdin: stdin).output
    }
}
