@testable import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `text/event-stream` parser against the WHATWG specification's rules, and event sources over real sockets.
final class ServerSentEventTests: ServerTestCase {
    /// Parses `chunks` in order.
    private func parse(_ chunks: [String], lastEventID: String? = nil) throws -> (
        events: [DataStreamRequest.ServerSentEvent], parser: ServerSentEventParser
    ) {
        var parser = ServerSentEventParser(lastEventID: lastEventID)
        var events: [DataStreamRequest.ServerSentEvent] = []
        for chunk in chunks { events += try parser.parse(Data(chunk.utf8)) }
        return (events, parser)
    }

    func testTheSpecificationsExamples() throws {
        // "data: YHOO\ndata: +2\ndata: 10\n\n" is one message whose data has two line feeds.
        XCTAssertEqual(
            try parse(["data: YHOO\ndata: +2\ndata: 10\n\n"]).events,
            [DataStreamRequest.ServerSentEvent(data: "YHOO\n+2\n10")])
        // A comment, an event with an id, one without (the id persists), and an event that resets the id.
        let stream = ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n"
        XCTAssertEqual(
            try parse([stream]).events,
            [
                DataStreamRequest.ServerSentEvent(data: "first event", lastEventID: "1"),
                DataStreamRequest.ServerSentEvent(data: "second event", lastEventID: ""),
                DataStreamRequest.ServerSentEvent(data: " third event", lastEventID: ""),
            ])
        // Two events: the first with empty data, the second with "\n"; the unterminated last block is discarded.
        XCTAssertEqual(
            try parse(["data\n\ndata\ndata\n\ndata:"]).events,
            [DataStreamRequest.ServerSentEvent(data: ""), DataStreamRequest.ServerSentEvent(data: "\n")])
        // "test" either way: the space after the colon is dropped once.
        XCTAssertEqual(
            try parse(["data:test\n\ndata: test\n\n"]).events,
            [DataStreamRequest.ServerSentEvent(data: "test"), DataStreamRequest.ServerSentEvent(data: "test")])
    }

    func testLineEndingsAndTheBOMInAnyChunking() throws {
        let expected = [DataStreamRequest.ServerSentEvent(type: "update", data: "a\nb", lastEventID: "7")]
        let text = "\u{FEFF}event: update\r\nid: 7\rdata: a\r\ndata: b\n\r\n"
        XCTAssertEqual(try parse([text]).events, expected)
        // Every split point, including inside the BOM and between a CR and its LF.
        let bytes = Array(text.utf8)
        for split in 1..<bytes.count {
            var parser = ServerSentEventParser()
            let events = try parser.parse(Data(bytes[..<split])) + parser.parse(Data(bytes[split...]))
            XCTAssertEqual(events, expected, "split at \(split)")
        }
        // A second BOM is data, not skipped.
        XCTAssertEqual(try parse(["\u{FEFF}\u{FEFF}data: x\n\n"]).events, [])
    }

    func testFieldsTheSpecificationIgnores() throws {
        let (events, parser) = try parse(
            ["id: a\u{0}b\nretry: 12x\nretry: 250\nevent: only\n\nunknown: 1\nDATA: no\ndata: yes\n\n"],
            lastEventID: "start")
        XCTAssertEqual(
            events, [DataStreamRequest.ServerSentEvent(data: "yes", lastEventID: "start")],
            "an id with NUL is ignored; an event without data is not dispatched")
        XCTAssertEqual(parser.reconnectionTime, 250)
        XCTAssertEqual(try parse(["retry: 40\ndata: x\n\n"]).events.first?.retry, 40)
    }

    func testLinesAndEventsAreBounded() {
        var parser = ServerSentEventParser()
        XCTAssertThrowsError(
            try parser.parse(Data(repeating: UInt8(ascii: "a"), count: ServerSentEventParser.maximumLineLength + 1)))
        var events = ServerSentEventParser()
        let line = Data(("data: " + String(repeating: "x", count: 1024 * 1024 - 10) + "\n").utf8)
        XCTAssertThrowsError(try (0..<20).forEach { _ in _ = try events.parse(line) })
    }

    func testStreamingServerSentEventsFromTheTestServer() async throws {
        var events: [DataStreamRequest.ServerSentEvent] = []
        for await stream in session.streamRequest(url("/sse?count=3&crlf=1")).streamTask().streamingServerSentEvents() {
            if case let .stream(result) = stream.event { events.append(try result.get()) }
        }
        XCTAssertEqual(
            events,
            (0..<3).map {
                DataStreamRequest.ServerSentEvent(type: "tick", data: "line one \($0)\nline two", lastEventID: "\($0)")
            })
    }

    func testTheResponseHandlerDeliversEvents() async throws {
        let done = expectation(description: "complete")
        let events = Recorder<DataStreamRequest.ServerSentEvent>()
        session.streamRequest(url("/sse?count=2")).responseStreamServerSentEvents(on: DispatchQueue(label: "sse")) {
            stream in
            switch stream.event {
            case let .stream(result): if let event = try? result.get() { events.append(event) }
            case .complete: done.fulfill()
            }
        }
        await fulfillment(of: [done], timeout: 30)
        XCTAssertEqual(events.values.map(\.lastEventID), ["0", "1"])
    }

    func testAnEventSourceReconnectsWithLastEventIDUntilA204() async throws {
        for drop in ["0", "1"] {
            var iterator = session.eventSource(url("/sse?count=6&disconnect_after=2&retry=20&drop=\(drop)"))
                .makeAsyncIterator()
            var ids: [String] = []
            while let event = try await iterator.next() { ids.append(event.lastEventID ?? "") }
            XCTAssertEqual(ids, ["0", "1", "2", "3", "4", "5"], "drop=\(drop): no event lost or repeated")
            if drop == "0" {
                XCTAssertEqual(iterator.connectionCount, 4, "three connections of two events, then the 204")
            } else {
                // A cut connection may lose events the server wrote but never flushed: those come on another one.
                XCTAssertGreaterThanOrEqual(iterator.connectionCount, 4)
            }
        }
    }

    func testAnEventSourceResumesAfterAGivenID() async throws {
        var ids: [String] = []
        for try await event in session.eventSource(url("/sse?count=4"), lastEventID: "1") {
            ids.append(event.lastEventID ?? "")
        }
        XCTAssertEqual(ids, ["2", "3"])
    }

    func testAnEventSourceStopsOnAResponseThatIsNotAnEventStream() async throws {
        do {
            for try await _ in session.eventSource(url("/status/500")) {}
            XCTFail("expected a validation error")
        } catch let error as AFError {
            XCTAssertEqual(error.responseCode, 500)
        }
        do {
            for try await _ in session.eventSource(url("/json")) {}
            XCTFail("expected a validation error")
        } catch let error as AFError {
            XCTAssertTrue(error.isResponseValidationError)
        }
    }

    func testCancellingTheIteratingTaskStopsTheEventSource() async throws {
        let source = session.eventSource(url("/sse?count=1000&delay_ms=20"))
        let task = Task {
            var count = 0
            for try await _ in source { count += 1 }
            return count
        }
        await arrival(of: "/sse")
        task.cancel()
        let count = try await task.value
        XCTAssertLessThan(count, 1000)
    }

    func testAHostileRetryNeitherParksNorCrashesTheSource() throws {
        // `retry: 99999999999999999` parses as an Int; its wait in nanoseconds would overflow the sleep.
        let (_, parser) = try parse(["retry: 99999999999999999\n\n"])
        XCTAssertEqual(parser.reconnectionTime, 99_999_999_999_999_999)
        XCTAssertEqual(
            DataStreamRequest.EventSource.reconnectionDelay(serverMilliseconds: parser.reconnectionTime, otherwise: 3),
            DataStreamRequest.EventSource.maximumReconnectionTime)
        XCTAssertEqual(
            DataStreamRequest.EventSource.reconnectionDelay(serverMilliseconds: nil, otherwise: .infinity),
            DataStreamRequest.EventSource.maximumReconnectionTime)
        XCTAssertEqual(
            DataStreamRequest.EventSource.reconnectionDelay(serverMilliseconds: nil, otherwise: -5),
            DataStreamRequest.EventSource.minimumReconnectionTime)
        XCTAssertEqual(DataStreamRequest.EventSource.reconnectionDelay(serverMilliseconds: 750, otherwise: 3), 0.75)
    }

    /// Issue 24 (6): `retry: 0` from a server that closes at once made 400–600 connections a second.
    func testRetryZeroHasAFloorAndConnectionsThatEndAtOnceBackOff() {
        XCTAssertEqual(DataStreamRequest.EventSource.reconnectionDelay(serverMilliseconds: 0, otherwise: 3), 0.5)
        XCTAssertEqual(DataStreamRequest.EventSource.reconnectionDelay(serverMilliseconds: 250, otherwise: 3), 0.5)
        XCTAssertEqual(DataStreamRequest.EventSource.reconnectionDelay(serverMilliseconds: nil, otherwise: .nan), 0.5)
        let waits = (0...10).map {
            DataStreamRequest.EventSource.reconnectionDelay(serverMilliseconds: 0, otherwise: 3, emptyConnections: $0)
        }
        XCTAssertEqual(waits, [0.5, 0.5, 1, 2, 4, 8, 16, 32, 60, 60, 60])
        XCTAssertEqual(
            DataStreamRequest.EventSource.reconnectionDelay(
                serverMilliseconds: 120_000, otherwise: 3, emptyConnections: 5), 120,
            "a longer retry is never shortened by the back-off's cap")
        XCTAssertEqual(
            DataStreamRequest.EventSource.reconnectionDelay(
                serverMilliseconds: 0, otherwise: 3, emptyConnections: Int.max), 60)
    }

    func testAServerThatSendsRetryZeroAndClosesIsNotHammered() async throws {
        let starts = Recorder<Date>()
        let third = expectation(description: "three connections")
        let counter = ConnectionStartRecorder(starts: starts, after: 3, fulfil: third)
        let source = session.eventSource(url("/sse?retry=0&empty=1"), interceptor: counter)
        let task = Task {
            for try await _ in source {}
        }
        await fulfillment(of: [third], timeout: 60)
        task.cancel()
        _ = try? await task.value
        let times = Array(starts.values.prefix(3))
        XCTAssertEqual(times.count, 3)
        let gaps = zip(times.dropFirst(), times).map { $0.timeIntervalSince($1) }
        XCTAssertGreaterThanOrEqual(gaps[0], 0.45, "the floor: \(gaps)")
        XCTAssertGreaterThanOrEqual(
            gaps[1], 0.95, "the back-off doubles for a second connection without an event: \(gaps)")
    }
}

/// Records when each connection of an event source is adapted, and fulfils an expectation at the `after`th.
private final class ConnectionStartRecorder: RequestInterceptor, @unchecked Sendable {
    // @unchecked: `starts` is a thread-safe recorder and the rest is immutable; XCTestExpectation is thread-safe.
    let starts: Recorder<Date>
    let after: Int
    let fulfil: XCTestExpectation

    init(starts: Recorder<Date>, after: Int, fulfil: XCTestExpectation) {
        self.starts = starts
        self.after = after
        self.fulfil = fulfil
    }

    func adapt(
        _ urlRequest: URLRequest, for session: Session,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        starts.append(Date())
        if starts.values.count == after { fulfil.fulfill() }
        completion(.success(urlRequest))
    }
}
