import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `AuthenticationInterceptor`'s exact call counts, scenario by scenario, with an authenticator that refreshes locally
/// (`a0` → `a1` → ...) after 100 ms and routes chosen per attempt, as Alamofire's own tests pin them.
final class AuthenticationInterceptorCountTests: ServerTestCase {
    struct OAuthCredential: AuthenticationCredential, Sendable {
        var accessToken = "a0"
        var requiresRefresh = false
    }

    enum RefreshFailure: Error, Equatable { case network }

    final class CountingAuthenticator: Authenticator, @unchecked Sendable {
        // @unchecked: every counter is behind `lock`.
        private let lock = NSLock()
        private var counts = (apply: 0, refresh: 0, didRequest: 0, isRequest: 0)
        /// A refresh held until `didRequest` has been called `refreshWaitsFor` times; behind `lock`.
        private var heldRefresh: (@Sendable () -> Void)?
        let failure: RefreshFailure?
        /// Whether the credentials a refresh makes still require one.
        let refreshedRequiresRefresh: Bool
        /// How many failed responses (`didRequest` calls) a refresh waits for before it ends: a barrier, so requests
        /// sent together all fail with the credential they went with while it runs, however slowly a busy machine
        /// sends them. 0 (the default) ends each refresh 100 ms on, which the counts do not depend on.
        let refreshWaitsFor: Int

        init(failure: RefreshFailure? = nil, refreshedRequiresRefresh: Bool = false, refreshWaitsFor: Int = 0) {
            self.failure = failure
            self.refreshedRequiresRefresh = refreshedRequiresRefresh
            self.refreshWaitsFor = refreshWaitsFor
        }

        var applyCount: Int { lock.withLock { counts.apply } }
        var refreshCount: Int { lock.withLock { counts.refresh } }
        /// Apply, refresh, didRequest and isRequest counts, in that order.
        var allCounts: [Int] { lock.withLock { [counts.apply, counts.refresh, counts.didRequest, counts.isRequest] } }

        func apply(_ credential: OAuthCredential, to urlRequest: inout URLRequest) {
            lock.withLock { counts.apply += 1 }
            urlRequest.headers.add(.authorization(bearerToken: credential.accessToken))
        }

        func refresh(
            _ credential: OAuthCredential, for session: Session,
            completion: @escaping @Sendable (Result<OAuthCredential, any Error>) -> Void
        ) {
            let count = lock.withLock {
                counts.refresh += 1; return counts.refresh
            }
            let result: Result<OAuthCredential, any Error> =
                failure.map { .failure($0) }
                ?? .success(OAuthCredential(accessToken: "a\(count)", requiresRefresh: refreshedRequiresRefresh))
            let finish: @Sendable () -> Void = { completion(result) }
            let held = lock.withLock { () -> Bool in
                guard counts.didRequest < refreshWaitsFor else { return false }
                heldRefresh = finish
                return true
            }
            guard held else {
                // Long enough for other requests to queue up behind the refresh.
                DispatchQueue.global().asyncAfter(deadline: .now() + 0.1, execute: finish)
                return
            }
            // A hang guard only: fewer failures than awaited end the refresh after 30 s, and the counts fail the test.
            DispatchQueue.global().asyncAfter(deadline: .now() + 30) { [self] in takeHeldRefresh()?() }
        }

        /// The held refresh, once: whoever takes it ends it.
        private func takeHeldRefresh() -> (@Sendable () -> Void)? {
            lock.withLock {
                defer { heldRefresh = nil }
                return heldRefresh
            }
        }

        func didRequest(
            _ urlRequest: URLRequest, with response: HTTPURLResponse, failDueToAuthenticationError error: any Error
        ) -> Bool {
            let reached = lock.withLock { () -> Bool in
                counts.didRequest += 1
                return counts.didRequest >= refreshWaitsFor
            }
            // Ended off the interceptor's call, as a refresh's completion comes.
            if reached, let held = takeHeldRefresh() { DispatchQueue.global().async(execute: held) }
            return response.statusCode == 401
        }

        func isRequest(_ urlRequest: URLRequest, authenticatedWith credential: OAuthCredential) -> Bool {
            lock.withLock { counts.isRequest += 1 }
            return urlRequest.headers["Authorization"]
                == HTTPHeader.authorization(bearerToken: credential.accessToken).value
        }
    }

    /// Sends each attempt to the next path of its list.
    final class PathAdapter: RequestAdapter, @unchecked Sendable {
        // @unchecked: `paths` is behind `lock`.
        private let lock = NSLock()
        private var paths: [String]

        init(paths: [String]) { self.paths = paths }

        func adapt(
            _ urlRequest: URLRequest, for session: Session,
            completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
        ) {
            var request = urlRequest
            var components = URLComponents(url: request.url!, resolvingAgainstBaseURL: false)!
            components.path = lock.withLock { paths.removeFirst() }
            request.url = components.url
            completion(.success(request))
        }
    }

    private func send(_ path: String = "/get", interceptor: any RequestInterceptor, on session: Session? = nil) async
        -> (DataRequest, AFDataResponse<Data?>)
    {
        await Self.send(url(path), interceptor: interceptor, on: session ?? self.session)
    }

    /// Sends with an unserialized handler, as Alamofire's tests do: a serializer would show a failure to the retrier
    /// a second time (Alamofire's serializer retry), which the counts here leave out.
    private static func send(_ url: String, interceptor: any RequestInterceptor, on session: Session) async -> (
        DataRequest, AFDataResponse<Data?>
    ) {
        let request = session.request(url, interceptor: interceptor).validate()
        let response = await withCheckedContinuation { continuation in
            request.response(queue: .global()) { continuation.resume(returning: $0) }
        }
        return (request, response)
    }

    func testAValidCredentialIsAppliedWithoutRefresh() async {
        let authenticator = CountingAuthenticator()
        let (request, response) = await send(
            interceptor: AuthenticationInterceptor(authenticator: authenticator, credential: OAuthCredential()))
        XCTAssertEqual(response.request?.headers["Authorization"], "Bearer a0")
        XCTAssertNil(response.error)
        XCTAssertEqual(authenticator.allCounts, [1, 0, 0, 0])
        XCTAssertEqual(request.retryCount, 0)
    }

    func testAdaptsQueueBehindOneRefresh() async {
        let authenticator = CountingAuthenticator()
        let interceptor = AuthenticationInterceptor(
            authenticator: authenticator, credential: OAuthCredential(requiresRefresh: true))
        let (session, url200, url202) = (session!, url("/status/200"), url("/status/202"))
        async let first = Self.send(url200, interceptor: interceptor, on: session)
        async let second = Self.send(url202, interceptor: interceptor, on: session)
        let results = await [first, second]
        for (request, response) in results {
            XCTAssertEqual(response.request?.headers["Authorization"], "Bearer a1")
            XCTAssertNil(response.error)
            XCTAssertEqual(request.retryCount, 0)
        }
        XCTAssertEqual(authenticator.allCounts, [2, 1, 0, 0])
    }

    func testARefreshErrorInAdaptFailsAdaptationAndNothingIsApplied() async {
        let authenticator = CountingAuthenticator(failure: .network)
        let interceptor = AuthenticationInterceptor(
            authenticator: authenticator, credential: OAuthCredential(requiresRefresh: true))
        let (request, response) = await send(interceptor: interceptor)
        XCTAssertEqual(response.request?.headers.count, 0)
        XCTAssertEqual(response.error?.isRequestAdaptationError, true)
        XCTAssertEqual(response.error?.underlyingError as? RefreshFailure, .network)
        XCTAssertEqual([authenticator.applyCount, authenticator.refreshCount], [0, 1])
        XCTAssertEqual(request.retryCount, 0)
    }

    func testANewRequestsRefusalAfterAFailedRefreshStartsANewRefresh() async {
        let authenticator = CountingAuthenticator(failure: .network)
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: OAuthCredential())
        for round in 1...2 {
            let (request, response) = await send("/status/401", interceptor: interceptor)
            XCTAssertEqual(response.error?.isRequestRetryError, true)
            XCTAssertEqual(response.error?.underlyingError as? RefreshFailure, .network)
            XCTAssertEqual(request.retryCount, 0)
            // Each request applied the credential anew, so its 401 is not judged by the earlier failure.
            XCTAssertEqual(authenticator.allCounts, [round, round, round, round], "round \(round)")
        }
    }

    func testARefreshedCredentialThatStillRequiresARefreshFailsTheWaitingAdaptsAtTheWindow() async {
        let authenticator = CountingAuthenticator(refreshedRequiresRefresh: true)
        let interceptor = AuthenticationInterceptor(
            authenticator: authenticator, credential: OAuthCredential(requiresRefresh: true),
            refreshWindow: .init(interval: 30, maximumAttempts: 1))
        let session = session!
        let targets = (0..<3).map { url("/status/\(200 + $0)") }
        let results = await withTaskGroup(of: (DataRequest, AFDataResponse<Data?>).self) { group in
            for target in targets { group.addTask { await Self.send(target, interceptor: interceptor, on: session) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        for (request, response) in results {
            XCTAssertEqual(response.request?.headers.count, 0, "nothing applied")
            XCTAssertEqual(response.error?.isRequestAdaptationError, true)
            XCTAssertEqual(response.error?.underlyingError as? AuthenticationError, .excessiveRefresh)
            XCTAssertEqual(request.retryCount, 0)
        }
        XCTAssertEqual(authenticator.allCounts, [0, 1, 0, 0], "one refresh; the waiting adapts checked again")
    }

    func testAFailureThatIsNotAuthenticationIsNotRetried() async {
        let authenticator = CountingAuthenticator()
        let (request, response) = await send(
            "/status/500",
            interceptor: AuthenticationInterceptor(authenticator: authenticator, credential: OAuthCredential()))
        XCTAssertEqual(response.error?.responseCode, 500)
        XCTAssertEqual(authenticator.allCounts, [1, 0, 1, 0])
        XCTAssertEqual(request.retryCount, 0)
    }

    /// An adapter that runs `action` once, on the first attempt, after the interceptor before it applied the
    /// credential: the point at which Alamofire's tests change it (task creation), without a monitor's queue racing
    /// the response.
    private func onFirstAttempt(_ action: @escaping @Sendable () -> Void) -> Adapter {
        let calls = Recorder<Int>()
        return Adapter { urlRequest, _, completion in
            calls.append(1)
            if calls.values.count == 1 { action() }
            completion(.success(urlRequest))
        }
    }

    func testACredentialRemovedBeforeThe401FailsTheRetryWithMissingCredential() async {
        let authenticator = CountingAuthenticator()
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: OAuthCredential())
        let composite = Interceptor(
            adapters: [interceptor, onFirstAttempt { interceptor.credential = nil }], retriers: [interceptor])
        let (request, response) = await send("/status/401", interceptor: composite)
        XCTAssertEqual(response.request?.headers["Authorization"], "Bearer a0")
        XCTAssertEqual(response.error?.isRequestRetryError, true)
        XCTAssertEqual(response.error?.underlyingError as? AuthenticationError, .missingCredential)
        if case let .requestRetryFailed(_, originalError)? = response.error {
            XCTAssertEqual(originalError.asAFError?.responseCode, 401)
        }
        XCTAssertEqual(authenticator.allCounts, [1, 0, 1, 0])
        XCTAssertEqual(request.retryCount, 0)
    }

    func testARequestSentWithAnOutdatedCredentialIsRetriedWithTheNewOne() async {
        let authenticator = CountingAuthenticator()
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: OAuthCredential())
        let renew = onFirstAttempt { interceptor.credential = OAuthCredential(accessToken: "a1") }
        let composite = Interceptor(
            adapters: [PathAdapter(paths: ["/status/401", "/status/200"]), interceptor, renew], retriers: [interceptor])
        let (request, response) = await send(interceptor: composite)
        XCTAssertEqual(response.request?.headers["Authorization"], "Bearer a1")
        XCTAssertNil(response.error)
        XCTAssertEqual(authenticator.allCounts, [2, 0, 1, 1])
        XCTAssertEqual(request.retryCount, 1)
    }

    func testA401IsRefreshedThenRetried() async {
        let authenticator = CountingAuthenticator()
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: OAuthCredential())
        let composite = Interceptor(
            adapters: [PathAdapter(paths: ["/status/401", "/status/200"]), interceptor], retriers: [interceptor])
        let (request, response) = await send(interceptor: composite)
        XCTAssertEqual(response.request?.headers["Authorization"], "Bearer a1")
        XCTAssertNil(response.error)
        XCTAssertEqual(authenticator.allCounts, [2, 1, 1, 1])
        XCTAssertEqual(request.retryCount, 1)
    }

    func testARefreshErrorInRetryFailsTheRetry() async {
        let authenticator = CountingAuthenticator(failure: .network)
        let (request, response) = await send(
            "/status/401",
            interceptor: AuthenticationInterceptor(authenticator: authenticator, credential: OAuthCredential()))
        XCTAssertEqual(response.request?.headers["Authorization"], "Bearer a0")
        XCTAssertEqual(response.error?.isRequestRetryError, true)
        XCTAssertEqual(response.error?.underlyingError as? RefreshFailure, .network)
        XCTAssertEqual(authenticator.allCounts, [1, 1, 1, 1])
        XCTAssertEqual(request.retryCount, 0)
    }

    func testParallel401sShareOneRefresh() async {
        // The refresh the first 401 begins ends once all six have failed with `a0`: none is adapted after it.
        let authenticator = CountingAuthenticator(refreshWaitsFor: 6)
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: OAuthCredential())
        let (session, target) = (session!, url("/get"))
        let results = await withTaskGroup(of: (DataRequest, AFDataResponse<Data?>).self) { group in
            for index in 0..<6 {
                let composite = Interceptor(
                    adapters: [PathAdapter(paths: ["/status/401", "/status/20\(index)"]), interceptor],
                    retriers: [interceptor])
                group.addTask { await Self.send(target, interceptor: composite, on: session) }
            }
            var results: [(DataRequest, AFDataResponse<Data?>)] = []
            for await result in group { results.append(result) }
            return results
        }
        for (request, response) in results {
            XCTAssertEqual(response.request?.headers["Authorization"], "Bearer a1")
            XCTAssertEqual(request.retryCount, 1)
        }
        XCTAssertEqual(authenticator.allCounts, [12, 1, 6, 6])
    }

    /// Refreshes `a0` to `a1`, `a2`... once `gate` is signalled (or after 30 seconds, a hang guard, so a request held
    /// back shows as a failure rather than a hang), calling `onRefresh` as each begins.
    final class GatedAuthenticator: Authenticator, @unchecked Sendable {
        // @unchecked: `refreshes` is behind `lock`; the semaphore is thread-safe; `onRefresh` is set before use.
        let gate = DispatchSemaphore(value: 0)
        var onRefresh: @Sendable () -> Void = {}
        private let lock = NSLock()
        private var refreshes = 0
        var refreshCount: Int { lock.withLock { refreshes } }

        func apply(_ credential: OAuthCredential, to urlRequest: inout URLRequest) {
            urlRequest.headers.add(.authorization(bearerToken: credential.accessToken))
        }
        func refresh(
            _ credential: OAuthCredential, for session: Session,
            completion: @escaping @Sendable (Result<OAuthCredential, any Error>) -> Void
        ) {
            let count = lock.withLock {
                refreshes += 1; return refreshes
            }
            onRefresh()
            DispatchQueue.global().async { [gate] in
                _ = gate.wait(timeout: .now() + 30)
                completion(.success(OAuthCredential(accessToken: "a\(count)")))
            }
        }
        func didRequest(
            _ urlRequest: URLRequest, with response: HTTPURLResponse, failDueToAuthenticationError error: any Error
        ) -> Bool { response.statusCode == 401 }
        func isRequest(_ urlRequest: URLRequest, authenticatedWith credential: OAuthCredential) -> Bool {
            urlRequest.headers["Authorization"] == HTTPHeader.authorization(bearerToken: credential.accessToken).value
        }
    }

    func testARequestAdaptedWhileA401sRefreshRunsGoesWithTheCurrentCredentialAndIsRetriedAfter() async {
        let authenticator = GatedAuthenticator()
        let refreshing = expectation(description: "refreshing")
        refreshing.assertForOverFulfill = false
        authenticator.onRefresh = { refreshing.fulfill() }
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: OAuthCredential())
        let (session, target) = (session!, url("/get"))
        func chain(after: [any RequestAdapter] = []) -> Interceptor {
            Interceptor(
                adapters: [PathAdapter(paths: ["/status/401", "/status/200"]), interceptor] + after,
                retriers: [interceptor])
        }
        // The first request's 401 begins a refresh, which holds until the second has been adapted.
        async let first = Self.send(target, interceptor: chain(), on: session)
        await fulfillment(of: [refreshing], timeout: 30)
        let gate = authenticator.gate
        let signalled = Recorder<Int>()
        let signal = Adapter { request, _, completion in
            if signalled.values.isEmpty { gate.signal() }
            signalled.append(1)
            completion(.success(request))
        }
        let (secondRequest, second) = await Self.send(target, interceptor: chain(after: [signal]), on: session)
        let (_, firstResponse) = await first
        XCTAssertNil(firstResponse.error)
        XCTAssertNil(second.error)
        XCTAssertEqual(second.request?.headers["Authorization"], "Bearer a1")
        XCTAssertEqual(secondRequest.retryCount, 1, "its own 401, with the credential it went with, retried it")
        XCTAssertEqual(authenticator.refreshCount, 1, "one refresh")
    }

    func testWithoutARefreshWindowEveryRefreshIsAllowed() async {
        let authenticator = CountingAuthenticator()
        let interceptor = AuthenticationInterceptor(
            authenticator: authenticator, credential: OAuthCredential(), refreshWindow: nil)
        let paths = Array(repeating: "/status/401", count: 5) + ["/status/200"]
        let composite = Interceptor(adapters: [PathAdapter(paths: paths), interceptor], retriers: [interceptor])
        let (request, response) = await send(interceptor: composite)
        XCTAssertEqual(response.request?.headers["Authorization"], "Bearer a5")
        XCTAssertNil(response.error)
        XCTAssertEqual(authenticator.allCounts, [6, 5, 5, 5])
        XCTAssertEqual(request.retryCount, 5)
    }

    func testRefreshesBeyondTheWindowFailWithExcessiveRefresh() async {
        let authenticator = CountingAuthenticator()
        let interceptor = AuthenticationInterceptor(
            authenticator: authenticator, credential: OAuthCredential(),
            refreshWindow: .init(interval: 30, maximumAttempts: 2))
        let (request, response) = await send("/status/401", interceptor: interceptor)
        XCTAssertEqual(response.request?.headers["Authorization"], "Bearer a2")
        XCTAssertEqual(response.error?.isRequestRetryError, true)
        XCTAssertEqual(response.error?.underlyingError as? AuthenticationError, .excessiveRefresh)
        XCTAssertEqual(authenticator.allCounts, [3, 2, 3, 3])
        XCTAssertEqual(request.retryCount, 2)
    }
}
