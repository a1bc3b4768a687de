@testable import Bluebonnet
import BluebonnetTestServer
import Foundation
import NIOCore
import NIOPosix
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Adapters, retriers and retry policies against the fault server's `/flaky` route over real sockets.
final class InterceptorTests: FaultServerTestCase {
    struct Refused: Error {}

    func flaky(_ key: String, failures: Int, fail: String = "close", retryAfter: String? = nil) -> String {
        var path = "/flaky?key=\(key)&failures=\(failures)&fail=\(fail)"
        if let retryAfter { path += "&retry_after=\(retryAfter)" }
        return faults.url(path).absoluteString
    }

    // MARK: - Adapters

    func testTheAdapterChangesEveryRequestAndTheSessionsAdaptsBeforeTheRequestsAsInAlamofire() async throws {
        let order = Recorder<String>()
        let sessionAdapter = Adapter { request, _, completion in
            order.append("session")
            var request = request
            request.headers.add(name: "X-Session", value: "1")
            completion(.success(request))
        }
        let requestAdapter = Adapter { request, _, completion in
            order.append("request")
            var request = request
            request.headers.add(name: "X-Request", value: "1")
            completion(.success(request))
        }
        let session = Session(interceptor: sessionAdapter)
        let request = session.request(flaky("adapt", failures: 0), interceptor: requestAdapter)
        _ = await request.serializingData().response
        XCTAssertEqual(order.values, ["session", "request"])
        let head = try XCTUnwrap(faults.receivedHeads.last)
        XCTAssertTrue(head.contains("X-Session: 1") && head.contains("X-Request: 1"), head)
        XCTAssertEqual(request.requests.count, 2, "the initial and the adapted URLRequest")
    }

    func testChainedAdaptersRunAfterTheSessionsAndTheRequestsOwn() async throws {
        let order = Recorder<String>()
        func adapter(_ name: String) -> Adapter {
            Adapter { request, _, completion in
                order.append(name)
                var request = request
                request.headers.add(name: "X-\(name)", value: "1")
                completion(.success(request))
            }
        }
        let session = Session(interceptor: adapter("session"))
        let request = session.request(flaky("chained-adapt", failures: 0), interceptor: adapter("own"))
            .adapt(using: adapter("chained"))
            .interceptor(adapter("intercepting"))
        _ = await request.serializingData().response
        XCTAssertEqual(order.values, ["session", "own", "chained", "intercepting"])
        let sent = try XCTUnwrap(request.lastRequest)
        for name in ["own", "chained", "intercepting", "session"] {
            XCTAssertEqual(sent.value(forHTTPHeaderField: "X-\(name)"), "1")
        }
    }

    func testAChainedRetrierRetriesARequestMadeWithoutOne() async throws {
        let asked = Recorder<Int>()
        let request = session.request(flaky("chained-retry", failures: 1))
            .retry(
                using: Retrier { request, _, _, completion in
                    asked.append(request.retryCount)
                    completion(request.retryCount < 2 ? .retry : .doNotRetry)
                })
        let response = await request.serializingData().response
        XCTAssertNil(response.error)
        XCTAssertEqual(request.retryCount, 1)
        XCTAssertEqual(asked.values, [0])
        XCTAssertNotNil(request.interceptor)
    }

    func testAnAdapterErrorFailsTheRequestWithRequestAdaptationFailedAndSendsNothing() async {
        let session = Session(interceptor: Adapter { _, _, completion in completion(.failure(Refused())) })
        let response = await session.request(flaky("refused", failures: 0)).serializingData().response
        guard case let .requestAdaptationFailed(error)? = response.error else {
            return XCTFail("\(String(describing: response.error))")
        }
        XCTAssertTrue(error is Refused)
        XCTAssertEqual(faults.connectionCount, 0)
    }

    func testAnAdapterErrorIsRetriedWhenTheRetrierSaysSo() async {
        let calls = Recorder<Int>()
        let adapter = Adapter { request, _, completion in
            calls.append(1)
            completion(calls.values.count == 1 ? .failure(Refused()) : .success(request))
        }
        let retrier = Retrier { _, _, error, completion in
            completion((error as? AFError)?.isRequestAdaptationError == true ? .retry : .doNotRetry)
        }
        let session = Session(interceptor: Interceptor(adapter: adapter, retrier: retrier))
        let request = session.request(flaky("adapt-retry", failures: 0))
        let response = await request.serializingData().response
        XCTAssertNil(response.error)
        XCTAssertEqual(calls.values.count, 2)
        XCTAssertEqual(request.retryCount, 1)
    }

    // MARK: - Retriers

    func testARetrierRetriesATransportFailureUntilTheServerSucceeds() async throws {
        let session = Session(
            interceptor: Retrier { request, _, _, completion in
                completion(request.retryCount < 3 ? .retry : .doNotRetry)
            })
        let request = session.request(flaky("lost", failures: 2))
        let value = try await request.serializingDecodable([String: Int].self).value
        XCTAssertEqual(value, ["attempt": 3])
        XCTAssertEqual(request.retryCount, 2)
        XCTAssertEqual(faults.attempts(forKey: "lost"), 3)
    }

    func testRetriesStopWhenTheRetrierSaysSoAndTheLastErrorIsDelivered() async {
        let session = Session(
            interceptor: Retrier { request, _, _, completion in
                completion(request.retryCount < 1 ? .retry : .doNotRetry)
            })
        let request = session.request(flaky("gives-up", failures: 5, fail: "reset"))
        let response = await request.serializingData().response
        XCTAssertEqual(response.error?.urlErrorCode, .networkConnectionLost)
        XCTAssertEqual(faults.attempts(forKey: "gives-up"), 2)
    }

    func testARetrierErrorGivesRequestRetryFailedWithBothErrors() async {
        let session = Session(
            interceptor: Retrier { _, _, _, completion in completion(.doNotRetryWithError(Refused())) })
        let response = await session.request(flaky("retry-error", failures: 1)).serializingData().response
        guard case let .requestRetryFailed(retryError, originalError)? = response.error else {
            return XCTFail("\(String(describing: response.error))")
        }
        XCTAssertTrue(retryError is Refused)
        // As in Alamofire, the serializer shows the request's error to the retrier again, and the second answer wraps
        // the first.
        guard case let .requestRetryFailed(firstRetryError, requestError)? = originalError.asAFError else {
            return XCTFail("\(originalError)")
        }
        XCTAssertTrue(firstRetryError is Refused)
        XCTAssertEqual(requestError.asAFError?.urlErrorCode, .networkConnectionLost)
    }

    func testAValidationFailureIsRetriedAndTheValidatorsRunOnEveryAttempt() async throws {
        let validations = Recorder<Int>()
        let session = Session(
            interceptor: Retrier { request, _, _, completion in
                completion(request.retryCount < 2 ? .retry : .doNotRetry)
            })
        let request = session.request(flaky("validate", failures: 2, fail: "500"))
            .validate { _, response, _ in
                validations.append(response.statusCode)
                return .success(())
            }
            .validate()
        let value = try await request.serializingDecodable([String: Int].self).value
        XCTAssertEqual(value, ["attempt": 3])
        XCTAssertEqual(validations.values, [500, 500, 200])
    }

    func testASerializerPassingOnTheRequestsErrorAsksTheRetrierAgainWhichMayRetry() async {
        // Alamofire's serializer retry: the retrier said no when the request failed, and is asked again when the
        // serializer rethrows that failure; a retry then sends the request once more.
        let asked = Recorder<Int>()
        let session = Session(
            interceptor: Retrier { request, _, _, completion in
                asked.append(request.retryCount)
                completion(asked.values.count == 2 ? .retry : .doNotRetry)
            })
        let request = session.request(flaky("serializer-asks", failures: 1, fail: "500")).validate()
        let response = await request.serializingData().response
        XCTAssertNil(response.error)
        XCTAssertEqual(asked.values, [0, 0])
        XCTAssertEqual(request.retryCount, 1)
    }

    func testTheSessionsRetrierIsAskedBeforeTheRequestsAsInAlamofire() async {
        let order = Recorder<String>()
        let sessionRetrier = Retrier { _, _, _, completion in
            order.append("session"); completion(.doNotRetry)
        }
        let requestRetrier = Retrier { _, _, _, completion in
            order.append("request"); completion(.doNotRetry)
        }
        let session = Session(interceptor: sessionRetrier)
        _ = await session.request(flaky("order", failures: 1), interceptor: requestRetrier).serializingData().response
        // Once when the request fails, and once more when the serializer passes its error on (Alamofire's serializer
        // retry), in the same order.
        XCTAssertEqual(order.values, ["session", "request", "session", "request"])
    }

    func testASessionRetrierThatRetriesIsNotFollowedByTheRequests() async {
        let order = Recorder<String>()
        let sessionRetrier = Retrier { request, _, _, completion in
            order.append("session \(request.retryCount)")
            completion(request.retryCount < 1 ? .retry : .doNotRetry)
        }
        let requestRetrier = Retrier { request, _, _, completion in
            order.append("request \(request.retryCount)")
            completion(.doNotRetry)
        }
        let session = Session(interceptor: sessionRetrier)
        let response = await session.request(flaky("session-retries", failures: 5), interceptor: requestRetrier)
            .validate().serializingData().response
        XCTAssertNotNil(response.error)
        XCTAssertEqual(order.values, ["session 0", "session 1", "request 1", "session 1", "request 1"])
    }

    func testUploadsReplayTheirBodyOnRetry() async throws {
        let session = Session(
            interceptor: Retrier { request, _, _, completion in
                completion(request.retryCount < 1 ? .retry : .doNotRetry)
            })
        let body = Data(repeating: 7, count: 100_000)
        let request = session.upload(body, to: flaky("upload", failures: 1))
        _ = try await request.serializingData().value
        XCTAssertEqual(faults.attempts(forKey: "upload"), 2)
    }

    // MARK: - Retry policies

    func testRetryPolicyRetriesConnectionLossForIdempotentMethodsWithBackoff() async throws {
        let session = Session(interceptor: RetryPolicy(exponentialBackoffScale: 0.05))
        let start = Date()
        let request = session.request(flaky("policy", failures: 2))
        let value = try await request.serializingDecodable([String: Int].self).value
        XCTAssertEqual(value, ["attempt": 3])
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.15, "0.05 s then 0.1 s of backoff")
    }

    func testRetryPolicyDoesNotRetryPOST() async {
        let session = Session(interceptor: .retryPolicy)
        let response = await session.request(flaky("post", failures: 1), method: .post).serializingData().response
        XCTAssertEqual(response.error?.urlErrorCode, .networkConnectionLost)
        XCTAssertEqual(faults.attempts(forKey: "post"), 1)
    }

    func testRetryPolicyStopsAtItsLimit() async {
        let session = Session(interceptor: RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0.01))
        let request = session.request(flaky("limit", failures: 10))
        let response = await request.serializingData().response
        XCTAssertEqual(response.error?.urlErrorCode, .networkConnectionLost)
        XCTAssertEqual(request.retryCount, 2)
        XCTAssertEqual(faults.attempts(forKey: "limit"), 3)
    }

    func testRetryPolicyRetriesA503OnlyOnceValidated() async {
        let session = Session(interceptor: RetryPolicy(exponentialBackoffScale: 0.01))
        let unvalidated = await session.request(flaky("unvalidated", failures: 1, fail: "503")).serializingData()
            .response
        XCTAssertEqual(unvalidated.response?.statusCode, 503)
        XCTAssertEqual(faults.attempts(forKey: "unvalidated"), 1)
        let validated = await session.request(flaky("validated", failures: 1, fail: "503")).validate().serializingData()
            .response
        XCTAssertEqual(validated.response?.statusCode, 200)
        XCTAssertEqual(faults.attempts(forKey: "validated"), 2)
    }

    func testRetryAfterInSecondsSetsTheDelayOfA429() async throws {
        let policy = RetryPolicy(exponentialBackoffScale: 0.01, retryableHTTPStatusCodes: [429])
        let session = Session(interceptor: policy)
        let start = Date()
        let response = await session.request(flaky("429", failures: 1, fail: "429", retryAfter: "1")).validate()
            .serializingData().response
        XCTAssertNil(response.error)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.95)
    }

    func testRetryAfterAsAnHTTPDateIsHonoured() async throws {
        // Taken before the date is made, so the bound below holds however long the set-up takes on a busy machine.
        let start = Date()
        let when = DateFormatter.httpDateForTests.string(from: start.addingTimeInterval(2))
        let session = Session(interceptor: RetryPolicy(exponentialBackoffScale: 0.01))
        let key = "date"
        let encoded = when.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? when
        let response = await session.request(flaky(key, failures: 1, fail: "503", retryAfter: encoded)).validate()
            .serializingData().response
        XCTAssertNil(response.error)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.9, "a whole-second date lands 1-2 s away")
    }

    func testRetryAfterBeyondTheMaximumIsNotRetried() async {
        // The maximum is an hour: a policy that waited for it before giving up would not answer before the hang
        // guard fails the test, and one that retried would make a second attempt.
        let session = Session(interceptor: RetryPolicy(exponentialBackoffScale: 0.01, maximumRetryAfter: 3600))
        let answered = expectation(description: "answered")
        let statuses = Recorder<Int>()
        session.request(flaky("too-long", failures: 1, fail: "503", retryAfter: "99999999999999")).validate()
            .response(queue: .global()) { response in
                statuses.append(response.response?.statusCode ?? 0)
                answered.fulfill()
            }
        await fulfillment(of: [answered], timeout: 60)
        withExtendedLifetime(session) {}
        XCTAssertEqual(statuses.values, [503])
        XCTAssertEqual(faults.attempts(forKey: "too-long"), 1)
    }

    func testRetryResultViews() {
        struct Failure: Error {}
        XCTAssertEqual(RetryResult.retry.retryRequired, true)
        XCTAssertNil(RetryResult.retry.delay)
        XCTAssertEqual(RetryResult.retryWithDelay(1.5).delay, 1.5)
        XCTAssertEqual(RetryResult.retryWithDelay(1.5).retryRequired, true)
        XCTAssertEqual(RetryResult.doNotRetry.retryRequired, false)
        XCTAssertNil(RetryResult.doNotRetry.error)
        XCTAssertTrue(RetryResult.doNotRetryWithError(Failure()).error is Failure)
        XCTAssertEqual(RetryResult.doNotRetryWithError(Failure()).retryRequired, false)
    }

    func testRetryAfterParsing() {
        func response(_ value: String?) -> HTTPURLResponse {
            HTTPURLResponse(
                url: URL(string: "http://x.invalid")!, statusCode: 503, httpVersion: nil,
                headerFields: value.map { ["Retry-After": $0] } ?? [:])!
        }
        let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        XCTAssertEqual(RetryPolicy.retryAfter(in: response("120"), now: now), 120)
        XCTAssertEqual(RetryPolicy.retryAfter(in: response("Sun, 06 Nov 1994 08:51:37 GMT"), now: now), 120)
        XCTAssertEqual(RetryPolicy.retryAfter(in: response("Sunday, 06-Nov-94 08:51:37 GMT"), now: now), 120)
        XCTAssertEqual(RetryPolicy.retryAfter(in: response("Sun Nov  6 08:51:37 1994"), now: now), 120)
        XCTAssertEqual(
            RetryPolicy.retryAfter(in: response("Sun, 06 Nov 1994 08:00:00 GMT"), now: now), 0, "a past date is now")
        XCTAssertEqual(RetryPolicy.retryAfter(in: response("9999999999999999999999"), now: now), .infinity)
        XCTAssertNil(RetryPolicy.retryAfter(in: response("soon"), now: now))
        XCTAssertNil(RetryPolicy.retryAfter(in: response("-5"), now: now))
        XCTAssertNil(RetryPolicy.retryAfter(in: response(nil), now: now))
    }

    func testConnectionLostRetryPolicyRetriesOnlyConnectionLoss() async throws {
        let session = Session(interceptor: ConnectionLostRetryPolicy(exponentialBackoffScale: 0.01))
        let recovered = try await session.request(flaky("lost-policy", failures: 1, fail: "reset"))
            .serializingDecodable([String: Int].self).value
        XCTAssertEqual(recovered, ["attempt": 2])
        let status = await session.request(flaky("status-policy", failures: 1, fail: "503")).validate()
            .serializingData().response
        XCTAssertEqual(status.response?.statusCode, 503)
        XCTAssertEqual(faults.attempts(forKey: "status-policy"), 1)
    }

    // MARK: - Event loops

    func testTheRetrierRunsOffTheEventLoopAnAdapterFailedOn() async {
        let onLoop = Recorder<Bool>()
        let adapter = Adapter { _, _, completion in
            // An adapter that fetched something with NIO and answers from the event loop that delivered it.
            MultiThreadedEventLoopGroup.singleton.any().execute { completion(.failure(Refused())) }
        }
        let retrier = Retrier { _, _, _, completion in
            onLoop.append(MultiThreadedEventLoopGroup.currentEventLoop != nil)
            completion(.doNotRetry)
        }
        let session = Session(interceptor: Interceptor(adapter: adapter, retrier: retrier))
        let response = await session.request(flaky("adapter-on-loop", failures: 0)).serializingData().response
        XCTAssertEqual(response.error?.isRequestAdaptationError, true)
        // Asked when the adapter failed and again by the serializer: off the event loop both times.
        XCTAssertEqual(onLoop.values, [false, false])
    }

    func testNoUserClosureRunsOnAnEventLoop() async throws {
        let onLoop = Recorder<String>()
        @Sendable func check(_ name: String) {
            if MultiThreadedEventLoopGroup.currentEventLoop != nil { onLoop.append(name) }
        }
        struct Redirect: RedirectHandler {
            let check: @Sendable (String) -> Void
            func request(
                _ request: Request, willBeRedirectedTo newRequest: URLRequest, for response: HTTPURLResponse,
                completion: @escaping @Sendable (URLRequest?) -> Void
            ) {
                check("redirect handler")
                completion(newRequest)
            }
        }
        let monitor = ClosureEventMonitor(queue: DispatchQueue(label: "monitor"))
        monitor.requestDidFinish = { _ in check("event monitor") }
        monitor.requestDidCompleteTaskWithError = { _, _, _ in check("task monitor") }
        monitor.requestDidGatherTaskMetrics = { _, _ in check("metrics monitor") }
        let interceptor = Interceptor(
            adaptHandler: { request, _, completion in
                check("adapter")
                completion(.success(request))
            },
            retryHandler: { request, _, _, completion in
                check("retrier")
                completion(request.retryCount < 1 ? .retry : .doNotRetry)
            })
        let session = Session(
            interceptor: interceptor, redirectHandler: Redirect(check: check), eventMonitors: [monitor])
        let progressed = Recorder<Int>()
        let redirect = faults.url(
            "/redirect?location="
                + (flaky("loops", failures: 1).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""))
        let request = session.request(redirect)
            .validate { _, _, _ in
                check("validator"); return .success(())
            }
            .downloadProgress(queue: .global()) { _ in
                check("progress"); progressed.append(1)
            }
        _ = try await request.serializingData().value
        session.drain()
        XCTAssertEqual(request.retryCount, 1)
        XCTAssertEqual(
            request.redirectCount, 1, "counted again from zero by the retry, which followed the redirect again")
        XCTAssertFalse(progressed.values.isEmpty)
        // The probe shows the check would see an event loop.
        try await MultiThreadedEventLoopGroup.singleton.any().submit { check("probe") }.get()
        XCTAssertEqual(onLoop.values, ["probe"])
    }
}

extension DateFormatter {
    static var httpDateForTests: DateFormatter {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }
}
