import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest

/// `bonnet` as a person runs it, a separate process against the test server, for what only a process shows: the
/// program's own exit statuses, a terminal, real pipes in and out. Everything else runs in-process
/// (`BonnetCommandTests`), through the same entry point.
final class BonnetProcessTests: ServerTestCase {
    typealias Run = BonnetRun

    /// Runs the `bonnet` built beside this test bundle, killing it after `timeout` seconds (a hang guard); with
    /// `closeOutputAfter`, standard output's reader closes the pipe after that many bytes, as `head -c` does.
    func bonnet(
        _ arguments: [String], stdin: Data? = nil, timeout: TimeInterval = 60, closeOutputAfter: Int? = nil
    ) throws -> Run {
        let result = try BonnetRunner.run(
            arguments, stdin: stdin, timeout: timeout, closeOutputAfter: closeOutputAfter)
        return Run(
            status: result.status, data: result.output, output: String(decoding: result.output, as: UTF8.self),
            errors: String(decoding: result.errors, as: UTF8.self))
    }

    func testUsageErrorsExitOneAndVersionAndHelpGoToStandardOutput() throws {
        let usage = try bonnet(["--print=x", url("/get")])
        XCTAssertEqual(usage.status, 1, "httpie's status for a usage error (ArgumentParser's is 64)")
        XCTAssertTrue(usage.errors.contains("--print takes letters of HBhbm"), usage.errors)
        let missing = try bonnet([])
        XCTAssertEqual(missing.status, 1, missing.errors)
        let version = try bonnet(["--version"])
        XCTAssertEqual(version.status, 0, version.errors)
        XCTAssertEqual(version.output.trimmingCharacters(in: .whitespacesAndNewlines), bluebonnetVersion)
        let help = try bonnet(["--help"])
        XCTAssertEqual(help.status, 0, help.errors)
        for command in ["request", "ws", "reachability", "demo", "serve"] {
            XCTAssertTrue(help.output.contains(command), "\(command) missing from --help: \(help.output)")
        }
    }

    func testAnErrorStatusIsTheProgramsExitStatus() throws {
        let run = try bonnet(["--check-status", url("/status/503")])
        XCTAssertEqual(run.status, 5, run.errors)
        let refused = try bonnet(["http://127.0.0.1:1/"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.errors.hasPrefix("bonnet: error: "), refused.errors)
    }

    /// The response body as JSON.
    private func body(of run: Run, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        XCTAssertEqual(run.status, 0, run.errors, file: file, line: line)
        return try XCTUnwrap(
            JSONSerialization.jsonObject(with: run.data) as? [String: Any], run.output, file: file, line: line)
    }

    func testAuthWithoutAPasswordAsksForItOnTheTerminal() throws {
        // `script` gives bonnet a pseudo-terminal, whose input is what this test writes.
        let script = URL(fileURLWithPath: "/usr/bin/script")
        guard FileManager.default.isExecutableFile(atPath: script.path) else {
            throw XCTSkip("no /usr/bin/script for a terminal")
        }
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "bonnet")
        let process = Process()
        process.executableURL = script
        process.arguments = [
            "-qec", "\(binary.path) --no-color --body --auth user \(url("/basic-auth/user/passwd"))", "/dev/null",
        ]
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = output
        let transcript = TerminalTranscript()
        let prompted = expectation(description: "the password prompt is on the terminal")
        let closed = expectation(description: "the terminal closed")
        try process.run()
        // The terminal is read as it is written, on a thread of its own (reads block).
        Thread.detachNewThread {
            let reader = output.fileHandleForReading
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { break }
                if transcript.append(chunk, firstShowing: "password for user") { prompted.fulfill() }
            }
            closed.fulfill()
        }
        // getpass turns echo off with TCSAFLUSH, which throws away what was typed before it: the password is typed
        // once the prompt, written after that, has reached the terminal. The timeouts are hang guards only.
        wait(for: [prompted], timeout: 60)
        input.fileHandleForWriting.write(Data("passwd\n".utf8))
        wait(for: [closed], timeout: 60)
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        let text = transcript.text
        XCTAssertEqual(process.terminationStatus, 0, text)
        XCTAssertTrue(text.contains("password for user"), text)
        XCTAssertTrue(text.contains("\"authenticated\" : true"), text)
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

    func testPipedStdinIsTheRequestBody() throws {
        let echo = try body(of: try bonnet([url("/anything")], stdin: Data("from stdin".utf8)))
        XCTAssertEqual(echo["method"] as? String, "POST")
        XCTAssertEqual(echo["data"] as? String, "from stdin")
        let ignored = try body(of: try bonnet(["--ignore-stdin", url("/anything")], stdin: Data("ignored".utf8)))
        XCTAssertEqual(ignored["method"] as? String, "GET")
    }

    /// 5: `--stream` turned bytes that are not UTF-8 into U+FFFD (1,000 binary bytes came out as 1,800).
    func testStreamedOutputToAPipeIsByteExact() throws {
        let expected = SeededBytes.bytes(seed: 44, offset: 0, count: 1000)
        for flags in [["--stream"], []] {
            let output = try bonnet(flags + [url("/bytes/1000?seed=44")])
            XCTAssertEqual(output.data, expected, "\(flags)")
        }
    }

    /// 6: `bonnet URL | head` crashed with SIGILL and a 20 KB backtrace; a reader that goes away ends it quietly.
    func testAClosedPipeEndsTheProgramQuietly() throws {
        for flags in [["--stream"], []] {
            let run = try bonnet(flags + [url("/bytes/4000000?seed=45")], closeOutputAfter: 10)
            XCTAssertTrue(run.status == 0 || run.status == 141, "\(flags): exit \(run.status), \(run.errors)")
            XCTAssertFalse(
                run.errors.contains("Fatal") || run.errors.contains("Backtrace") || run.errors.count > 500,
                "\(flags): \(run.errors.prefix(500))")
        }
    }
}

/// What a terminal showed, gathered by the thread that reads it.
private final class TerminalTranscript: @unchecked Sendable {
    // @unchecked: `data` and `shown` are touched only under `lock`.
    private let lock = NSLock()
    private var data = Data()
    private var shown = false

    /// Appends `chunk`; `true` the first time the text so far contains `phrase`.
    func append(_ chunk: Data, firstShowing phrase: String) -> Bool {
        lock.withLock {
            data.append(chunk)
            guard !shown, String(decoding: data, as: UTF8.self).contains(phrase) else { return false }
            shown = true
            return true
        }
    }

    /// Everything shown so far, as UTF-8 text.
    var text: String {
        lock.withLock { String(decoding: data, as: UTF8.self) }
    }
}
