import Foundation
import XCTest

/// `bonnet` as a person runs it: a separate process against the test server.
final class BonnetProcessTests: ServerTestCase {
    struct Run {
        let status: Int32
        let output: String
        let errors: String
    }

    /// Runs the `bonnet` built beside this test bundle, killing it after `timeout` seconds.
    func bonnet(
        _ arguments: [String], stdin: Data? = nil, timeout: TimeInterval = 20, in directory: URL? = nil,
        environment: [String: String] = [:], unsetting: [String] = []
    ) throws -> Run {
        let result = try BonnetRunner.run(
            arguments, stdin: stdin, timeout: timeout, in: directory, environment: environment, unsetting: unsetting)
        return Run(
            status: result.status, output: String(decoding: result.output, as: UTF8.self),
            errors: String(decoding: result.errors, as: UTF8.self))
    }

    func testCurlPrintsTheCommandThenTheResponseAndExits() throws {
        // It used to wait forever for the URLRequest, which nothing made before a response handler was added.
        let run = try bonnet(["--no-color", "--curl", url("/get?flower=bluebonnet")])
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertTrue(run.output.contains("$ curl -v"), run.output)
        XCTAssertTrue(run.output.contains("'\(url("/get?flower=bluebonnet"))'"), run.output)
        XCTAssertTrue(run.output.contains("\"flower\""), run.output)
    }

    func testAPortOutOfRangeIsAClearErrorNotACrash() throws {
        let run = try bonnet(["--no-color", "http://127.0.0.1:65536/"])
        XCTAssertEqual(run.status, 1, run.errors)
        XCTAssertTrue(run.errors.contains("URL is not valid"), run.errors)
    }

    func testAuthBasicIsSentUpFront() throws {
        let run = try bonnet(["--no-color", "--body", "--auth", "user:passwd", url("/hidden-basic-auth/user/passwd")])
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertTrue(run.output.contains("\"authenticated\" : true"), run.output)
    }

    func testAuthDigestAnswersTheChallenge() throws {
        let run = try bonnet([
            "--no-color", "--check-status", "--auth-type", "digest", "-a", "user:passwd",
            url("/digest-auth/auth/user/passwd/SHA-256"),
        ])
        XCTAssertEqual(run.status, 0, run.errors + run.output)
        XCTAssertTrue(run.output.contains("\"authenticated\" : true"), run.output)
        let wrong = try bonnet([
            "--no-color", "--check-status", "-A", "digest", "-a", "user:nope",
            url("/digest-auth/auth/user/passwd/SHA-256"),
        ])
        XCTAssertEqual(wrong.status, 4, "the 401 ends it: " + wrong.output)
    }

    func testCredentialsInTheURLAnswerTheChallengeAndVerboseOutputHidesThePassword() throws {
        let run = try bonnet([
            "--no-color", "-v", "--check-status", "http://user:passwd@127.0.0.1:\(server.port)/basic-auth/user/passwd",
        ])
        XCTAssertEqual(run.status, 0, run.errors + run.output)
        // Piped, the request is shown as its exact bytes, which carry no URL; the password is nowhere.
        XCTAssertTrue(
            run.output.contains("GET /basic-auth/user/passwd HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n"),
            run.output)
        XCTAssertFalse(run.output.contains("user:passwd"), run.output)
    }

    func testAuthBearerSendsTheToken() throws {
        let run = try bonnet(["--no-color", "--body", "-A", "bearer", "-a", "t0ken", url("/bearer")])
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertTrue(run.output.contains("t0ken"), run.output)
    }

    func testAuthWithoutAPasswordAndNoTerminalIsAClearError() throws {
        let run = try bonnet(["--no-color", "--auth", "user", url("/basic-auth/user/passwd")])
        XCTAssertNotEqual(run.status, 0)
        XCTAssertTrue(run.errors.contains("no terminal to ask"), run.errors)
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
        try process.run()
        // The terminal keeps the line until bonnet reads it, so the timing only has to be roughly right.
        Thread.sleep(forTimeInterval: 1)
        input.fileHandleForWriting.write(Data("passwd\n".utf8))
        let deadline = Date().addingTimeInterval(20)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        XCTAssertEqual(process.terminationStatus, 0, text)
        XCTAssertTrue(text.contains("password for user"), text)
        XCTAssertTrue(text.contains("\"authenticated\" : true"), text)
    }
}
