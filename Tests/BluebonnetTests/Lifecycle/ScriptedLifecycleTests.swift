@testable import Bluebonnet
import BluebonnetTesting
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Lifecycle races with every event in an order the test names, on `BluebonnetTesting`'s `StubTransport`.
final class ScriptedLifecycleTests: XCTestCase {
    let url = "http://scripted.invalid/resource"
    let queue = DispatchQueue(label: "scripted.lifecycle")

    /// A decision the test hands over when it chooses.
    final class Held<Decision: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private var completion: (@Sendable (Decision) -> Void)?
        let asked = XCTestExpectation(description: "decision asked")

        func hold(_ completion: @escaping @Sendable (Decision) -> Void) {
            lock.lock(); self.completion = completion; lock.unlock()
            asked.fulfill()
        }

        func release(_ decision: Decision) {
            lock.lock(); let completion = self.completion; lock.unlock()
            completion?(decision)
        }
    }

    struct HeldRedirect: RedirectHandler {
        let held: Held<URLRequest?>
        func request(
            _ request: Request, willBeRedirectedTo newRequest: URLRequest, for response: HTTPURLResponse,
            completion: @escaping @Sendable (URLRequest?) -> Void
        ) {
            held.hold(completion)
        }
    }

    struct HeldRetrier: RequestInterceptor {
        let held: Held<RetryResult>
        func retry(
            _ request: Request, for session: Session, dueTo error: any Error,
            completion: @escaping @Sendable (RetryResult) -> Void
        ) {
            held.hold(completion)
        }
    }

    // MARK: - Cancel racing completion

    func testCompletionBeforeCancelKeepsTheResult() async {
        let transport = StubTransport()
        let session = transport.session()
        let request = session.request(url)
        let response = request.serializingString()
        let attempt = await transport.attempt(1)
        attempt.succeed(body: "done")
        let result = await response.response
        request.cancel()
        XCTAssertEqual(result.value, "done")
        XCTAssertEqual(request.state, .finished)
        XCTAssertEqual(attempt.taskCalls, [])
    }

    func testCancelBeforeCompletionWinsEvenWhenTheBodyArrivesAfter() async {
        let transport = StubTransport()
        let session = transport.session()
        let request = session.request(url)
        let response = request.serializingString()
        let attempt = await transport.attempt(1)
        attempt.respond()
        request.cancel()
        attempt.complete(body: Data("late".utf8))
        let result = await response.response
        XCTAssertEqual(result.error?.isExplicitlyCancelledError, true)
        XCTAssertEqual(attempt.taskCalls, ["cancel"])
        XCTAssertEqual(request.state, .cancelled)
    }

    // MARK: - Task events under races

    /// Task events, in order, on one serial queue.
    final class TaskEvents: EventMonitor, @unchecked Sendable {
        // @unchecked: `events` is only touched on `queue`, which is serial.
        let queue = DispatchQueue(label: "scripted.task.events")
        private var events: [String] = []
        var recorded: [String] { queue.sync { events } }
        func request(_ request: Request, didCreateTask task: URLSessionTask) { events.append("create") }
        func request(_ request: Request, didResumeTask task: URLSessionTask) { events.append("resume") }
        func request(_ request: Request, didSuspendTask task: URLSessionTask) { events.append("suspend") }
        func request(_ request: Request, didCancelTask task: URLSessionTask) { events.append("cancel") }
        func request(_ request: Request, didGatherTaskMetrics metrics: RequestTaskMetrics) { events.append("metrics") }
        func request(_ request: Request, didCompleteTask task: URLSessionTask, with error: AFError?) {
            events.append(error == nil ? "complete" : "fail")
        }
    }

    func testACancelThatRacesTheCompletionReportsTheCancelledTaskOnceBeforeItCompletes() async {
        let transport = StubTransport()
        let monitor = TaskEvents()
        let session = transport.session(eventMonitors: [monitor])
        let request = session.request(url)
        let response = request.serializingData()
        let attempt = await transport.attempt(1)
        attempt.respond()
        attempt.completeWhenCancelled()
        request.cancel()
        _ = await response.response
        session.drain()
        XCTAssertEqual(monitor.recorded, ["create", "resume", "cancel", "metrics", "fail"])
    }

    func testACancelAfterTheCompletionReportsNoTaskCancel() async {
        let transport = StubTransport()
        let monitor = TaskEvents()
        let session = transport.session(eventMonitors: [monitor])
        let request = session.request(url)
        let response = request.serializingData()
        let attempt = await transport.attempt(1)
        attempt.succeed(body: "done")
        _ = await response.response
        request.cancel()
        session.drain()
        XCTAssertEqual(monitor.recorded, ["create", "resume", "metrics", "complete"])
    }

    func testATaskSuspendedAndResumedReportsBoth() async {
        let transport = StubTransport()
        let monitor = TaskEvents()
        let session = transport.session(eventMonitors: [monitor])
        let request = session.request(url)
        let response = request.serializingData()
        let attempt = await transport.attempt(1)
        request.suspend()
        request.resume()
        attempt.succeed()
        _ = await response.response
        session.drain()
        XCTAssertEqual(monitor.recorded, ["create", "resume", "suspend", "resume", "metrics", "complete"])
        XCTAssertEqual(attempt.taskCalls, ["suspend", "resume"])
    }

    func testARetryMakesATaskPerAttemptAndAMetricsEntryPerAttempt() async {
        let transport = StubTransport()
        let monitor = TaskEvents()
        let retryOnce = Retrier { request, _, _, completion in completion(request.retryCount < 1 ? .retry : .doNotRetry)
        }
        let session = transport.session(interceptor: retryOnce, eventMonitors: [monitor])
        let request = session.request(url)
        let response = request.serializingData()
        await transport.attempt(1).complete(error: URLError(.networkConnectionLost))
        await transport.attempt(2).succeed()
        _ = await response.response
        session.drain()
        XCTAssertEqual(
            monitor.recorded, ["create", "resume", "metrics", "fail", "create", "resume", "metrics", "complete"])
        XCTAssertEqual(request.allTaskMetrics.count, 2)
    }

    // MARK: - Cancel during decisions

    func testCancelDuringARedirectDecisionEndsTheRequestAndTheLateDecisionIsDropped() async {
        let transport = StubTransport()
        let held = Held<URLRequest?>()
        let session = transport.session(redirectHandler: HeldRedirect(held: held))
        let request = session.request(url)
        let response = request.serializingData()
        let attempt = await transport.attempt(1)
        attempt.respond(status: 302, headers: ["Location": "/elsewhere"])
        attempt.complete()
        await fulfillment(of: [held.asked], timeout: 60)
        request.cancel()
        let result = await response.response
        XCTAssertEqual(result.error?.isExplicitlyCancelledError, true)
        held.release(URLRequest(url: URL(string: "http://scripted.invalid/elsewhere")!))
        session.drain()
        XCTAssertEqual(transport.attemptCount, 1, "a decision after the cancel sends nothing")
        XCTAssertEqual(request.state, .cancelled)
    }

    func testCancelDuringARetryDecisionEndsTheRequestAndTheLateRetryIsDropped() async {
        let transport = StubTransport()
        let held = Held<RetryResult>()
        let session = transport.session(interceptor: HeldRetrier(held: held))
        let request = session.request(url)
        let response = request.serializingData()
        let attempt = await transport.attempt(1)
        attempt.complete(error: URLError(.networkConnectionLost))
        await fulfillment(of: [held.asked], timeout: 60)
        request.cancel()
        let result = await response.response
        XCTAssertEqual(result.error?.isExplicitlyCancelledError, true)
        held.release(.retry)
        session.drain()
        XCTAssertEqual(transport.attemptCount, 1)
        XCTAssertEqual(request.retryCount, 0)
    }

    func testCancelDuringARetryDelayEndsTheRequestAtOnce() async {
        // An hour's delay: the request ends only if the delay is a timer the cancel stops, not a wait; the hang guard
        // fails the test long before the hour.
        let transport = StubTransport()
        let session = transport.session(
            interceptor: Retrier { _, _, _, completion in completion(.retryWithDelay(3600)) })
        let request = session.request(url)
        let ended = expectation(description: "the request ended")
        let errors = Recorder<AFError?>()
        request.response(queue: queue) { response in
            errors.append(response.error)
            ended.fulfill()
        }
        await transport.attempt(1).complete(error: URLError(.timedOut))
        // The retry is decided and its delay begins on `underlyingQueue`.
        while request.retryCount == 0 { try? await Task.sleep(nanoseconds: 5_000_000) }
        request.cancel()
        await fulfillment(of: [ended], timeout: 60)
        XCTAssertEqual(errors.values.first??.isExplicitlyCancelledError, true, "\(errors.values)")
        XCTAssertEqual(transport.attemptCount, 1)
    }

    // MARK: - Suspend and resume

    func testSuspendBeforeTheRequestIsMadeStartsNothingUntilResume() async throws {
        let transport = StubTransport()
        let session = transport.session(startRequestsImmediately: false)
        let request = session.request(url)
        request.suspend()
        let response = request.serializingData()
        session.drain()
        XCTAssertEqual(transport.attemptCount, 0)
        XCTAssertEqual(request.state, .suspended)
        request.resume()
        let attempt = await transport.attempt(1)
        request.suspend()
        request.resume()
        attempt.succeed(body: "ok")
        let data = await response.response.data
        XCTAssertEqual(data, Data("ok".utf8))
        XCTAssertEqual(attempt.taskCalls, ["suspend", "resume"])
    }

    // MARK: - Handlers

    func testHandlersAddedBeforeDuringAndAfterCompletionEachRunOnceInOrder() async {
        let transport = StubTransport()
        let session = transport.session()
        let request = session.request(url)
        let order = Recorder<Int>()
        let all = expectation(description: "all handlers")
        all.expectedFulfillmentCount = 4
        request.response(queue: queue) { _ in
            order.append(1); all.fulfill()
        }
        request.responseString(queue: queue) { _ in
            order.append(2); all.fulfill()
        }
        let attempt = await transport.attempt(1)
        attempt.respond()
        request.responseData(queue: queue) { _ in
            order.append(3); all.fulfill()
        }
        attempt.complete(body: Data("x".utf8))
        request.response(queue: queue) { _ in
            order.append(4); all.fulfill()
        }
        await fulfillment(of: [all], timeout: 60)
        session.drain()
        XCTAssertEqual(order.values, [1, 2, 3, 4])
        XCTAssertEqual(request.state, .finished)
    }

    func testARequestResumedWithoutHandlersFinishes() async throws {
        let transport = StubTransport()
        let session = transport.session()
        let request = session.request(url).resume()
        await transport.attempt(1).succeed()
        session.drain()
        XCTAssertEqual(request.state, .finished)
    }

    // MARK: - Retries on the scripted engine

    func testARetryMakesTheURLRequestAgainAndRunsTheAdapterAgain() async {
        let transport = StubTransport()
        let adapted = Recorder<Int>()
        let interceptor = Interceptor(
            adaptHandler: { request, _, completion in
                var request = request
                adapted.append(adapted.values.count + 1)
                request.headers.add(name: "X-Attempt", value: "\(adapted.values.count)")
                completion(.success(request))
            },
            retryHandler: { request, _, _, completion in
                completion(request.retryCount < 2 ? .retry : .doNotRetry)
            })
        let session = transport.session(interceptor: interceptor)
        let request = session.request(url)
        let response = request.serializingData()
        await transport.attempt(1).complete(error: URLError(.networkConnectionLost))
        await transport.attempt(2).complete(error: URLError(.networkConnectionLost))
        let third = await transport.attempt(3)
        third.succeed(body: "third")
        let result = await response.response
        XCTAssertEqual(result.data, Data("third".utf8))
        XCTAssertEqual(request.retryCount, 2)
        XCTAssertEqual(third.urlRequest.value(forHTTPHeaderField: "X-Attempt"), "3")
        XCTAssertEqual(request.requests.count, 6, "each attempt records its initial and its adapted URLRequest")
    }

    func testAStreamBodyCannotBeReplayedOnRetry() async {
        let transport = StubTransport()
        let session = transport.session(
            interceptor: Retrier { request, _, _, completion in
                completion(request.retryCount < 1 ? .retry : .doNotRetry)
            })
        let stream = InputStream(data: Data("once".utf8))
        let request = session.upload(stream, to: url)
        let response = request.serializingData()
        await transport.attempt(1).complete(error: URLError(.networkConnectionLost))
        let result = await response.response
        XCTAssertEqual(result.error?.urlErrorCode, .requestBodyStreamExhausted)
        XCTAssertEqual(transport.attemptCount, 1, "the second attempt fails before it reaches the engine")
    }
}
