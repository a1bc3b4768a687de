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
    func bonnet(_ arguments: [String], timeout: TimeInterval = 20) throws -> Run {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("bonnet")
        // `swift build --build-tests` builds every product, so a missing binary is a broken build, not a skip.
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: binary.path])
        }
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        if process.isRunning {
            process.terminate()
            process.waitUntilExit()
            XCTFail("bonnet \(arguments.joined(separator: " ")) still ran after \(timeout) s")
        }
        process.waitUntilExit()
        return Run(status: process.terminationStatus,
                   output: String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
                   errors: String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
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
}
