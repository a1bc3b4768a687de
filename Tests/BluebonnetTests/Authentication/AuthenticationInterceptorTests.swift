import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A bearer token; `expired` makes the interceptor refresh it before use.
struct TokenCredential: AuthenticationCredential, Sendable {
    let token: String
    var expired = false
    var requiresRefresh: Bool { expired }
}

/// Refreshes against the test server's token service with a session of its own, and counts its refreshes.
final class TokenAuthenticator: Authenticator, @unchecked Sendable {
    // @unchecked: `refreshes` is a lock-guarded recorder; the rest is immutable.
    let refreshURL: URL
    /// When set, refresh returns this token instead of the server's, so the server keeps refusing.
    let fixedToken: String?
    let refreshes = Recorder<Int>()
    private let plain = Session()

    init(refreshURL: URL, fixedToken: String? = nil) {
        self.refreshURL = refreshURL
        self.fixedToken = fixedToken
    }

    func apply(_ credential: TokenCredential, to urlRequest: inout URLRequest) {
        urlRequest.setValue("Bearer \(credential.token)", forHTTPHeaderField: "Authorization")
    }

    func refresh(
        _ credential: TokenCredential, for session: Session,
        completion: @escaping @Sendable (Result<TokenCredential, any Error>) -> Void
    ) {
        refreshes.append(1)
        let fixedToken = fixedToken
        plain.request(refreshURL, method: .post).validate().responseData { response in
            switch response.result {
            case let .success(data):
                let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
                completion(.success(TokenCredential(token: fixedToken ?? (object?["token"] as? String ?? ""))))
            case let .failure(error):
                completion(.failure(error))
            }
        }
    }

    func didRequest(
        _ urlRequest: URLRequest, with response: HTTPURLResponse, failDueToAuthenticationError error: any Error
    ) -> Bool {
        response.statusCode == 401
    }

    func isRequest(_ urlRequest: URLRequest, authenticatedWith credential: TokenCredential) -> Bool {
        urlRequest.value(forHTTPHeaderField: "Authorization") == "Bearer \(credential.token)"
    }
}

/// `AuthenticationInterceptor` against a token service that accepts only the latest token: one refresh however many
/// requests need it, and every waiting request gets its result.
final class AuthenticationInterceptorTests: ServerTestCase {
    private var space = ""

    override func setUp() async throws {
        try await super.setUp()
        space = UUID().uuidString
    }

    private func tokenURL(_ action: String, _ query: String = "") -> URL {
        server.url("/token/\(space)/\(action)\(query)")
    }

    private func stats() async throws -> [String: Any] {
        try json(try await session.request(tokenURL("stats")).serializingData().value)
    }

    /// Makes the server's current token `token-1`, as if the app had logged in.
    private func logIn() async throws -> TokenCredential {
        let data = try await session.request(tokenURL("refresh"), method: .post).validate().serializingData().value
        return TokenCredential(token: try json(data)["token"] as? String ?? "")
    }

    /// Sends `count` requests at once through `interceptor` and waits for them all.
    private func sendConcurrently(_ count: Int, through interceptor: any RequestInterceptor) async -> [AFDataResponse<
        Data
    >] {
        let authenticated = Session(interceptor: interceptor)
        let responses = await withTaskGroup(of: AFDataResponse<Data>.self) { group in
            let target = tokenURL("protected")
            for _ in 0..<count {
                group.addTask { await authenticated.request(target).validate().serializingData().response }
            }
            var responses: [AFDataResponse<Data>] = []
            for await response in group { responses.append(response) }
            return responses
        }
        withExtendedLifetime(authenticated) {}
        return responses
    }

    func testAnExpiredCredentialIsRefreshedOnceForFiftyConcurrentRequests() async throws {
        _ = try await logIn()
        let authenticator = TokenAuthenticator(refreshURL: tokenURL("refresh", "?delay_ms=200"))
        let interceptor = AuthenticationInterceptor(
            authenticator: authenticator, credential: TokenCredential(token: "old", expired: true))
        let responses = await sendConcurrently(50, through: interceptor)
        XCTAssertEqual(
            responses.filter { $0.response?.statusCode == 200 }.count, 50, "\(responses.compactMap(\.error))")
        XCTAssertEqual(authenticator.refreshes.values.count, 1)
        let stats = try await stats()
        XCTAssertEqual(stats["refreshes"] as? Int, 2, "the log-in and one refresh")
        XCTAssertEqual(stats["rejected"] as? Int, 0, "nobody was sent with the expired token")
        XCTAssertEqual(interceptor.credential?.token, "token-2")
    }

    func testFiftyRequestsRefusedWithAnOldTokenCauseOneRefresh() async throws {
        let old = try await logIn()
        _ = try await logIn()  // the server moved on to token-2: `old` is refused
        let authenticator = TokenAuthenticator(refreshURL: tokenURL("refresh", "?delay_ms=200"))
        let interceptor = AuthenticationInterceptor(authenticator: authenticator, credential: old)
        let responses = await sendConcurrently(50, through: interceptor)
        XCTAssertEqual(
            responses.filter { $0.response?.statusCode == 200 }.count, 50, "\(responses.compactMap(\.error))")
        XCTAssertEqual(authenticator.refreshes.values.count, 1)
        let stats = try await stats()
        XCTAssertEqual(stats["refreshes"] as? Int, 3)
        XCTAssertEqual(stats["accepted"] as? Int, 50)
    }

    func testAFailedRefreshFailsEveryWaitingRequestWithItsError() async throws {
        let authenticator = TokenAuthenticator(refreshURL: tokenURL("refresh", "?delay_ms=100&fail=true"))
        let interceptor = AuthenticationInterceptor(
            authenticator: authenticator, credential: TokenCredential(token: "old", expired: true))
        let responses = await sendConcurrently(50, through: interceptor)
        XCTAssertEqual(authenticator.refreshes.values.count, 1)
        for response in responses {
            XCTAssertTrue(response.error?.isRequestAdaptationError == true, "\(String(describing: response.error))")
            let refreshError = response.error?.underlyingError?.asAFError
            XCTAssertEqual(
                refreshError?.responseCode, 500, "the refresh's own error: \(String(describing: refreshError))")
        }
    }

    func testAFailedRefreshAfter401sFailsTheRetriesWithItsError() async throws {
        _ = try await logIn()
        let authenticator = TokenAuthenticator(refreshURL: tokenURL("refresh", "?delay_ms=100&fail=true"))
        let interceptor = AuthenticationInterceptor(
            authenticator: authenticator, credential: TokenCredential(token: "token-0"))
        let responses = await sendConcurrently(20, through: interceptor)
        XCTAssertEqual(authenticator.refreshes.values.count, 1)
        for response in responses {
            guard case let .requestRetryFailed(retryError, originalError)? = response.error else {
                XCTFail("\(String(describing: response.error))")
                continue
            }
            XCTAssertEqual(retryError.asAFError?.responseCode, 500)
            // As in Alamofire, the response serializer asks the retrier again about the request's error, and the
            // interceptor answers with the same refresh error: the first answer is nested in the second.
            guard case let .requestRetryFailed(firstRetryError, validationError)? = originalError.asAFError else {
                XCTFail("\(originalError)")
                continue
            }
            XCTAssertEqual(firstRetryError.asAFError?.responseCode, 500)
            XCTAssertEqual(validationError.asAFError?.responseCode, 401)
        }
    }

    func testARequestRefusedWithAnOlderCredentialIsRetriedWithoutARefresh() async throws {
        let current = try await logIn()
        let authenticator = TokenAuthenticator(refreshURL: tokenURL("refresh"))
        let auth = AuthenticationInterceptor(authenticator: authenticator, credential: current)
        // The first attempt goes out with a token older than the interceptor's, as if sent before a refresh.
        let calls = Recorder<Int>()
        let staleFirst = Adapter { urlRequest, _, completion in
            calls.append(1)
            var request = urlRequest
            if calls.values.count == 1 { request.setValue("Bearer token-0", forHTTPHeaderField: "Authorization") }
            completion(.success(request))
        }
        let request = session.request(
            tokenURL("protected"), interceptor: Interceptor(adapters: [auth, staleFirst], retriers: [auth])
        )
        .validate()
        let response = await request.serializingData().response
        XCTAssertEqual(response.response?.statusCode, 200, "\(String(describing: response.error))")
        XCTAssertEqual(authenticator.refreshes.values.count, 0)
        XCTAssertEqual(request.retryCount, 1)
    }

    func testAMissingCredentialFailsAdaptation() async throws {
        let authenticator = TokenAuthenticator(refreshURL: tokenURL("refresh"))
        let interceptor = AuthenticationInterceptor<TokenAuthenticator>(authenticator: authenticator)
        let response = await session.request(tokenURL("protected"), interceptor: interceptor).serializingData().response
        XCTAssertTrue(response.error?.isRequestAdaptationError == true)
        guard case .missingCredential? = response.error?.underlyingError as? AuthenticationError else {
            return XCTFail("\(String(describing: response.error))")
        }
        XCTAssertEqual(authenticator.refreshes.values.count, 0)
    }

    func testRefreshesBeyondTheWindowFailWithExcessiveRefresh() async throws {
        _ = try await logIn()
        // Every refresh yields a token the server refuses, so each retry asks for another.
        let authenticator = TokenAuthenticator(refreshURL: tokenURL("refresh"), fixedToken: "never-valid")
        let interceptor = AuthenticationInterceptor(
            authenticator: authenticator, credential: TokenCredential(token: "token-0"),
            refreshWindow: .init(interval: 30, maximumAttempts: 2))
        let response = await session.request(tokenURL("protected"), interceptor: interceptor).validate()
            .serializingData().response
        guard case let .requestRetryFailed(retryError, _)? = response.error,
            case .excessiveRefresh? = retryError as? AuthenticationError
        else {
            return XCTFail("\(String(describing: response.error))")
        }
        XCTAssertEqual(authenticator.refreshes.values.count, 2)
    }

    func testA401ThatIsNotTheAuthenticatorsIsNotRetried() async throws {
        let authenticator = TokenAuthenticator(refreshURL: tokenURL("refresh"))
        let interceptor = AuthenticationInterceptor(
            authenticator: authenticator, credential: TokenCredential(token: "t"))
        let request = session.request(url("/status/403"), interceptor: interceptor).validate()
        _ = await request.serializingData().response
        XCTAssertEqual(request.retryCount, 0)
        XCTAssertEqual(authenticator.refreshes.values.count, 0)
    }

    func testSettingTheCredentialEndsAFailedRefresh() async throws {
        let current = try await logIn()
        let authenticator = TokenAuthenticator(refreshURL: tokenURL("refresh", "?fail=true"))
        let interceptor = AuthenticationInterceptor(
            authenticator: authenticator, credential: TokenCredential(token: "token-0"))
        let failed = await session.request(tokenURL("protected"), interceptor: interceptor).validate().serializingData()
            .response
        XCTAssertTrue(failed.error?.isRequestRetryError == true)
        interceptor.credential = current
        let recovered = await session.request(tokenURL("protected"), interceptor: interceptor).validate()
            .serializingData().response
        XCTAssertEqual(recovered.response?.statusCode, 200)
        XCTAssertEqual(authenticator.refreshes.values.count, 1)
    }
}
