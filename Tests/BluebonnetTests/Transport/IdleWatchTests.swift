@_spi(Transport) @testable import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The engine's one idle timer (`IdleWatch`), driven through the engine itself against the raw-socket fault server:
/// each attempt's own timeout is met at its moment whatever else is watched, and every attempt that ends leaves the
/// table.
///
/// Timers are checked from below (never before their moment, which holds however busy the machine); from above only
/// a hang guard bounds them (`end(of:)`), against an engine whose own timeout is an hour, so an attempt that ended did
/// so at its own timeout or deadline.
final class IdleWatchTests: FaultServerTestCase {
    /// The engine's idle timeout, for attempts without one of their own.
    private static let engineTimeout: TimeInterval = 3600
    private var transport: AsyncHTTPClientTransport!

    override func setUp() async throws {
        try await super.setUp()
        transport = AsyncHTTPClientTransport(
            configuration: TransportConfiguration(requestTimeout: Self.engineTimeout, maximumConnectionsPerHost: 8))
    }

    override func tearDown() async throws {
        transport?.shutdown()
        transport = nil
        try await super.tearDown()
    }

    private func start(
        _ path: String, idleTimeout: TimeInterval? = nil, deadline: Date? = nil
    ) -> (CompletionSink, any TransportTask) {
        Self.start(faults.url(path), on: transport, idleTimeout: idleTimeout, deadline: deadline)
    }

    private static func start(
        _ url: URL, on transport: AsyncHTTPClientTransport, idleTimeout: TimeInterval? = nil, deadline: Date? = nil
    ) -> (CompletionSink, any TransportTask) {
        // The fault server answers one request a connection.
        CompletionSink.start(
            url, on: transport, headers: [(name: "Connection", value: "close")], idleTimeout: idleTimeout,
            deadline: deadline)
    }

    /// How `sink`'s attempt ended. The wait is bounded only as a hang guard: an attempt whose timeout is never met
    /// fails the test after `hangGuard` seconds instead of waiting for the engine's hour.
    private func end(
        of sink: CompletionSink, hangGuard: TimeInterval = 60, file: StaticString = #filePath, line: UInt = #line
    ) async -> AFError? {
        let ended = expectation(description: "the attempt ended")
        Task {
            _ = await sink.completion()
            ended.fulfill()
        }
        await fulfillment(of: [ended], timeout: hangGuard)
        guard sink.isComplete else {
            XCTFail("the attempt never ended", file: file, line: line)
            return nil
        }
        return await sink.completion()
    }

    private func assertTimedOut(_ error: AFError?, file: StaticString = #filePath, line: UInt = #line) {
        guard case let .sessionTaskFailed(underlying)? = error else {
            return XCTFail("expected a timeout, got \(String(describing: error))", file: file, line: line)
        }
        XCTAssertEqual((underlying as? URLError)?.code, .timedOut, file: file, line: line)
    }

    func testATighterTimeoutIsMetWhileALongerOneIsArmed() async {
        // The first attempt arms the timer for the engine's hour; the second's 0.4 s must arm it earlier, not wait
        // behind it.
        let (patient, patientTask) = start("/silent")
        await arrival(of: "/silent")
        let started = Date()
        let (hurried, _) = start("/silent", idleTimeout: 0.4)
        assertTimedOut(await end(of: hurried))
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.35, "never before its timeout")
        XCTAssertFalse(patient.isComplete, "the hour-long attempt is still running")
        XCTAssertEqual(transport.idleWatch.watchedCount, 1)
        patientTask.cancel()
        _ = await end(of: patient)
        XCTAssertEqual(transport.idleWatch.watchedCount, 0)
    }

    func testDeadlinesSpreadThinlyShareSweepsAndEachIsStillMet() async throws {
        // 32 idle attempts whose deadlines fall 4 ms apart: a sweep for each would be 32 sweeps of up to 32 requests
        // (with thousands watched, a sweep of thousands every few microseconds); sweeps come at least 50 ms apart.
        // The deadlines are moments fixed before any attempt starts, two seconds on, so they stay 4 ms apart however
        // slowly a busy machine starts the 32 (timeouts counted from each start would spread with the starts).
        let wide = AsyncHTTPClientTransport(
            configuration: TransportConfiguration(requestTimeout: Self.engineTimeout, maximumConnectionsPerHost: 64))
        defer { wide.shutdown() }
        let first = Date().addingTimeInterval(2)
        var attempts: [(CompletionSink, Date)] = []
        for index in 0..<32 {
            let deadline = first.addingTimeInterval(Double(index) * 0.004)
            attempts.append((Self.start(faults.url("/silent"), on: wide, deadline: deadline).0, deadline))
        }
        for (sink, deadline) in attempts {
            assertTimedOut(await end(of: sink))
            XCTAssertGreaterThanOrEqual(Date(), deadline.addingTimeInterval(-0.05), "never before its deadline")
        }
        XCTAssertLessThanOrEqual(wide.idleWatch.sweepCount, 8, "sweeps spaced, not one per attempt")
        XCTAssertEqual(wide.idleWatch.watchedCount, 0)
    }

    func testTheTimerIsArmedAgainForAttemptsThatComeAfterItFired() async {
        // An attempt that found no timer armed would wait for the engine's hour: the hang guard fails it.
        for _ in 0..<3 {
            let (sink, _) = start("/silent", idleTimeout: 0.3)
            assertTimedOut(await end(of: sink))
        }
        XCTAssertEqual(transport.idleWatch.watchedCount, 0)
    }

    func testATimerThatFiresAtOnceDoesNotKeepLaterAttemptsFromArmingOne() async {
        // A deadline already past fires on the loop while the arming thread is still recording the timer. Recorded
        // after it fired, that timer looked armed forever, and a later attempt's timeout was never met (seen in
        // Alamofire's `testThatDataRequestsCallRequestModifiersOnRetry`: a 1 ms timeout, then its retry).
        for _ in 0..<20 {
            let (expired, _) = start("/silent", deadline: Date())
            assertTimedOut(await end(of: expired))
            let (later, _) = start("/silent", idleTimeout: 0.05)
            assertTimedOut(await end(of: later))
        }
    }

    func testEveryAttemptThatEndsLeavesTheWatch() async {
        // Successes, failures and cancellations, one after another and together.
        for path in ["/drip?bytes=4&interval_ms=1", "/head-then-close", "/chunked-malformed"] {
            let (sink, _) = start(path)
            _ = await sink.completion()
        }
        let transport = transport!
        let silent = faults.url("/silent")
        let drip = faults.url("/drip?bytes=2&interval_ms=1")
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<24 {
                group.addTask {
                    let (sink, task) = Self.start(index % 3 == 0 ? silent : drip, on: transport)
                    if index % 3 == 0 { task.cancel() }
                    _ = await sink.completion()
                }
            }
        }
        XCTAssertEqual(transport.idleWatch.watchedCount, 0)
    }

    func testTheResourceDeadlineEndsAnAttemptThatIsNeverIdle() async {
        // A byte every 100 ms keeps the attempt from being idle for the 10 s the bytes take; the request's deadline
        // 0.6 s on still ends it, and not before.
        let started = Date()
        let (sink, _) = start("/drip?bytes=100&interval_ms=100", deadline: started.addingTimeInterval(0.6))
        assertTimedOut(await end(of: sink))
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.55, "never before its deadline")
    }

    func testTheResourceDeadlineHoldsForASuspendedAttempt() async {
        // A suspended attempt is not idle, but the whole request's deadline is the caller's own limit: without it the
        // attempt would wait for ever, and the hang guard fails the test.
        let started = Date()
        let (sink, task) = start("/drip?bytes=6&interval_ms=100", deadline: started.addingTimeInterval(0.5))
        task.suspend()
        assertTimedOut(await end(of: sink))
    }

    func testASuspendedAttemptIsNotIdle() async {
        // Reading stops while the request is suspended: the wait is the caller's, so the 0.3 s timeout must not end
        // it; once resumed, the body arrives whole.
        let (sink, task) = start("/drip?bytes=6&interval_ms=100", idleTimeout: 0.3)
        task.suspend()
        await arrival(of: "/drip")
        try? await Task.sleep(nanoseconds: 900_000_000)
        XCTAssertFalse(sink.isComplete, "a suspended attempt timed out")
        task.resume()
        let error = await sink.completion()
        XCTAssertNil(error)
        XCTAssertEqual(sink.body.count, 6)
    }
}

/// What counts as progress for the idle timeout (issue 44, item 7): bytes of the final response, once its head is
/// whole. Interim `1xx` heads do not count (a server could otherwise hold a request open forever with
/// `102 Processing`), nor does a status line that stops half-way.
extension IdleWatchTests {
    func testInterimResponsesAreNoProgress() async {
        // A `102` every 200 ms for 10 s, then the final response; the attempt's idle timeout is 1 s.
        let (sink, _) = start("/interim?count=50&interval_ms=200", idleTimeout: 1)
        assertTimedOut(await end(of: sink))
        XCTAssertTrue(sink.body.isEmpty)
    }

    func testAStatusLineThatStopsHalfWayIsNoProgress() async {
        let (sink, _) = start("/partial-status-line", idleTimeout: 1)
        assertTimedOut(await end(of: sink))
    }
}
