@testable import Bluebonnet
import BluebonnetTestServer
import Foundation
import NIOCore
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `OfflineRetrier`: requests that failed offline wait for the network, driven here by a manager the test controls,
/// and are retried when it is back or keep their error after the wait.
final class OfflineRetrierTests: ServerTestCase {
    /// A manager whose status the test sets: it reports the status at once when listened to, then each change.
    final class DrivenReachability: NetworkReachabilityManager, @unchecked Sendable {
        // @unchecked: the listener and status are behind `lock`.
        private let lock = NSLock()
        private var current: NetworkReachabilityStatus
        private var listener: (Listener, DispatchQueue)?
        let started: XCTestExpectation
        private(set) var stops = 0

        init(status: NetworkReachabilityStatus, started: XCTestExpectation) {
            current = status
            self.started = started
            super.init(watching: nil)
        }

        override var status: NetworkReachabilityStatus { lock.withLock { current } }

        @discardableResult
        override func startListening(
            onQueue queue: DispatchQueue = .main, onUpdatePerforming listener: @escaping Listener
        ) -> Bool {
            let status = lock.withLock {
                self.listener = (listener, queue)
                return current
            }
            queue.async { listener(status) }
            started.fulfill()
            return true
        }

        override func stopListening() {
            lock.withLock {
                listener = nil
                stops += 1
            }
        }

        func drive(_ status: NetworkReachabilityStatus) {
            let listener = lock.withLock {
                current = status
                return self.listener
            }
            if let (listener, queue) = listener { queue.async { listener(status) } }
        }
    }

    /// An adapter that fails the first `failures` attempts as offline.
    final class OfflineAtFirst: RequestInterceptor, @unchecked Sendable {
        // @unchecked: `remaining` is behind `lock`.
        private let lock = NSLock()
        private var remaining: Int

        init(failures: Int) { remaining = failures }

        func adapt(
            _ urlRequest: URLRequest, for session: Session,
            completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
        ) {
            let offline = lock.withLock {
                defer { remaining -= 1 }
                return remaining > 0
            }
            completion(offline ? .failure(URLError(.notConnectedToInternet)) : .success(urlRequest))
        }
    }

    /// `monitor`, counting in `made` each time the retrier makes one (its `monitor:` is an autoclosure).
    private static func counted(_ monitor: NetworkReachabilityManager?, in made: Recorder<Int>)
        -> NetworkReachabilityManager?
    {
        made.append(1)
        return monitor
    }

    func testARequestThatFailedOfflineWaitsForTheNetworkAndIsRetriedWhenItIsBack() async throws {
        let monitor = DrivenReachability(status: .notReachable, started: expectation(description: "watching"))
        let made = Recorder<Int>()
        let retrier = OfflineRetrier(
            monitor: Self.counted(monitor, in: made), maximumWait: .seconds(60))
        let finished = Recorder<Int>()
        let session: Session = session
        let url = url("/get")
        let task = Task {
            let response = await session.request(
                url, interceptor: Interceptor(adapters: [OfflineAtFirst(failures: 1)], retriers: [retrier])
            ).serializingData().response
            finished.append(1)
            return response
        }
        await fulfillment(of: [monitor.started], timeout: 30)
        XCTAssertTrue(finished.values.isEmpty, "the request waits while the network is down")
        monitor.drive(.reachable(.ethernetOrWiFi))
        let response = await task.value
        XCTAssertEqual(response.response?.statusCode, 200, String(describing: response.error))
        XCTAssertEqual(made.values.count, 1)
        XCTAssertEqual(monitor.stops, 1, "the manager is stopped once the network is back")
    }

    func testAfterTheMaximumWaitTheRequestKeepsItsError() async throws {
        let monitor = DrivenReachability(status: .notReachable, started: expectation(description: "watching"))
        let retrier = OfflineRetrier(monitor: monitor, maximumWait: .milliseconds(200))
        let response = await session.request(
            url("/get"), interceptor: Interceptor(adapters: [OfflineAtFirst(failures: 1)], retriers: [retrier])
        ).unserializedResponse()
        await fulfillment(of: [monitor.started], timeout: 30)
        XCTAssertEqual((response.error?.underlyingError as? URLError)?.code, .notConnectedToInternet)
        XCTAssertTrue(response.error?.isRequestAdaptationError == true)
        XCTAssertEqual(monitor.stops, 1)
    }

    func testANetworkAlreadyBackRetriesAtOnceAndAnErrorThatIsNotOfflineIsLeftToTheNextRetrier() async throws {
        let monitor = DrivenReachability(
            status: .reachable(.ethernetOrWiFi), started: expectation(description: "watching"))
        let retrier = OfflineRetrier(monitor: monitor, maximumWait: .seconds(60))
        let response = await session.request(
            url("/get"), interceptor: Interceptor(adapters: [OfflineAtFirst(failures: 1)], retriers: [retrier])
        ).serializingData().response
        await fulfillment(of: [monitor.started], timeout: 30)
        XCTAssertEqual(response.response?.statusCode, 200, String(describing: response.error))

        let made = Recorder<Int>()
        let untouched = OfflineRetrier(
            monitor: Self.counted(nil, in: made), maximumWait: .seconds(60))
        let asked = Recorder<Int>()
        let next = Retrier { _, _, _, completion in
            asked.append(1)
            completion(.doNotRetry)
        }
        let failed = await session.request(
            url("/status/500"), interceptor: Interceptor(adapters: [], retriers: [untouched, next])
        ).validate().unserializedResponse()
        XCTAssertEqual(failed.response?.statusCode, 500)
        XCTAssertEqual(asked.values.count, 1, "the next retrier decides")
        XCTAssertTrue(made.values.isEmpty, "no manager is made for an error that is not offline")
    }

    func testRequestsThatFailTogetherShareOneWaitAndAreRetriedTogether() async throws {
        let monitor = DrivenReachability(status: .notReachable, started: expectation(description: "watching"))
        let made = Recorder<Int>()
        let retrier = OfflineRetrier(
            monitor: Self.counted(monitor, in: made), maximumWait: .seconds(60))
        let waiting = expectation(description: "all three waiting")
        waiting.expectedFulfillmentCount = 3
        let signalling = SignalAfter(inner: retrier, signal: waiting)
        let session: Session = session
        let urls = (0..<3).map { url("/get?n=\($0)") }
        let tasks = urls.map { url in
            Task {
                await session.request(
                    url, interceptor: Interceptor(adapters: [OfflineAtFirst(failures: 1)], retriers: [signalling])
                ).serializingData().response
            }
        }
        await fulfillment(of: [waiting, monitor.started], timeout: 30)
        monitor.drive(.reachable(.ethernetOrWiFi))
        for task in tasks {
            let response = await task.value
            XCTAssertEqual(response.response?.statusCode, 200, String(describing: response.error))
        }
        XCTAssertEqual(made.values.count, 1, "one manager for the three")
        XCTAssertEqual(monitor.stops, 1)
    }

    func testTheDefaultOfflineErrorsAndTheErrorsTheEngineReportsWithoutARouteToTheNetwork() {
        XCTAssertEqual(OfflineRetrier.defaultURLErrorOfflineCodes, [.notConnectedToInternet])
        XCTAssertTrue(OfflineRetrier.defaultIsOfflineError(URLError(.notConnectedToInternet)))
        XCTAssertTrue(
            OfflineRetrier.defaultIsOfflineError(AFError.sessionTaskFailed(error: URLError(.notConnectedToInternet))))
        XCTAssertFalse(OfflineRetrier.defaultIsOfflineError(URLError(.timedOut)))
        XCTAssertFalse(OfflineRetrier.defaultIsOfflineError(AFError.explicitlyCancelled))
        XCTAssertEqual(
            TransportErrorMapper.code(for: IOError(errnoCode: ENETUNREACH, reason: "connect")), .notConnectedToInternet)
        XCTAssertEqual(
            TransportErrorMapper.code(for: IOError(errnoCode: EHOSTUNREACH, reason: "connect")), .cannotConnectToHost)
    }
}

/// Asks `inner`, then signals: `inner` has registered the request by the time its `retry` returns.
private struct SignalAfter: RequestRetrier, @unchecked Sendable {
    // @unchecked: XCTestExpectation is fulfilled from any thread, as XCTest allows.
    let inner: OfflineRetrier
    let signal: XCTestExpectation

    func retry(
        _ request: Request, for session: Session, dueTo error: any Error,
        completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        inner.retry(request, for: session, dueTo: error, completion: completion)
        signal.fulfill()
    }
}
