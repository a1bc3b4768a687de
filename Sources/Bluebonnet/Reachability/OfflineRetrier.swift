import Dispatch
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `RequestRetrier` that holds a request which failed for want of a network until the network is back, then
/// retries it; after `maximumWait` without one it gives up and the request keeps its error. Alamofire's
/// `OfflineRetrier` watches Network.framework's path monitor; this one watches a `NetworkReachabilityManager` (the
/// kernel's interfaces and routes), a new one for each period of waiting.
///
/// Every request that fails offline while one is waiting joins that wait, and all are answered together. An error
/// that does not mean "offline" (by `isOfflineError`) is `.doNotRetry` at once, so the next retrier of an
/// `Interceptor` decides.
public final class OfflineRetrier: RequestAdapter, RequestRetrier, RequestInterceptor, Sendable {
    /// How long to wait for the network before giving up: 5 seconds.
    public static let defaultWait: DispatchTimeInterval = .seconds(5)
    /// The `URLError` codes that mean the device is offline: `.notConnectedToInternet`, which Bluebonnet reports when
    /// the kernel has no route to the server's network.
    public static let defaultURLErrorOfflineCodes: Set<URLError.Code> = [.notConnectedToInternet]
    /// Whether an error means offline: a `URLError` with one of `defaultURLErrorOfflineCodes`, also inside an
    /// `AFError`.
    public static let defaultIsOfflineError: @Sendable (_ error: any Error) -> Bool = { error in
        if let underlying = error.asAFError?.underlyingError { return defaultIsOfflineError(underlying) }
        guard let urlError = error as? URLError else { return false }
        return defaultURLErrorOfflineCodes.contains(urlError.code)
    }

    /// Where the monitors report and the waiting requests are answered.
    private static let monitorQueue = DispatchQueue(label: "org.bluebonnet.offlineRetrier.monitorQueue")

    private struct State {
        var monitor: NetworkReachabilityManager?
        /// Whether a period of waiting is under way.
        var isWaiting = false
        var waiting: [@Sendable (RetryResult) -> Void] = []
        /// Counts periods of waiting, so a late report of an earlier one (its timeout, say) is ignored.
        var period = 0
    }

    private let makeMonitor: @Sendable () -> NetworkReachabilityManager?
    private let maximumWait: DispatchTimeInterval
    private let isOfflineError: @Sendable (_ error: any Error) -> Bool
    private let state = Protected(State())

    /// Creates a retrier.
    ///
    /// - Parameters:
    ///   - monitor:        Makes the manager watched while requests wait, once per period of waiting: the network's
    ///                     general reachability by default. A subclass can stand in for it in tests.
    ///   - maximumWait:    How long to wait for the network. `defaultWait` by default.
    ///   - isOfflineError: Whether an error means offline. `defaultIsOfflineError` by default.
    public init(
        monitor: @autoclosure @escaping @Sendable () -> NetworkReachabilityManager? = NetworkReachabilityManager(),
        maximumWait: DispatchTimeInterval = OfflineRetrier.defaultWait,
        isOfflineError: @escaping @Sendable (_ error: any Error) -> Bool = OfflineRetrier.defaultIsOfflineError
    ) {
        makeMonitor = monitor
        self.maximumWait = maximumWait
        self.isOfflineError = isOfflineError
    }

    deinit {
        let (monitor, waiting) = state.write { state in
            defer { state = State() }
            return (state.monitor, state.waiting)
        }
        monitor?.stopListening()
        for completion in waiting { Self.monitorQueue.async { completion(.doNotRetry) } }
    }

    /// Waits for the network when `error` means offline; `.doNotRetry` at once otherwise.
    ///
    /// - Parameters:
    ///   - request:    The request that failed.
    ///   - session:    Its session.
    ///   - error:      The error of its attempt.
    ///   - completion: Called with `.retry` once the network is back, `.doNotRetry` after `maximumWait`.
    public func retry(
        _ request: Request, for session: Session, dueTo error: any Error,
        completion: @escaping @Sendable (RetryResult) -> Void
    ) {
        guard isOfflineError(error) else { return completion(.doNotRetry) }
        let period = state.write { state -> Int? in
            state.waiting.append(completion)
            guard !state.isWaiting else { return nil }
            state.isWaiting = true
            state.period += 1
            return state.period
        }
        guard let period else { return }
        startWaiting(period)
    }

    private func startWaiting(_ period: Int) {
        guard let monitor = makeMonitor() else { return answer(.doNotRetry, period: period) }
        let current = state.write { state -> Bool in
            guard state.period == period else { return false }
            state.monitor = monitor
            return true
        }
        guard current else { return }
        Self.monitorQueue.asyncAfter(deadline: .now() + maximumWait) { [weak self] in
            self?.answer(.doNotRetry, period: period)
        }
        // The listener hears the status at once, then each change: a network already back retries at once. Only
        // `.notReachable` waits; `.unknown` (the kernel could not be read) is no reason to hold a request.
        monitor.startListening(onQueue: Self.monitorQueue) { [weak self] status in
            guard status != .notReachable else { return }
            self?.answer(.retry, period: period)
        }
    }

    /// Answers every waiting request of `period` with `result` and stops watching.
    private func answer(_ result: RetryResult, period: Int) {
        let (monitor, waiting) = state.write {
            state -> (NetworkReachabilityManager?, [@Sendable (RetryResult) -> Void]) in
            guard state.period == period, state.isWaiting else { return (nil, []) }
            defer {
                state.monitor = nil
                state.isWaiting = false
                state.waiting = []
            }
            return (state.monitor, state.waiting)
        }
        monitor?.stopListening()
        for completion in waiting { Self.monitorQueue.async { completion(result) } }
    }
}

extension RequestInterceptor where Self == OfflineRetrier {
    /// An `OfflineRetrier`.
    ///
    /// - Parameters:
    ///   - monitor:        Makes the manager watched while requests wait. The network's general reachability by
    ///                     default.
    ///   - maximumWait:    How long to wait for the network. `OfflineRetrier.defaultWait` by default.
    ///   - isOfflineError: Whether an error means offline. `OfflineRetrier.defaultIsOfflineError` by default.
    /// - Returns: The retrier.
    public static func offlineRetrier(
        monitor: @autoclosure @escaping @Sendable () -> NetworkReachabilityManager? = NetworkReachabilityManager(),
        maximumWait: DispatchTimeInterval = OfflineRetrier.defaultWait,
        isOfflineError: @escaping @Sendable (_ error: any Error) -> Bool = OfflineRetrier.defaultIsOfflineError
    ) -> OfflineRetrier {
        OfflineRetrier(monitor: monitor(), maximumWait: maximumWait, isOfflineError: isOfflineError)
    }
}
