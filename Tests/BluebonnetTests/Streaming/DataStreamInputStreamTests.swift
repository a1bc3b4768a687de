@testable import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(FoundationXML)
import FoundationXML
#endif

/// `asInputStream(bufferSize:)`: a blocking reader of the body, fed as it arrives, with back-pressure from the reader,
/// 0 at a complete end, -1 with the error at a failed one, and the request cancelled when the reader gives up.
final class DataStreamInputStreamTests: ServerTestCase {
    /// Reads `stream` to its end on a thread of its own (reads block), in `size`-byte reads, pausing `pause` seconds
    /// after each; `onRead` is told how many bytes were read so far after each read.
    private func readAll(
        _ stream: InputStream, size: Int = 4096, pause: TimeInterval = 0,
        onRead: @escaping @Sendable (Int) -> Void = { _ in }
    ) async -> (Data, Int) {
        let box = UncheckedSendableStream(stream)
        return await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var body = Data()
                var buffer = [UInt8](repeating: 0, count: size)
                var last = 0
                while true {
                    last = box.stream.read(&buffer, maxLength: size)
                    guard last > 0 else { break }
                    body.append(buffer, count: last)
                    onRead(body.count)
                    if pause > 0 { Thread.sleep(forTimeInterval: pause) }
                }
                continuation.resume(returning: (body, last))
            }
        }
    }

    func testTheWholeBodyIsReadInOrderThenZero() async throws {
        let count = 2 * 1024 * 1024 + 3
        let stream = try XCTUnwrap(session.streamRequest(url("/bytes/\(count)?seed=5")).asInputStream())
        stream.open()
        let (body, last) = await readAll(stream, size: 10_000)
        XCTAssertEqual(body, SeededBytes.bytes(seed: 5, offset: 0, count: count))
        XCTAssertEqual(last, 0)
        XCTAssertEqual(stream.streamStatus, .atEnd)
        XCTAssertFalse(stream.hasBytesAvailable)
    }

    func testXMLParserReadsTheResponseFromTheStream() async throws {
        let stream = try XCTUnwrap(session.streamRequest(url("/xml")).asInputStream())
        let parsed = await withCheckedContinuation { continuation in
            let box = UncheckedSendableStream(stream)
            Thread.detachNewThread {
                let parser = XMLParser(stream: box.stream)
                continuation.resume(returning: (parser.parse(), parser.parserError == nil))
            }
        }
        XCTAssertTrue(parsed.0)
        XCTAssertTrue(parsed.1)
    }

    func testASlowReaderHoldsBackTheConnection() async throws {
        // 8 MiB against a reader that takes 64 KiB every 20 ms: the request may run at most its window ahead of what
        // was read. Counted at every read, in bytes, so it holds however slow the machine; unthrottled, loopback
        // delivers 8 MiB long before a reader that needs ~2.5 s has read half of it.
        let count = 8 * 1024 * 1024
        let request = session.streamRequest(url("/bytes/\(count)?seed=6"))
        let stream = try XCTUnwrap(request.asInputStream(bufferSize: 64 * 1024))
        stream.open()
        let ahead = Recorder<Int64>()
        let (body, _) = await readAll(stream, size: 64 * 1024, pause: 0.02) { read in
            ahead.append(request.downloadProgress.completedUnitCount - Int64(read))
        }
        XCTAssertEqual(body.count, count)
        XCTAssertEqual(body, SeededBytes.bytes(seed: 6, offset: 0, count: count))
        let furthest = ahead.values.max() ?? 0
        XCTAssertLessThan(furthest, Int64(count / 2), "the connection ran \(furthest) bytes ahead of the reader")
    }

    func testAFailedBodyEndsWithMinusOneAndTheError() async throws {
        let stream = try XCTUnwrap(session.streamRequest(url("/truncated/200000")).asInputStream())
        stream.open()
        let (body, last) = await readAll(stream)
        XCTAssertEqual(body.count, 100_000)
        XCTAssertEqual(last, -1)
        XCTAssertEqual(stream.streamStatus, .error)
        XCTAssertNotNil(stream.streamError as? AFError)
    }

    func testClosingBeforeTheEndCancelsTheRequest() async throws {
        let request = session.streamRequest(url("/drip?numbytes=50&duration=30"))
        let stream = try XCTUnwrap(request.asInputStream())
        stream.open()
        var byte: UInt8 = 0
        let first = await withCheckedContinuation { continuation in
            let box = UncheckedSendableStream(stream)
            Thread.detachNewThread {
                var one: UInt8 = 0; continuation.resume(returning: box.stream.read(&one, maxLength: 1))
            }
        }
        XCTAssertEqual(first, 1)
        stream.close()
        let completed = expectation(description: "complete")
        request.responseStream(on: .global()) { stream in
            if case let .complete(completion) = stream.event {
                XCTAssertEqual(completion.error?.isExplicitlyCancelledError, true)
                completed.fulfill()
            }
        }
        await fulfillment(of: [completed], timeout: 60)
        XCTAssertTrue(request.isCancelled)
        XCTAssertEqual(stream.read(&byte, maxLength: 1), -1)
        XCTAssertEqual(stream.streamStatus, .closed)
    }

    func testReadingBeforeOpenFails() throws {
        var byte: UInt8 = 0
        let stream = try XCTUnwrap(session.streamRequest(url("/bytes/10")).asInputStream())
        XCTAssertEqual(stream.streamStatus, .notOpen)
        XCTAssertEqual(stream.read(&byte, maxLength: 1), -1)
    }
}

/// Hands an `InputStream` to the one thread that reads it.
private struct UncheckedSendableStream: @unchecked Sendable {
    let stream: InputStream
    init(_ stream: InputStream) { self.stream = stream }
}
