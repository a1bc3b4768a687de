import AsyncHTTPClient
@_spi(Transport) @testable import Bluebonnet
import BluebonnetTestServer
import Foundation
import NIOCore
import NIOPosix
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Attempts that time out together while they wait in AsyncHTTPClient's pool for a connection end with the timeout
/// at once, not when the pool has let go of them (`IdleWatch`). The pool finds each request it cancels by a linear
/// search of its waiting list: 10,000 requests to a slow host, cancelled in one pass as each timed out, ended over a
/// minute after their deadline, each only once the cancels before it were done. Counted, not timed: when each
/// attempt ended, how many requests AsyncHTTPClient had already let go of.
final class IdleWatchExpiryTests: FaultServerTestCase {
    /// Hears how its attempt ended, and how many of the test's requests AsyncHTTPClient had let go of by then.
    private final class ExpirySink: TransportSink, Sendable {
        private let ending = Protected<(error: AFError?, releasedBefore: Int)?>(nil)
        private let released: Protected<Int>
        private let ended: XCTestExpectation

        init(released: Protected<Int>, ended: XCTestExpectation) {
            self.released = released
            self.ended = ended
        }

        var outcome: (error: AFError?, releasedBefore: Int)? {
            ending.read()
        }

        func transportDidSendRequestHead() {}
        func transportDidReceiveResponse(
            _ head: ResponseHead, expectedBodyLength: Int64, encodedBodyLength: Int64??, protocolName: String,
            setCookieFields: [String]
        ) -> TransportHeadReply {
            .proceed(streamingBody: false)
        }
        func transportDidSendBodyBytes(_ count: Int) {}
        func transportDidSendRequest(hadBody: Bool) {}
        func transportDidReceiveBodyBytes(_ count: Int) {}
        func transportDidReceiveBodyChunk(_ chunk: Data, readiness: TransportReadiness) {}

        func transportDidComplete(body: Data, error: AFError?) {
            let releasedBefore = released.read()
            ending.write { $0 = (error, releasedBefore) }
            ended.fulfill()
        }
    }

    private static func isTimeout(_ error: AFError?) -> Bool {
        guard case let .sessionTaskFailed(underlying)? = error else { return false }
        return (underlying as? URLError)?.code == .timedOut
    }

    func testAttemptsThatTimeOutWaitingForAConnectionEndBeforeThePoolLetsGoOfAnyOfThem() async throws {
        // One connection, which the first attempt holds (the server never answers): the others wait in the pool.
        let narrow = AsyncHTTPClientTransport(
            configuration: TransportConfiguration(requestTimeout: 3600, maximumConnectionsPerHost: 1))
        defer { narrow.shutdown() }
        let count = 2_000
        let released = Protected(0)
        let ended = expectation(description: "every attempt ended")
        ended.expectedFulfillmentCount = count
        let letGo = expectation(description: "AsyncHTTPClient let go of every request")
        letGo.expectedFulfillmentCount = count

        // Every loop is held while the attempts are made, so all of them have joined the watch, each already past
        // its deadline, before its timer can fire: one sweep finds every one timed out, however slowly a busy
        // machine makes them. A barrier, not a sleep.
        let hold = DispatchSemaphore(value: 0)
        let loops = Array(MultiThreadedEventLoopGroup.singleton.makeIterator())
        for loop in loops {
            await withCheckedContinuation { (held: CheckedContinuation<Void, Never>) in
                loop.execute {
                    held.resume()
                    hold.wait()
                }
            }
        }
        var sinks: [ExpirySink] = []
        for _ in 0..<count {
            let sink = ExpirySink(released: released, ended: ended)
            let request = TransportRequest(
                urlRequest: URLRequest(url: faults.url("/silent")), headers: [(name: "Connection", value: "close")],
                idleTimeout: nil, deadline: Date(), maximumBodySize: nil, logger: nil)
            let task = try XCTUnwrap(narrow.execute(request, sink: sink) as? AHCTransportTask)
            task.engineResult.whenComplete { _ in
                released.write { $0 += 1 }
                letGo.fulfill()
            }
            sinks.append(sink)
        }
        for _ in loops { hold.signal() }

        // The waits are bounded only as hang guards.
        await fulfillment(of: [ended], timeout: 120)
        let outcomes = sinks.compactMap { $0.outcome }
        XCTAssertEqual(outcomes.count, count)
        XCTAssertEqual(outcomes.filter { Self.isTimeout($0.error) }.count, count, "every attempt timed out")
        // Cancelled one by one, the n-th attempt ended after AsyncHTTPClient had let go of about n - 1 others.
        XCTAssertEqual(
            outcomes.map { $0.releasedBefore }.max(), 0,
            "an attempt ended only after AsyncHTTPClient had let go of other requests")
        XCTAssertEqual(narrow.idleWatch.sweepCount, 1, "one sweep found every attempt timed out")
        XCTAssertEqual(narrow.idleWatch.watchedCount, 0)
        // And the pool is left with none of them: every task is cancelled afterwards.
        await fulfillment(of: [letGo], timeout: 120)
        XCTAssertEqual(released.read(), count)
    }

    /// AsyncHTTPClient's connect timeout is also how long its pool lets a request wait for a connection, and it
    /// failed each request it timed out there with a search of its whole queue. It was the engine's idle timeout, so
    /// requests whose timeout fell between two sweeps were timed out by AsyncHTTPClient first, each at that cost; it
    /// now comes `connectTimeoutMargin` later, and the engine's sweep ends and cancels every one of them. Counted:
    /// the requests AsyncHTTPClient failed with a timeout of its own.
    func testTheEngineTimesOutRequestsWaitingInThePoolBeforeAsyncHTTPClientsOwnTimerDoes() async throws {
        let narrow = AsyncHTTPClientTransport(
            configuration: TransportConfiguration(requestTimeout: 0.2, maximumConnectionsPerHost: 1))
        defer { narrow.shutdown() }
        let count = 500
        let released = Protected(0)
        let poolTimeouts = Protected(0)
        let ended = expectation(description: "every attempt ended")
        ended.expectedFulfillmentCount = count
        let letGo = expectation(description: "AsyncHTTPClient let go of every request")
        letGo.expectedFulfillmentCount = count
        var sinks: [ExpirySink] = []
        for _ in 0..<count {
            let sink = ExpirySink(released: released, ended: ended)
            let request = TransportRequest(
                urlRequest: URLRequest(url: faults.url("/silent")), headers: [(name: "Connection", value: "close")],
                idleTimeout: nil, deadline: nil, maximumBodySize: nil, logger: nil)
            let task = try XCTUnwrap(narrow.execute(request, sink: sink) as? AHCTransportTask)
            task.engineResult.whenComplete { result in
                if case let .failure(error as HTTPClientError) = result,
                    error == .getConnectionFromPoolTimeout || error == .connectTimeout
                {
                    poolTimeouts.write { $0 += 1 }
                }
                released.write { $0 += 1 }
                letGo.fulfill()
            }
            sinks.append(sink)
        }
        await fulfillment(of: [ended, letGo], timeout: 120)
        XCTAssertEqual(sinks.compactMap { $0.outcome }.filter { Self.isTimeout($0.error) }.count, count)
        XCTAssertEqual(poolTimeouts.read(), 0, "requests AsyncHTTPClient timed out in its queue itself")
    }
}
