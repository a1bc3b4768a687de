import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Alamofire's `RequestDelegate` requirements on `Session`, which the request's lifecycle goes through: the session
/// makes a request ready, asks its retriers, sends it again, and cleans up after it.
final class RequestDelegateTests: ServerTestCase {
    private struct Refusal: Error {}

    /// A retrier that retries once on any error and says why it was asked.
    private final class RetryOnce: RequestInterceptor, Sendable {
        let asked = Recorder<Int>()
        func retry(
            _ request: Request, for session: Session, dueTo error: any Error,
            completion: @escaping @Sendable (RetryResult) -> Void
        ) {
            asked.append(request.retryCount)
            completion(request.retryCount == 0 ? .retry : .doNotRetry)
        }
    }

    /// A retrier that fails.
    private struct FailingRetrier: RequestInterceptor {
        func retry(
            _ request: Request, for session: Session, dueTo error: any Error,
            completion: @escaping @Sendable (RetryResult) -> Void
        ) {
            completion(.doNotRetryWithError(Refusal()))
        }
    }

    func testReadyToPerformMakesALazyRequestsURLRequestBeforeItIsResumed() async throws {
        let made = Recorder<URLRequest>()
        let monitor = ClosureEventMonitor()
        monitor.requestDidCreateInitialURLRequest = { _, request in made.append(request) }
        let session = Session(startRequestsImmediately: false, eventMonitors: [monitor])
        let request = session.request(url("/get"))
        let response = request.serializingData(automaticallyCancelling: false)
        session.readyToPerform(request: request)
        let ready = expectation(description: "made")
        DispatchQueue.global().async {
            while made.values.isEmpty { usleep(1000) }
            ready.fulfill()
        }
        await fulfillment(of: [ready], timeout: 30)
        XCTAssertEqual(request.state, .initialized, "made, not sent: it waits for resume()")
        request.resume()
        let result = await response.response
        XCTAssertNil(result.error)
        XCTAssertEqual(made.values.count, 1, "made once, not again on resume()")
    }

    func testRetryResultAsksTheRequestsRetriersAndWrapsTheirFailure() async throws {
        let retrying = RetryOnce()
        let request = session.request(url("/status/500"), interceptor: retrying)
        let decided: RetryResult = await withCheckedContinuation { continuation in
            session.retryResult(for: request, dueTo: .explicitlyCancelled) { continuation.resume(returning: $0) }
        }
        guard case .retry = decided else { return XCTFail("\(decided)") }
        let failing = session.request(url("/status/500"), interceptor: FailingRetrier())
        let refused: RetryResult = await withCheckedContinuation { continuation in
            session.retryResult(for: failing, dueTo: .explicitlyCancelled) { continuation.resume(returning: $0) }
        }
        guard case let .doNotRetryWithError(error) = refused,
            case let .requestRetryFailed(retryError, original)? = error as? AFError
        else { return XCTFail("\(refused)") }
        XCTAssertTrue(retryError is Refusal)
        XCTAssertEqual((original as? AFError)?.isExplicitlyCancelledError, true)
        let none = session.request(url("/get"))
        let noRetrier: RetryResult = await withCheckedContinuation { continuation in
            session.retryResult(for: none, dueTo: .explicitlyCancelled) { continuation.resume(returning: $0) }
        }
        guard case .doNotRetry = noRetrier else { return XCTFail("\(noRetrier)") }
    }

    func testARetryGoesThroughTheSessionAndAFailingRetrierIsWrappedOnce() async throws {
        let retrying = RetryOnce()
        let response = await session.request(url("/status/500"), interceptor: retrying).validate()
            .serializingData().response
        // Asked at 0 (sent again), at 1 (not); the serializer's failure is offered too, as in Alamofire.
        XCTAssertEqual(Array(retrying.asked.values.prefix(2)), [0, 1], "sent again once, then asked again")
        XCTAssertEqual(response.response?.statusCode, 500)
        let failing = session.request(url("/status/500"), interceptor: FailingRetrier()).validate()
        _ = await failing.serializingData().response
        // The request's own error: the session's `retryResult` wrapped the retrier's failure, and the lifecycle
        // did not wrap it again.
        guard case let .requestRetryFailed(retryError, original)? = failing.error else {
            return XCTFail("\(String(describing: failing.error))")
        }
        XCTAssertTrue(retryError is Refusal, "the retrier's error, not a second wrapping: \(retryError)")
        XCTAssertEqual((original as? AFError)?.isResponseValidationError, true, "\(original)")
    }

    func testRetryRequestLeavesARequestThatIsNotWaitingToRetryAsItIs() async throws {
        let request = session.request(url("/get"))
        _ = await request.serializingData().response
        session.retryRequest(request, withDelay: nil)
        session.retryRequest(request, withDelay: 0)
        // A request of its own after them: had either sent the finished request again, the server would see it first.
        _ = await session.request(url("/anything/after")).serializingData().response
        let arrived = server.arrivals.targets
        XCTAssertEqual(arrived.filter { $0 == "/get" }.count, 1, "\(arrived)")
        XCTAssertEqual(request.state, .finished)
    }

    func testCleanupAfterEndsARequestsActivity() async throws {
        let request = session.request(url("/get"))
        _ = await request.serializingData().response
        let active: Set<Request> = await withCheckedContinuation { continuation in
            session.withAllRequests { continuation.resume(returning: $0) }
        }
        XCTAssertTrue(active.isEmpty)
        session.cleanup(after: request)
    }
}
