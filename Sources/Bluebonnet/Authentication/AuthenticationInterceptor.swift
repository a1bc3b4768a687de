import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A credential an `AuthenticationInterceptor` applies to requests, such as an OAuth2 access token.
public protocol AuthenticationCredential {
    /// Whether the credential must be refreshed before it is used: `true` once it has expired, and wisely a little
    /// before.
    var requiresRefresh: Bool { get }
}

/// Applies a credential to requests and refreshes it, for an `AuthenticationInterceptor`.
public protocol Authenticator: AnyObject, Sendable {
    /// The credential type.
    associatedtype Credential: AuthenticationCredential & Sendable

    /// Adds `credential` to `urlRequest`, for instance as a bearer token in `Authorization`.
    ///
    /// - Parameters:
    ///   - credential: The credential.
    ///   - urlRequest: The request to authenticate.
    func apply(_ credential: Credential, to urlRequest: inout URLRequest)

    /// Makes a new credential from `credential` (with its refresh token, say); call `completion` exactly once.
    ///
    /// Send the refresh request through a `Session` without this interceptor: on this one it would wait for the
    /// refresh it is part of.
    ///
    /// - Parameters:
    ///   - credential: The credential to refresh.
    ///   - session:    The `Session` whose request needs it.
    ///   - completion: Called with the new credential or the error; every request waiting for it gets that result.
    func refresh(
        _ credential: Credential, for session: Session,
        completion: @escaping @Sendable (Result<Credential, any Error>) -> Void)

    /// Whether the request failed because the server refused its credential (commonly a 401 from the
    /// authentication layer, not from a service behind it).
    ///
    /// - Parameters:
    ///   - urlRequest: The request that was sent.
    ///   - response:   The response it got.
    ///   - error:      The error the request failed with.
    /// - Returns: `true` to refresh and retry.
    func didRequest(
        _ urlRequest: URLRequest, with response: HTTPURLResponse, failDueToAuthenticationError error: any Error
    ) -> Bool

    /// Whether `urlRequest` carries `credential`: when it carries an older one, it is retried with the current one
    /// and no refresh.
    ///
    /// - Parameters:
    ///   - urlRequest: The request that was sent.
    ///   - credential: The current credential.
    /// - Returns: `true` if the request was authenticated with `credential`.
    func isRequest(_ urlRequest: URLRequest, authenticatedWith credential: Credential) -> Bool
}

/// Why an `AuthenticationInterceptor` could not authenticate a request; carried inside
/// `AFError.requestAdaptationFailed` or `AFError.requestRetryFailed`.
public enum AuthenticationError: Error, Sendable {
    /// There is no credential to apply.
    case missingCredential
    /// More refreshes than the `RefreshWindow` allows.
    case excessiveRefresh
}

/// Authenticates requests with an `Authenticator`'s credential and refreshes it once for everyone: while a refresh
/// runs, every adapt and every retry waits for its result.
public final class AuthenticationInterceptor<AuthenticatorType>: RequestInterceptor, Sendable
where AuthenticatorType: Authenticator {
    /// The credential type.
    public typealias Credential = AuthenticatorType.Credential

    /// A limit on refreshes: more than `maximumAttempts` within the last `interval` seconds fail with
    /// `AuthenticationError.excessiveRefresh`, so a server that refuses every new credential cannot loop requests.
    public struct RefreshWindow: Sendable {
        /// The length of the window, in seconds, ending now.
        public let interval: TimeInterval
        /// The refreshes allowed within it.
        public let maximumAttempts: Int

        /// Creates a window.
        ///
        /// - Parameters:
        ///   - interval:        Seconds; 30 by default.
        ///   - maximumAttempts: Refreshes allowed; 5 by default.
        public init(interval: TimeInterval = 30.0, maximumAttempts: Int = 5) {
            self.interval = interval
            self.maximumAttempts = maximumAttempts
        }
    }

    private typealias AdaptCompletion = @Sendable (Result<URLRequest, any Error>) -> Void
    private typealias RetryCompletion = @Sendable (RetryResult) -> Void

    private struct State: Sendable {
        var credential: Credential?
        /// Bumped by every new credential, so a result about an older one is recognised.
        var generation = 0
        var isRefreshing = false
        /// The error of the refresh that failed for the current generation: later 401s end with it at once.
        var refreshFailure: (any Error)?
        var refreshTimes: [TimeInterval] = []
        let refreshWindow: RefreshWindow?
        var waitingAdapts: [(URLRequest, AdaptCompletion)] = []
        var waitingRetries: [RetryCompletion] = []
    }

    /// What to do once the lock is released.
    private enum Step {
        case none
        case refresh(Credential)
        case fail([(URLRequest, AdaptCompletion)], [RetryCompletion], any Error)
    }

    /// The authenticator.
    let authenticator: AuthenticatorType
    private let state: Protected<State>

    /// The credential applied to requests; setting it ends any failed-refresh state.
    public var credential: Credential? {
        get { state.read { $0.credential } }
        set {
            state.write { state in
                state.credential = newValue
                state.generation += 1
                state.refreshFailure = nil
            }
        }
    }

    /// Creates an interceptor.
    ///
    /// - Parameters:
    ///   - authenticator: Applies and refreshes the credential.
    ///   - credential:    The credential, if there is one yet.
    ///   - refreshWindow: The limit on refreshes; `nil` for none (not recommended).
    public init(
        authenticator: AuthenticatorType, credential: Credential? = nil, refreshWindow: RefreshWindow? = RefreshWindow()
    ) {
        self.authenticator = authenticator
        state = Protected(State(credential: credential, refreshWindow: refreshWindow))
    }

    /// Applies the credential, first refreshing it when it requires that; waits while a refresh runs.
    ///
    /// - Parameters:
    ///   - urlRequest: The request.
    ///   - session:    The `Session`.
    ///   - completion: Called with the authenticated request, or `AuthenticationError` / the refresh's error.
    public func adapt(
        _ urlRequest: URLRequest, for session: Session,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        let decision = state.write { state -> AdaptDecision in
            // Only a refresh an adapt began (the credential required it) holds adapts back; during one a 401 began,
            // the request goes with the credential there is, so that its own 401, if any, retries it through the
            // whole adapter chain afresh rather than sending a request adapted before the refresh with a credential
            // adapted after it (Alamofire 5.12).
            if state.isRefreshing, !state.waitingAdapts.isEmpty {
                state.waitingAdapts.append((urlRequest, completion))
                return .wait(.none)
            }
            guard let credential = state.credential else { return .fail(AuthenticationError.missingCredential) }
            guard credential.requiresRefresh, !state.isRefreshing else {
                // A request applying the credential starts afresh: a refresh that failed before it does not decide
                // for its 401, which may start a new refresh (as in Alamofire 5.12).
                state.refreshFailure = nil
                return .apply(credential)
            }
            state.waitingAdapts.append((urlRequest, completion))
            return .wait(beginRefresh(of: credential, in: &state))
        }
        switch decision {
        case let .apply(credential):
            var authenticated = urlRequest
            authenticator.apply(credential, to: &authenticated)
            completion(.success(authenticated))
        case let .fail(error):
            completion(.failure(error))
        case let .wait(step):
            perform(step, for: session)
        }
    }

    /// Refreshes and retries a request the authenticator says failed for its credential; one refresh serves every
    /// request that fails meanwhile, and a request sent with an older credential is retried without one.
    ///
    /// - Parameters:
    ///   - request:    The failed request.
    ///   - session:    The `Session`.
    ///   - error:      Its error.
    ///   - completion: Called with the decision.
    public func retry(
        _ request: Request, for session: Session, dueTo error: any Error,
        completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        guard let urlRequest = request.request, let response = request.response,
            authenticator.didRequest(urlRequest, with: response, failDueToAuthenticationError: error)
        else {
            completion(.doNotRetry)
            return
        }
        guard let (credential, generation) = state.read({ state in state.credential.map { ($0, state.generation) } })
        else {
            completion(.doNotRetryWithError(AuthenticationError.missingCredential))
            return
        }
        guard authenticator.isRequest(urlRequest, authenticatedWith: credential) else {
            completion(.retry)
            return
        }
        let decision = state.write { state -> RetryDecision in
            // A new credential arrived while the authenticator was being asked.
            guard state.generation == generation else { return .now(.retry) }
            if let failure = state.refreshFailure { return .now(.doNotRetryWithError(failure)) }
            state.waitingRetries.append(completion)
            if state.isRefreshing { return .wait(.none) }
            return .wait(beginRefresh(of: credential, in: &state))
        }
        switch decision {
        case let .now(result): completion(result)
        case let .wait(step): perform(step, for: session)
        }
    }

    private enum AdaptDecision {
        case apply(Credential)
        case fail(any Error)
        case wait(Step)
    }

    private enum RetryDecision {
        case now(RetryResult)
        case wait(Step)
    }

    /// Starts a refresh unless the window forbids it, in which case everyone waiting fails.
    private func beginRefresh(of credential: Credential, in state: inout State) -> Step {
        let now = ProcessInfo.processInfo.systemUptime
        if let window = state.refreshWindow {
            state.refreshTimes.removeAll { $0 < now - window.interval }
            if state.refreshTimes.count >= window.maximumAttempts {
                let error = AuthenticationError.excessiveRefresh
                state.refreshFailure = error
                let waiters = takeWaiters(&state)
                return .fail(waiters.adapts, waiters.retries, error)
            }
        }
        state.refreshTimes.append(now)
        state.isRefreshing = true
        return .refresh(credential)
    }

    private func takeWaiters(_ state: inout State) -> (
        adapts: [(URLRequest, AdaptCompletion)], retries: [RetryCompletion]
    ) {
        defer {
            state.waitingAdapts.removeAll()
            state.waitingRetries.removeAll()
        }
        return (state.waitingAdapts, state.waitingRetries)
    }

    /// Runs a step outside the lock: the authenticator and every completion are user code.
    private func perform(_ step: Step, for session: Session) {
        switch step {
        case .none:
            return
        case let .fail(adapts, retries, error):
            for (_, completion) in adapts { completion(.failure(error)) }
            for completion in retries { completion(.doNotRetryWithError(error)) }
        case let .refresh(credential):
            authenticator.refresh(credential, for: session) { [self] result in
                let (adapts, retries) = state.write { state -> ([(URLRequest, AdaptCompletion)], [RetryCompletion]) in
                    guard state.isRefreshing else { return ([], []) }
                    state.isRefreshing = false
                    switch result {
                    case let .success(credential):
                        state.credential = credential
                        state.generation += 1
                        state.refreshFailure = nil
                    case let .failure(error):
                        state.refreshFailure = error
                    }
                    let waiters = takeWaiters(&state)
                    return (waiters.adapts, waiters.retries)
                }
                switch result {
                case .success:
                    // Adapted again, not handed the new credential: one that still requires a refresh starts
                    // another, within the refresh window, as in Alamofire 5.12.
                    for (urlRequest, completion) in adapts { adapt(urlRequest, for: session, completion: completion) }
                    for completion in retries { completion(.retry) }
                case let .failure(error):
                    perform(.fail(adapts, retries, error), for: session)
                }
            }
        }
    }
}
