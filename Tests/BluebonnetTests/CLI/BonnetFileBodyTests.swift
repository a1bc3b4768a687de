import Bluebonnet
@testable import BonnetKit
import Foundation
import XCTest

/// Issue 43: an `@file` body was read whole into memory, whatever its size, and `@/dev/zero` without end. A large
/// regular file is sent from the disk with its length, anything else that is not small as it is read, as a large
/// piped body is.
extension BonnetCommandTests {
    func testALargeFileBodyIsSentFromTheDiskWithItsLength() async throws {
        let directory = try TemporaryDirectory()
        let text = String(repeating: "0123456789abcdef", count: 1 << 17)  // 2 MiB, past the 1 MiB held whole
        let file = directory.url.appendingPathComponent("big.txt")
        try Data(text.utf8).write(to: file)
        let run = try await bonnet(["--debug", "POST", url("/anything"), "@\(file.path)"])
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertTrue(run.errors.contains("(a body sent from \(file.path))"), run.errors)
        let echo = try json(Data(run.output.utf8))
        XCTAssertEqual((echo["data"] as? String)?.count, text.count)
        XCTAssertEqual(echo["data"] as? String, text)
        let headers = try XCTUnwrap(echo["headers"] as? [String: String])
        XCTAssertEqual(headers["Content-Length"], "\(text.utf8.count)", "\(headers)")
        XCTAssertEqual(headers["Content-Type"], "text/plain", "typed by its extension")
        // `--chunked` is honoured, and `-xx` deflates it (read whole for it, up to the bound), as before.
        let chunked = try await bonnet(["--chunked", "POST", url("/anything"), "@\(file.path)"])
        XCTAssertEqual(chunked.status, 0, chunked.errors)
        let chunkedEcho = try json(Data(chunked.output.utf8))
        XCTAssertEqual((chunkedEcho["headers"] as? [String: String])?["Transfer-Encoding"], "chunked")
        XCTAssertEqual(chunkedEcho["data"] as? String, text)
        let deflated = try await bonnet(["--debug", "-xx", "POST", url("/anything"), "@\(file.path)"])
        XCTAssertEqual(deflated.status, 0, deflated.errors)
        XCTAssertFalse(deflated.errors.contains("(a body sent from"), deflated.errors)
        let deflatedHeaders = try json(Data(deflated.output.utf8))["headers"] as? [String: String]
        XCTAssertEqual(deflatedHeaders?["Content-Encoding"], "deflate", "\(String(describing: deflatedHeaders))")
        // A small file is held whole, as before.
        let small = directory.url.appendingPathComponent("small.json")
        try Data(#"{"a":1}"#.utf8).write(to: small)
        let held = try await bonnet(["--debug", url("/anything"), "@\(small.path)"])
        XCTAssertFalse(held.errors.contains("(a body sent from"), held.errors)
        XCTAssertEqual(try json(Data(held.output.utf8))["data"] as? String, #"{"a":1}"#)
    }

    func testAFileThatIsNotRegularIsSentAsItIsRead() async throws {
        let directory = try TemporaryDirectory()
        let fifo = directory.url.appendingPathComponent("body.fifo")
        XCTAssertEqual(mkfifo(fifo.path, 0o600), 0)
        let text = String(repeating: "fedcba9876543210", count: 1 << 17)
        // The writer opens its end once bonnet opens the other, writes and closes: the end of the body.
        let writer = Thread {
            guard let handle = FileHandle(forWritingAtPath: fifo.path) else { return }
            handle.write(Data(text.utf8))
            try? handle.close()
        }
        writer.start()
        let run = try await bonnet(["--debug", "POST", url("/anything"), "@\(fifo.path)"])
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertTrue(run.errors.contains("(a body streamed as it is read)"), run.errors)
        let echo = try json(Data(run.output.utf8))
        XCTAssertEqual(echo["data"] as? String, text)
        let headers = try XCTUnwrap(echo["headers"] as? [String: String])
        XCTAssertEqual(headers["Transfer-Encoding"], "chunked", "\(headers)")
    }

    func testAFileBodyThatCannotBeOpenedSaysWhy() async throws {
        let run = try await bonnet(["POST", url("/anything"), "@/nonexistent/body.bin"])
        XCTAssertEqual(run.status, 1)
        XCTAssertTrue(run.errors.contains("'@/nonexistent/body.bin': cannot read"), run.errors)
        XCTAssertTrue(run.errors.contains("No such file or directory"), run.errors)
    }

    /// A body a command must hold whole (`--offline`, `--download`) is read up to a bound: `/dev/zero` never ends.
    func testABodyHeldWholeIsBounded() {
        let body = StreamedBody(prefix: Data(), stream: InputStream(data: Data(count: 10)))
        XCTAssertEqual(body.readWhole(atMost: 9), .tooLarge)
        XCTAssertEqual(
            StreamedBody(prefix: Data(), stream: InputStream(data: Data(count: 10))).readWhole(atMost: 10),
            .read(Data(count: 10)))
    }
}
