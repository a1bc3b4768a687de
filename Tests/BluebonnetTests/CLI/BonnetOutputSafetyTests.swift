import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// What only a real process shows of output safety (issue 43, items 2 and 3): a `SIGTERM` to a download, and output
/// larger than the library's in-memory limit redirected to a file, in bounded memory.
extension BonnetProcessTests {
    /// The binary the runner starts.
    private var binary: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("bonnet")
    }

    /// Runs bonnet with `arguments`, standard input from `input` (else nothing) and standard output to `output`, and
    /// returns its exit status and peak resident memory in KiB, as Python's `resource` reports a child's.
    private func runMeasuringPeakMemory(
        _ arguments: [String], input: URL?, output: URL
    ) throws -> (status: Int?, peakKiB: Int) {
        let script = """
            import resource, subprocess, sys
            source = open(sys.argv[1], "rb") if sys.argv[1] else subprocess.DEVNULL
            with open(sys.argv[2], "wb") as out:
                status = subprocess.run(sys.argv[3:], stdin=source, stdout=out).returncode
            print(status, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", script, input?.path ?? "", output.path, binary.path] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let report = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let fields = report.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        XCTAssertEqual(fields.count, 2, report)
        return (fields.first, fields.count == 2 ? fields[1] : .max)
    }

    /// 3: `bonnet URL > out.bin` for more than 100 MiB exited 1 ("Raise it with Session(maximumResponseSize:)…"), and
    /// smaller output was held whole in memory (a 90 MB body: 141 MB resident). Python's `resource` reports the
    /// child's peak resident memory.
    func testOutputLargerThanTheInMemoryLimitStreamsToAFileInBoundedMemory() throws {
        let directory = try TemporaryDirectory()
        let out = directory.url.appendingPathComponent("out.bin")
        let count = 160 << 20
        let run = try runMeasuringPeakMemory([url("/bytes/\(count)?seed=70")], input: nil, output: out)
        XCTAssertEqual(run.status, 0, "bonnet's exit status")
        let size = (try FileManager.default.attributesOfItem(atPath: out.path)[.size] as? NSNumber)?.intValue
        XCTAssertEqual(size, count)
        let handle = try FileHandle(forReadingFrom: out)
        try handle.seek(toOffset: UInt64(count - 1000))
        XCTAssertEqual(
            try handle.read(upToCount: 1000), SeededBytes.bytes(seed: 70, offset: count - 1000, count: 1000))
        try handle.close()
        // Held whole, 160 MiB would need at least that much; streamed, the program's own size and a few buffers.
        XCTAssertLessThan(run.peakKiB, 80 * 1024, "peak resident memory in KiB")
    }

    /// 5: a body piped in was read whole before it was sent (`PUT < 1 GiB`: 1.1 GB resident); now it streams.
    func testABodyPipedInIsSentAsItIsReadInBoundedMemory() throws {
        let directory = try TemporaryDirectory()
        let count = 160 << 20
        let source = directory.url.appendingPathComponent("big.bin")
        let body = SeededBytes.bytes(seed: 71, offset: 0, count: count)
        try body.write(to: source)
        let out = directory.url.appendingPathComponent("answer.json")
        // The file is bonnet's standard input.
        let run = try runMeasuringPeakMemory(["PUT", url("/drain")], input: source, output: out)
        XCTAssertEqual(run.status, 0, "bonnet's exit status")
        let answer = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(contentsOf: out)) as? [String: Any], "the server's answer")
        XCTAssertEqual(answer["bytes"] as? Int, count)
        XCTAssertEqual(answer["crc32"] as? Int, DrainRoute.checksum(body))
        XCTAssertEqual(answer["method"] as? String, "PUT")
        XCTAssertLessThan(run.peakKiB, 80 * 1024, "peak resident memory in KiB")
    }

    /// 2: `SIGTERM` during `bonnet -o d.bin URL` left no `d.bin`, only a hidden part file; now `d.bin` holds what
    /// arrived, nothing else is left, and the status is a `SIGTERM`'s (143).
    func testATerminatedDownloadKeepsWhatArrivedAndLeavesNothingHidden() async throws {
        let faults = try await FaultServer.start()
        let directory = try TemporaryDirectory()
        let file = directory.url.appendingPathComponent("d.bin")
        let process = Process()
        process.executableURL = binary
        process.arguments = ["-o", file.path, faults.url("/stall-mid-body").absoluteString]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        // A barrier on what the program wrote: the 400 bytes the server sends before it stalls.
        let deadline = Date().addingTimeInterval(30)
        while FileManager.default.contents(atPath: file.path)?.count != 400, Date() < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        XCTAssertEqual(FileManager.default.contents(atPath: file.path)?.count, 400, "the body never arrived")
        process.terminate()
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        await faults.stop()
        XCTAssertEqual(process.terminationReason, .exit, said)
        XCTAssertEqual(process.terminationStatus, 143, said)
        XCTAssertTrue(said.contains("--continue"), said)
        XCTAssertEqual(FileManager.default.contents(atPath: file.path), Data(repeating: UInt8(ascii: "x"), count: 400))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.url.path), ["d.bin"])
    }
}

/// `bonnet serve` in a person's terms (issue 43, item 13).
extension BonnetProcessTests {
    /// Before: `--port 99999` silently listened elsewhere, and a busy port printed NIO's raw text.
    func testServeRefusesAPortOutOfRangeAndSaysWhyABusyPortFails() throws {
        let range = try bonnet(["serve", "--port", "99999"])
        XCTAssertEqual(range.status, 1, range.errors)
        XCTAssertTrue(range.errors.contains("1 to 65535"), range.errors)
        let busy = try bonnet(["serve", "--port", String(server.port)])
        XCTAssertEqual(busy.status, 1, busy.errors)
        XCTAssertTrue(busy.errors.contains("already in use"), busy.errors)
        XCTAssertFalse(busy.errors.contains("IOError"), busy.errors)
    }

    /// Before: `bonnet serve --port 0 | true` trapped (exit 132) writing its banner to the closed pipe.
    func testServeKeepsServingWhenItsOutputsReaderIsGone() async throws {
        let port = try LocalDaemon.freePort()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("bonnet")
        process.arguments = ["serve", "--port", String(port)]
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        try output.fileHandleForReading.close()
        try process.run()
        // A barrier on the server itself: it answers once it listens, which is after its banner was written.
        var answered: Int?
        let client = Session()
        for _ in 0..<600 where answered == nil && process.isRunning {
            let response = await client.request("http://127.0.0.1:\(port)/get").serializingData().response
            answered = response.response?.statusCode
            if answered == nil { try await Task.sleep(for: .milliseconds(50)) }
        }
        XCTAssertEqual(answered, 200)
        XCTAssertTrue(process.isRunning, "it still serves")
        process.terminate()
        let said = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertFalse(said.contains("Fatal error"), said)
    }
}

/// `--check-status` in httpie's terms (issue 43, item 13).
extension BonnetCommandTests {
    /// Before: a `600` exited 6, the status of too many redirects.
    func testCheckStatusOnAStatusOutsideThreeToFiveHundredIsNoError() async throws {
        let faults = try await FaultServer.start()
        let line = "HTTP/1.1 600 Beyond".addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let run = try await bonnet(["--check-status", faults.url("/status-line?line=\(line)").absoluteString])
        await faults.stop()
        XCTAssertEqual(run.status, 0, run.errors)
        let notFound = try await bonnet(["--check-status", url("/status/404")])
        XCTAssertEqual(notFound.status, 4, notFound.errors)
    }
}
