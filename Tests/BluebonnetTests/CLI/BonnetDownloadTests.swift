import BluebonnetTestServer
import Foundation
import XCTest

/// `bonnet --download`, `-o`, `--continue` and `--stream`, run against the test server.
extension BonnetCommandTests {
    func testDownloadSavesTheBodyUnderTheServersNameAndNeverOverwrites() async throws {
        let directory = try TemporaryDirectory()
        let expected = SeededBytes.bytes(seed: 1, offset: 0, count: 200_000)
        for _ in 0..<2 {
            let run = try await bonnet(
                ["--download", url("/download/200000?filename=../report.bin")], in: directory.url,
                outputIsTerminal: true)
            XCTAssertEqual(run.status, 0, run.errors)
            XCTAssertTrue(run.errors.contains("200 OK"), "the head goes to standard error: \(run.errors)")
            XCTAssertTrue(run.output.isEmpty, "nothing on standard output: \(run.output)")
        }
        XCTAssertEqual(
            try Data(contentsOf: directory.url.appendingPathComponent("report.bin")), expected, "the name is sanitised")
        XCTAssertEqual(try Data(contentsOf: directory.url.appendingPathComponent("report.bin-1")), expected)
    }

    func testContinueResumesAPartialFileToTheSameBytes() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.url.appendingPathComponent("part.bin").path
        let cut = try await bonnet(["-o", file, url("/download/300000?seed=3&drop_after=120000")])
        XCTAssertEqual(cut.status, 1, cut.errors)
        XCTAssertTrue(cut.errors.contains("--continue"), cut.errors)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: file)).count, 120_000)
        let resumed = try await bonnet(["-c", "-o", file, url("/download/300000?seed=3")])
        XCTAssertEqual(resumed.status, 0, resumed.errors)
        XCTAssertTrue(resumed.errors.contains("206"), resumed.errors)
        XCTAssertEqual(
            try Data(contentsOf: URL(fileURLWithPath: file)), SeededBytes.bytes(seed: 3, offset: 0, count: 300_000))
        let again = try await bonnet(["-c", "-o", file, url("/download/300000?seed=3")])
        XCTAssertEqual(again.status, 0, again.errors)
        XCTAssertTrue(again.errors.contains("complete"), again.errors)
    }

    func testADownloadOfAnErrorStatusSavesNothingAndFails() async throws {
        let directory = try TemporaryDirectory()
        let run = try await bonnet([
            "--check-status", "-o", directory.url.appendingPathComponent("x").path, url("/status/404"),
        ])
        XCTAssertEqual(run.status, 4, run.errors)
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("x").path))
    }

    func testStreamPrintsServerSentEventsAsTheyArrive() async throws {
        let run = try await bonnet(["--stream", "--no-color", url("/sse?count=3")])
        XCTAssertEqual(run.status, 0, run.errors)
        for index in 0..<3 {
            XCTAssertTrue(run.output.contains("id: \(index)\nevent: tick\ndata: line one \(index)"), run.output)
        }
        XCTAssertFalse(run.output.contains("text/event-stream"), "piped output shows only the body, as httpie does")
    }
}
