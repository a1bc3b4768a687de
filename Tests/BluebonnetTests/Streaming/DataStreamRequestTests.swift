@testable import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Streams over a real socket: every chunk in order then the completion, validation before data, back-pressure from
/// slow consumers, cancellation from the consuming task, and values that straddle chunks.
final class DataStreamRequestTests: ServerTestCase {
    private struct Line: Decodable, Sendable, Equatable { let id: Int; let name: String }

    /// Records a stream's events on a serial queue.
    private final class Events<Success: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var values: [Success] = []
        private var errors: [AFError] = []
        private var completion: DataStreamRequest.Completion?
        let done: XCTestExpectation

        init(_ done: XCTestExpectation) { self.done = done }

        func handle<Failure: Error>(_ stream: DataStreamRequest.Stream<Success, Failure>) {
            lock.lock(); defer { lock.unlock() }
            switch stream.event {
            case let .stream(.success(value)): values.append(value)
            case let .stream(.failure(error)): errors.append(error as? AFError ?? .explicitlyCancelled)
            case let .complete(completion): self.completion = completion; done.fulfill()
            }
        }

        var received: [Success] { lock.withLock { values } }
        var failures: [AFError] { lock.withLock { errors } }
        var ended: DataStreamRequest.Completion? { lock.withLock { completion } }
    }

    private let queue = DispatchQueue(label: "stream-tests")

    private func jsonLines(_ count: Int) -> Data {
        Data((0..<count).map { "{\"id\":\($0),\"name\":\"line \($0) ∑\"}\n" }.joined().utf8)
    }

    func testEveryChunkArrivesInOrderThenTheCompletion() async throws {
        let count = 3 * 1024 * 1024 + 5
        let events = Events<Data>(expectation(description: "complete"))
        session.streamRequest(url("/bytes/\(count)?seed=3")).responseStream(on: queue) { events.handle($0) }
        await fulfillment(of: [events.done], timeout: 60)
        XCTAssertEqual(events.received.reduce(Data(), +), SeededBytes.bytes(seed: 3, offset: 0, count: count))
        XCTAssertGreaterThan(events.received.count, 1)
        XCTAssertEqual(events.ended?.response?.statusCode, 200)
        XCTAssertNil(events.ended?.error)
        XCTAssertNotNil(events.ended?.taskMetrics)
    }

    func testAHandlerWrittenForAlamofireReadsTheStreamsAccessors() async throws {
        // As Alamofire's users write them: `stream.value`, `stream.error`, `stream.result`, `stream.completion`.
        let done = expectation(description: "complete")
        struct IDLine: Decodable, Sendable { let id: Int }
        let values = Recorder<IDLine>()
        let errors = Recorder<String>()
        let results = Recorder<Bool>()
        let completions = Recorder<Int>()
        session.streamRequest(url("/stream/3")).responseStreamDecodable(of: IDLine.self, on: queue) { stream in
            if let value = stream.value { values.append(value) }
            if let error = stream.error { errors.append("\(error)") }
            if let result = stream.result { results.append((try? result.get()) != nil) }
            if let completion = stream.completion {
                completions.append(completion.response?.statusCode ?? 0)
                XCTAssertNil(stream.result, "the completion carries no chunk")
                done.fulfill()
            }
        }
        await fulfillment(of: [done], timeout: 30)
        XCTAssertEqual(values.values.map(\.id), [0, 1, 2])
        XCTAssertEqual(errors.values, [])
        XCTAssertEqual(results.values, [true, true, true])
        XCTAssertEqual(completions.values, [200])
    }

    func testAStreamAccessorsErrorIsTheChunksFailure() {
        struct Broken: Error {}
        let request = session.streamRequest(url("/get"))
        let stream = DataStreamRequest.Stream<Int, Broken>(
            event: .stream(.failure(Broken())), token: DataStreamRequest.CancellationToken(request))
        XCTAssertNotNil(stream.error)
        XCTAssertNil(stream.value)
        XCTAssertNil(stream.completion)
    }

    func testValidationRunsOnTheHeadBeforeAnyDataFlows() async throws {
        let status = Events<Data>(expectation(description: "status"))
        session.streamRequest(url("/status/404")).validate().responseStream(on: queue) { status.handle($0) }
        let type = Events<Data>(expectation(description: "type"))
        session.streamRequest(url("/bytes/100000?seed=1")).validate(contentType: ["text/plain"]).responseStream(
            on: queue
        ) { type.handle($0) }
        await fulfillment(of: [status.done, type.done], timeout: 30)
        XCTAssertTrue(status.received.isEmpty)
        XCTAssertEqual(status.ended?.error?.responseCode, 404)
        XCTAssertTrue(type.received.isEmpty, "no byte of a refused body reaches a handler")
        XCTAssertEqual(type.ended?.error?.isResponseValidationError, true)
    }

    func testASlowHandlerStopsTheConnectionBeingRead() async throws {
        let count = 64 * 1024 * 1024
        let request = session.streamRequest(url("/bytes/\(count)?seed=2"))
        let first = expectation(description: "first chunk")
        let release = DispatchSemaphore(value: 0)
        let calls = Recorder<Int>()
        request.responseStream(on: queue) { stream in
            guard case .stream = stream.event else { return }
            calls.append(1)
            if calls.values.count == 1 {
                first.fulfill()
                release.wait()
            }
        }
        await fulfillment(of: [first], timeout: 30)
        try await Task.sleep(nanoseconds: 700_000_000)
        let readWhileBlocked = request.downloadProgress.completedUnitCount
        release.signal()
        request.cancel()
        XCTAssertLessThan(
            readWhileBlocked, 4 * 1024 * 1024,
            "\(readWhileBlocked) bytes were read while the handler was blocked; the limit is 1 MiB queued")
    }

    func testASlowAsyncConsumerStopsTheConnectionBeingReadAndLeavingTheLoopCancels() async throws {
        let request = session.streamRequest(url("/bytes/\(64 * 1024 * 1024)?seed=2"))
        var seen = 0
        for await stream in request.streamTask().streamingData() {
            guard case .stream = stream.event else { continue }
            seen += 1
            if seen == 1 { try await Task.sleep(nanoseconds: 700_000_000) }
            if seen == 2 { break }
        }
        XCTAssertLessThan(request.downloadProgress.completedUnitCount, 4 * 1024 * 1024)
        // No wait: the loop's iterator ends the stream as the loop is left, and that cancels the request then.
        XCTAssertTrue(request.isCancelled, "leaving the loop cancels the request")
    }

    func testCancellingTheConsumingTaskCancelsTheRequest() async throws {
        let request = session.streamRequest(url("/drip?numbytes=50&duration=30"))
        let consumer = Task {
            var count = 0
            for await stream in request.streamTask().streamingData() {
                if case .stream = stream.event { count += 1 }
            }
            return count
        }
        await arrival(of: "/drip")
        consumer.cancel()
        let count = await consumer.value
        XCTAssertLessThan(count, 50)
        // No wait: the task's cancellation ended the stream, which cancelled the request, before the loop ended (a
        // cancelled request stays `.cancelled`, never `.finished`).
        XCTAssertTrue(request.isCancelled)
    }

    func testJSONLinesSplitAcrossChunksDecodeWhole() async throws {
        let body = jsonLines(20)
        var values: [Line] = []
        var completed = false
        let request = session.streamRequest(url("/slices?size=7"), method: .post) { $0.httpBody = body }
        for await stream in request.streamTask().streamingDecodables(Line.self) {
            switch stream.event {
            case let .stream(result): values.append(try result.get())
            case let .complete(completion): XCTAssertNil(completion.error); completed = true
            }
        }
        XCTAssertTrue(completed)
        XCTAssertEqual(values, (0..<20).map { Line(id: $0, name: "line \($0) ∑") })
    }

    func testResponseStreamDecodableTakesHttpbinsStream() async throws {
        struct Echo: Decodable, Sendable { let id: Int }
        let events = Events<Echo>(expectation(description: "complete"))
        session.streamRequest(url("/stream/5")).responseStreamDecodable(of: Echo.self, on: queue) { events.handle($0) }
        await fulfillment(of: [events.done], timeout: 30)
        XCTAssertEqual(events.received.map(\.id), [0, 1, 2, 3, 4])
        XCTAssertTrue(events.failures.isEmpty)
    }

    func testTextKeepsCharactersSplitAcrossChunksWhole() async throws {
        let text = "naïve ∑ 😀 done"
        let events = Events<String>(expectation(description: "complete"))
        session.streamRequest(url("/slices?size=1"), method: .post) { $0.httpBody = Data(text.utf8) }
            .responseStreamString(on: queue) { events.handle($0) }
        await fulfillment(of: [events.done], timeout: 30)
        XCTAssertEqual(events.received.joined(), text)
        XCTAssertFalse(events.received.joined().contains("\u{FFFD}"))
    }

    func testAThrowingHandlerCancelsWithItsErrorWhetherOrNotAutomaticCancellationIsOn() async throws {
        struct Stop: Error {}
        for automatic in [true, false] {
            let done = expectation(description: "complete")
            let completion = Recorder<AFError?>()
            let request = session.streamRequest(
                url("/drip?numbytes=20&duration=30"), automaticallyCancelOnStreamError: automatic)
            request.responseStream(on: queue) { stream in
                switch stream.event {
                case .stream: throw Stop()
                case let .complete(end): completion.append(end.error); done.fulfill()
                }
            }
            await fulfillment(of: [done], timeout: 30)
            XCTAssertTrue(request.isCancelled, "automatic: \(automatic)")
            guard case let .responseSerializationFailed(.customSerializationFailed(error))?? = completion.values.first
            else {
                XCTFail("automatic: \(automatic): \(completion.values)")
                continue
            }
            XCTAssertTrue(error is Stop)
        }
    }

    // MARK: - Errors and cancellation in handlers, as in Alamofire

    struct Item: Decodable, Sendable { let id: Int }

    func testAChunkThatFailsToDecodeCancelsWhenAskedToAndTheCompletionSaysCancelled() async throws {
        // 50 bytes that are no JSON, arriving before the handler can fail on them: the response has ended by then.
        let events = Events<Item>(expectation(description: "complete"))
        session.streamRequest(url("/bytes/50"), automaticallyCancelOnStreamError: true)
            .responseStreamDecodable(of: Item.self, on: queue) { events.handle($0) }
        await fulfillment(of: [events.done], timeout: 30)
        XCTAssertFalse(events.failures.isEmpty, "the handler is given the failure")
        XCTAssertEqual(events.ended?.response?.statusCode, 200)
        XCTAssertEqual(events.ended?.error?.isExplicitlyCancelledError, true, "\(String(describing: events.ended))")
    }

    func testAChunkThatFailsToDecodeWithoutAutomaticCancellationEndsWithoutAnError() async throws {
        let events = Events<Item>(expectation(description: "complete"))
        session.streamRequest(url("/bytes/50")).responseStreamDecodable(of: Item.self, on: queue) { events.handle($0) }
        await fulfillment(of: [events.done], timeout: 30)
        XCTAssertFalse(events.failures.isEmpty)
        XCTAssertNil(events.ended?.error)
    }

    func testCancellingByTokenAfterTheLastChunkStillEndsCancelled() async throws {
        let done = expectation(description: "complete")
        let ended = Recorder<AFError?>()
        session.streamRequest(url("/bytes/1")).responseStream(on: queue) { stream in
            switch stream.event {
            case .stream: stream.token.cancel()
            case let .complete(completion): ended.append(completion.error); done.fulfill()
            }
        }
        await fulfillment(of: [done], timeout: 30)
        XCTAssertEqual(ended.values.first??.isExplicitlyCancelledError, true, "\(ended.values)")
    }

    func testUTF8ChunkDecoderHoldsBackOnlyAnIncompleteSequence() {
        var decoder = UTF8ChunkDecoder()
        let bytes = Array("a😀b".utf8)
        XCTAssertEqual(decoder.decode(Data(bytes[0..<3])), "a")
        XCTAssertEqual(decoder.decode(Data(bytes[3..<5])), "😀")
        XCTAssertEqual(decoder.decode(Data(bytes[5...])), "b")
        XCTAssertNil(decoder.flush())
        XCTAssertEqual(decoder.decode(Data([0xE2, 0x88])), "")
        XCTAssertEqual(decoder.flush(), "\u{FFFD}")
    }

    func testTheFramerBoundsAValueWithoutEnd() throws {
        var framer = JSONValueFramer()
        XCTAssertEqual(try framer.frames(Data("{\"a\":".utf8), isComplete: { _ in false }), [])
        XCTAssertThrowsError(
            try framer.frames(
                Data(repeating: 0x20 + 1, count: JSONValueFramer.maximumLength), isComplete: { _ in false }))
    }

    /// Issue 24 (5): a value that never ends, sent 16 KiB at a time, was scanned whole again on every chunk: 16 MiB
    /// took minutes to reach the bound. Each byte is now searched once and the value held is not parsed again: counted
    /// in bytes, not timed (a debug build on a busy machine takes seconds either way).
    func testAnEndlessValueReachesTheBoundInLinearTime() throws {
        var framer = JSONValueFramer()
        let chunk = Data(repeating: UInt8(ascii: "a"), count: 16 * 1024)
        var parsed = 0
        let isComplete: (Data) -> Bool = { candidate in
            parsed += candidate.count
            return false
        }
        XCTAssertEqual(try framer.frames(Data("[\"".utf8), isComplete: isComplete), [])
        var received = 2
        var failure: (any Error)?
        var chunks = 0
        while failure == nil, chunks <= JSONValueFramer.maximumLength / chunk.count {
            chunks += 1
            received += chunk.count
            do { _ = try framer.frames(chunk, isComplete: isComplete) } catch { failure = error }
        }
        XCTAssertEqual((failure as? AFError)?.isResponseLimitError, true, "\(String(describing: failure))")
        XCTAssertEqual(
            chunks, JSONValueFramer.maximumLength / chunk.count, "the two bytes before the chunks tip it over")
        // Searching the whole value again on every chunk would be 1,024 chunks × 8 MiB on average: 8 GiB.
        XCTAssertLessThanOrEqual(
            framer.bytesSearched, received, "\(framer.bytesSearched) bytes searched for \(received) received")
        XCTAssertLessThanOrEqual(parsed, received, "\(parsed) bytes parsed for \(received) received")
        // After the failure the framer starts clean, and a line split across chunks is still found.
        XCTAssertEqual(try framer.frames(Data("{\"a\":".utf8), isComplete: { _ in false }), [])
        XCTAssertEqual(try framer.frames(Data("1}\n".utf8), isComplete: { _ in false }), [Data("{\"a\":1}".utf8)])
    }

    func testTheFramerParsesAHeldValueOnlyOnceItsLineEnds() throws {
        var framer = JSONValueFramer()
        let parses = Recorder<Int>()
        let isComplete: (Data) -> Bool = { candidate in
            parses.append(candidate.count)
            return (try? JSONSerialization.jsonObject(with: candidate, options: .fragmentsAllowed)) != nil
        }
        // A whole value per chunk, as Alamofire reads streams: parsed at once.
        XCTAssertEqual(try framer.frames(Data("{\"a\":1}".utf8), isComplete: isComplete), [Data("{\"a\":1}".utf8)])
        // A value split over many chunks without a newline is tried once, when it starts, not again per chunk.
        _ = try framer.frames(Data("{\"b\":".utf8), isComplete: isComplete)
        for _ in 0..<100 { XCTAssertEqual(try framer.frames(Data(" ".utf8), isComplete: isComplete), []) }
        XCTAssertEqual(try framer.frames(Data("2}\n{\"c\":3}".utf8), isComplete: isComplete).count, 2)
        XCTAssertEqual(parses.values.count, 3, "\(parses.values)")
    }
}
