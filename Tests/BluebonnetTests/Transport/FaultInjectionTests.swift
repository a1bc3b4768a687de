import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Every fault a hostile server can commit, from the raw-socket `FaultServer`: each ends in its exact `AFError`,
/// within its timeout, with every handler run exactly once, and with memory bounded where the server sends without
/// end.
///
/// What ended a request is told by its error, not by how long it took: the tests of timeouts bound the time from below
/// (a timer never fires early, however busy the machine) and run on a session of their own whose other timer cannot
/// end the request first; from above only `outcome(of:)`'s hang guard bounds any of them.
final class FaultInjectionTests: FaultServerTestCase {
    /// Idle time allowed between reads in the tests of the idle timeout.
    static let idleTimeout: TimeInterval = 1
    /// The whole request's allowance in the tests of the resource deadline.
    static let resourceTimeout: TimeInterval = 3

    struct Outcome {
        let response: AFDataResponse<Data>
        let elapsed: TimeInterval
        var error: AFError? { response.error }
    }

    /// Runs `request` with three handlers of different kinds and checks each ran exactly once, also once every queue
    /// the response passed through has drained; returns how long it took. `hangGuard` bounds only a request that
    /// never ends: it is cancelled then, so the test fails instead of hanging.
    func outcome(
        of request: DataRequest, hangGuard: TimeInterval = 60, file: StaticString = #filePath, line: UInt = #line
    ) async -> Outcome {
        let start = Date()
        let responseCalls = Recorder<Int>()
        let dataCalls = Recorder<Int>()
        let queue = DispatchQueue(label: "fault.handlers")
        let ended = expectation(description: "the request ended")
        ended.assertForOverFulfill = false
        request.response(queue: queue) { _ in responseCalls.append(1) }
        request.responseData(queue: queue) { _ in
            dataCalls.append(1)
            ended.fulfill()
        }
        let serialized = request.serializingData()
        await fulfillment(of: [ended], timeout: hangGuard)
        let elapsed = Date().timeIntervalSince(start)
        if dataCalls.values.isEmpty { request.cancel() }
        let response = await serialized.response
        // A barrier, not a wait: a second call already on its way has run once these have drained.
        for owner in [session, patientSession, timedSession].compactMap({ $0 }) { owner.drain() }
        queue.sync {}
        XCTAssertEqual(responseCalls.values.count, 1, "response handler calls", file: file, line: line)
        XCTAssertEqual(dataCalls.values.count, 1, "responseData handler calls", file: file, line: line)
        XCTAssertTrue(request.isFinished || request.isCancelled, "state \(request.state)", file: file, line: line)
        return Outcome(response: response, elapsed: elapsed)
    }

    func assertTransportError(
        _ outcome: Outcome, _ code: URLError.Code, file: StaticString = #filePath, line: UInt = #line
    ) {
        guard case let .sessionTaskFailed(error)? = outcome.error, let urlError = error as? URLError else {
            return XCTFail(
                "expected sessionTaskFailed(\(code)), got \(String(describing: outcome.error))", file: file, line: line)
        }
        XCTAssertEqual(urlError.code, code, "\(urlError)", file: file, line: line)
    }

    func request(_ path: String) -> DataRequest {
        session.request(faults.url(path))
    }

    /// A request on a session of its own with these timeouts, for the tests of one of them.
    func request(_ path: String, idle: TimeInterval, resource: TimeInterval) -> DataRequest {
        let configuration = URLSessionConfiguration.af.default
        configuration.timeoutIntervalForRequest = idle
        configuration.timeoutIntervalForResource = resource
        timedSession = Session(configuration: configuration)
        return timedSession!.request(faults.url(path))
    }

    var timedSession: Session?

    /// A request on a session that waits long enough for the server to make a compression bomb the first time.
    func patientRequest(_ path: String) -> DataRequest {
        let configuration = URLSessionConfiguration.af.default
        configuration.timeoutIntervalForRequest = 30
        patientSession = Session(configuration: configuration)
        return patientSession!.request(faults.url(path))
    }

    var patientSession: Session?

    // MARK: - Connections that end early

    func testCloseAfterTheHeadIsConnectionLost() async {
        let outcome = await outcome(of: request("/head-then-close"))
        assertTransportError(outcome, .networkConnectionLost)
        XCTAssertEqual(outcome.response.response?.statusCode, 200, "the head that arrived is kept")
    }

    func testCloseMidBodyIsConnectionLost() async {
        assertTransportError(await outcome(of: request("/close-mid-body")), .networkConnectionLost)
    }

    func testTruncatedChunkedBodyIsConnectionLost() async {
        assertTransportError(await outcome(of: request("/chunked-truncated")), .networkConnectionLost)
    }

    func testMalformedChunkSizeCannotBeParsed() async {
        assertTransportError(await outcome(of: request("/chunked-malformed")), .cannotParseResponse)
    }

    func testResetAtEveryPhaseIsConnectionLost() async {
        for phase in ["before-head", "after-head", "mid-body"] {
            let outcome = await outcome(of: request("/reset?phase=\(phase)"))
            assertTransportError(outcome, .networkConnectionLost)
        }
    }

    // MARK: - Time

    func testAServerThatNeverAnswersTimesOutAtTheIdleTimeout() async {
        // The resource deadline is an hour away: only the idle timeout can end it.
        let outcome = await outcome(of: request("/silent", idle: Self.idleTimeout, resource: 3600))
        assertTransportError(outcome, .timedOut)
        XCTAssertGreaterThanOrEqual(outcome.elapsed, Self.idleTimeout * 0.9)
    }

    func testAStallMidBodyTimesOutAtTheIdleTimeout() async {
        let outcome = await outcome(of: request("/stall-mid-body", idle: Self.idleTimeout, resource: 3600))
        assertTransportError(outcome, .timedOut)
        XCTAssertGreaterThanOrEqual(outcome.elapsed, Self.idleTimeout * 0.9)
    }

    func testEveryReadRestartsTheIdleTimeout() async {
        // Thirty bytes 100 ms apart take 2.9 s, longer than the 2 s idle timeout, and arrive whole. Each gap is a
        // twentieth of the timeout, so a busy machine that stretches the gaps does not reach it.
        let outcome = await outcome(of: request("/drip?bytes=30&interval_ms=100", idle: 2, resource: 3600))
        XCTAssertNil(outcome.error)
        XCTAssertEqual(outcome.response.data?.count, 30)
        XCTAssertGreaterThan(outcome.elapsed, 2)
    }

    func testADripUnderTheIdleTimeoutEndsAtTheResourceDeadline() async {
        // One byte every 200 ms for 20 s, against an idle timeout fifty times the gap: only the deadline on the whole
        // request can end it before the body does.
        let outcome = await outcome(
            of: request("/drip?bytes=100&interval_ms=200", idle: 10, resource: Self.resourceTimeout))
        assertTransportError(outcome, .timedOut)
        XCTAssertGreaterThanOrEqual(outcome.elapsed, Self.resourceTimeout * 0.9)
    }

    func testAnEndlessRunOfInterimResponsesTimesOut() async {
        let outcome = await outcome(
            of: request("/informational?count=200000", idle: Self.idleTimeout, resource: Self.resourceTimeout))
        assertTransportError(outcome, .timedOut)
    }

    func testInterimResponsesBeforeTheFinalOneAreSkipped() async {
        let outcome = await outcome(of: request("/informational?count=1000&final=1"))
        XCTAssertNil(outcome.error)
        XCTAssertEqual(outcome.response.response?.statusCode, 200)
        XCTAssertEqual(outcome.response.data, Data("ok".utf8))
    }

    // MARK: - Malformed heads

    func testMalformedStatusLinesCannotBeParsed() async {
        for line in ["HTTP/1.1 abc OK", "HTTP/1.1 2000 OK", "SPDY/9 200 OK", "HTTP/1.1"] {
            let escaped = line.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let outcome = await outcome(of: request("/status-line?line=\(escaped)"))
            assertTransportError(outcome, .cannotParseResponse)
        }
    }

    func testMalformedOrConflictingContentLengthsCannotBeParsed() async {
        for query in ["value=-1", "value=abc", "value=5&value=6", "value=99999999999999999999999"] {
            let outcome = await outcome(of: request("/content-length?\(query)"))
            assertTransportError(outcome, .cannotParseResponse)
        }
    }

    func testAnOversizedHeadIsRefusedWithoutExhaustingMemory() async {
        let sampler = ResidentMemorySampler()
        let outcome = await outcome(of: request("/huge-head?kb=262144"))
        let grown = sampler.stop()
        assertTransportError(outcome, .cannotParseResponse)
        XCTAssertLessThan(
            grown, (64 << 20) + ResidentMemorySampler.sanitizerAllowance, "resident memory grew by \(grown) bytes")
    }

    func testAHeadOfManyFieldsIsRefused() async {
        let outcome = await outcome(of: request("/many-headers?count=200000"))
        assertTransportError(outcome, .cannotParseResponse)
    }

    // MARK: - Size

    func assertBodyTooLarge(_ outcome: Outcome, limit: Int64, file: StaticString = #filePath, line: UInt = #line) {
        guard case .responseLimitExceeded(.maximumResponseSizeExceeded(limit))? = outcome.error else {
            return XCTFail(
                "expected maximumResponseSizeExceeded(\(limit)), got \(String(describing: outcome.error))",
                file: file, line: line)
        }
        XCTAssertNil(outcome.response.data, "nothing of an over-limit body is handed out", file: file, line: line)
        let description = outcome.error?.localizedDescription ?? ""
        XCTAssertTrue(
            description.contains("\(limit) bytes") && description.contains("maximumResponseSize"),
            description, file: file, line: line)
    }

    func testAnEndlessBodyStopsAtTheSessionsDefaultLimitWithBoundedMemory() async {
        let sampler = ResidentMemorySampler()
        let outcome = await outcome(of: request("/endless"))
        let grown = sampler.stop()
        assertBodyTooLarge(outcome, limit: Session.defaultMaximumResponseSize)
        // The body grows in one buffer up to the limit; twice the limit allows for its last reallocation.
        XCTAssertLessThan(
            grown, 2 * Session.defaultMaximumResponseSize + (32 << 20) + ResidentMemorySampler.sanitizerAllowance,
            "resident memory grew by \(grown) bytes")
    }

    func testAnEndlessBodyStopsAtARequestsOwnLimit() async {
        let limit: Int64 = 2 << 20
        let outcome = await outcome(of: request("/endless").maximumResponseSize(limit))
        assertBodyTooLarge(outcome, limit: limit)
        // The server cannot have got far past the limit before the client left.
        XCTAssertLessThan(faults.bytesSent, limit + (16 << 20))
    }

    func testADeclaredLengthOverTheLimitFailsAtTheHead() async {
        let limit: Int64 = 1 << 20
        let outcome = await outcome(of: request("/declared?length=1099511627776").maximumResponseSize(limit))
        assertBodyTooLarge(outcome, limit: limit)
        XCTAssertEqual(outcome.response.response?.statusCode, 200)
    }

    func testAGzipBombFailsOnTheRatioLimitAndSaysSo() async {
        let sampler = ResidentMemorySampler()
        let outcome = await outcome(of: patientRequest("/gzip?kind=zeros&mib=256"))
        let grown = sampler.stop()
        guard case let .responseLimitExceeded(.decompressionRatioExceeded(ratio, underlying))? = outcome.error else {
            return XCTFail("\(String(describing: outcome.error))")
        }
        XCTAssertEqual(ratio, 200)
        XCTAssertNotNil(outcome.error?.underlyingError)
        XCTAssertFalse("\(underlying)".isEmpty)
        XCTAssertTrue(outcome.error?.localizedDescription.contains("compression") == true)
        XCTAssertLessThan(
            grown, (64 << 20) + ResidentMemorySampler.sanitizerAllowance, "resident memory grew by \(grown) bytes")
    }

    func testACompressedBodyUnderTheRatioLimitStopsAtTheSizeLimitOnDecodedBytes() async {
        // About 20:1, so the ratio limit lets it through: 3 MiB on the wire, 64 MiB decoded, 8 MiB allowed.
        let limit: Int64 = 8 << 20
        let sampler = ResidentMemorySampler()
        let outcome = await outcome(
            of: patientRequest("/gzip?kind=sparse&mib=64").maximumResponseSize(limit))
        let grown = sampler.stop()
        assertBodyTooLarge(outcome, limit: limit)
        XCTAssertLessThan(faults.bytesSent, limit, "the compressed body was smaller than the limit")
        XCTAssertLessThan(
            grown, 4 * limit + (32 << 20) + ResidentMemorySampler.sanitizerAllowance,
            "resident memory grew by \(grown) bytes")
    }

    // MARK: - Redirects

    func testRedirectsToOutOfRangePortsFailWithoutConnecting() async {
        for location in [
            "http://127.0.0.1:99999/x", "http://127.0.0.1:65536/", "http://localhost:99999/",
            "http://localhost:\(faults.port + 65536)/", "http://[::1]:70000/",
        ] {
            let escaped = location.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let outcome = await outcome(of: request("/redirect?location=\(escaped)"))
            guard case let .redirectFailed(.invalidPort(url))? = outcome.error else {
                XCTFail("\(location): \(String(describing: outcome.error))")
                continue
            }
            XCTAssertEqual(url.absoluteString, location)
        }
        // One connection per redirect response; none to where a wrapped port would have pointed.
        XCTAssertEqual(faults.connectionCount, 5)
    }

    func testRedirectsToHostsThatCannotBeFail() async {
        for location in ["http://%00/", "http://exa%20mple.com/"] {
            let escaped = location.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
            let outcome = await outcome(of: request("/redirect?location=\(escaped)"))
            guard case .redirectFailed(.invalidHost)? = outcome.error else {
                XCTFail("\(location): \(String(describing: outcome.error))")
                continue
            }
        }
    }
}
