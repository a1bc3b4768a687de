import Foundation
import Logging
import ServiceLifecycle
import Tracing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A session's requests in flight and where it is in its life, behind one lock.
struct SessionActivity {
    enum Phase: Equatable {
        /// Taking requests.
        case running
        /// Refusing new requests; those in flight may finish until the grace period ends, then are cancelled.
        case draining
        /// The engine is released.
        case shutDown
    }

    var requests: Set<Request> = []
    var phase = Phase.running
    /// `AF`'s: a service group's shutdown does not end it.
    var isProcessLived = false
    /// The shutdown waiting for the requests to end (or its grace period, or its task's cancellation).
    var drainWaiter: CheckedContinuation<Void, Never>?
    /// Callers of `shutdown()` after the first, waiting for it to finish.
    var shutdownWaiters: [CheckedContinuation<Void, Never>] = []

    /// Counts `request` as started, or says why it may not start.
    mutating func start(_ request: Request) -> AFError? {
        guard phase == .running else { return .sessionShutDown(reason: .refusedAfterShutdownBegan) }
        requests.insert(request)
        return nil
    }

    /// `request` ended; returns the shutdown to wake when it was the last.
    mutating func end(_ request: Request) -> CheckedContinuation<Void, Never>? {
        requests.remove(request)
        return requests.isEmpty ? takeDrainWaiter() : nil
    }

    mutating func takeDrainWaiter() -> CheckedContinuation<Void, Never>? {
        defer { drainWaiter = nil }
        return drainWaiter
    }
}

// MARK: - Shutting down

extension Session {
    /// Shuts the session down: new requests fail at once with `AFError.sessionShutDown(reason:
    /// .refusedAfterShutdownBegan)`; requests in flight may finish for up to `gracePeriod` seconds; those still
    /// running are then cancelled (`AFError.sessionShutDown(reason: .cancelledAfterGracePeriod)`); and the engine
    /// releases its connections. It returns when all of that is done, suspending, never blocking a thread or an event
    /// loop.
    ///
    /// Calling it again, or while it runs, waits for the first call to finish. When the calling task is cancelled,
    /// the grace period ends at once. `AF` (`Session.default`) lives as long as the process: do not shut it down.
    ///
    /// - Parameter gracePeriod: How long requests in flight may take to finish, in seconds. `nil` (the session's
    ///   `shutdownGracePeriod`) by default.
    public func shutdown(gracePeriod: TimeInterval? = nil) async {
        let first = activity.write { activity -> Bool in
            guard activity.phase == .running else { return false }
            activity.phase = .draining
            return true
        }
        guard first else {
            await withCheckedContinuation { continuation in
                let done = activity.write { activity -> Bool in
                    guard activity.phase != .shutDown else { return true }
                    activity.shutdownWaiters.append(continuation)
                    return false
                }
                if done { continuation.resume() }
            }
            return
        }
        let chosen = gracePeriod ?? shutdownGracePeriod
        let grace = Task.isCancelled || !chosen.isFinite ? 0 : max(0, chosen)
        logger.debug("shutting down", metadata: ["grace-period": "\(grace)"])
        if grace > 0 { await waitForRequestsToEnd(upTo: grace) }
        let reason = AFError.sessionShutDown(reason: .cancelledAfterGracePeriod(gracePeriod: grace))
        for request in activity.read({ $0.requests }) { request.cancel(dueTo: reason) }
        // Cancelled requests end as the engine lets go of them; whatever it still holds it fails as it shuts down.
        await context.transport.shutdownGracefully()
        webSockets.read()?.shutdown()
        await waitForRequestsToEnd(upTo: Self.cancellationAllowance)
        let waiters = activity.write { activity -> [CheckedContinuation<Void, Never>] in
            activity.phase = .shutDown
            defer { activity.shutdownWaiters = [] }
            return activity.shutdownWaiters
        }
        for waiter in waiters { waiter.resume() }
        logger.debug("shut down")
    }

    /// How long a shutdown waits for cancelled requests to end after the engine let go of them (their interceptors
    /// and monitors run as they end): a bound, so a retrier that never answers cannot hold a shutdown forever.
    static let cancellationAllowance: TimeInterval = 5

    /// Whether the session has begun shutting down (or has shut down).
    public var isShuttingDown: Bool {
        activity.read { $0.phase != .running }
    }

    /// Waits until no request is in flight, `limit` seconds pass, or the calling task is cancelled.
    private func waitForRequestsToEnd(upTo limit: TimeInterval) async {
        let activity = self.activity
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let idle = activity.write { activity -> Bool in
                    guard !activity.requests.isEmpty else { return true }
                    activity.drainWaiter = continuation
                    return false
                }
                if idle { return continuation.resume() }
                DispatchQueue.global().asyncAfter(deadline: .now() + limit) {
                    activity.write { $0.takeDrainWaiter() }?.resume()
                }
                // A cancellation that came before the waiter was stored found nothing to wake.
                if Task.isCancelled { activity.write { $0.takeDrainWaiter() }?.resume() }
            }
        } onCancel: {
            activity.write { $0.takeDrainWaiter() }?.resume()
        }
    }
}

// MARK: - Service lifecycle

extension Session: Service {
    /// Runs the session as a service of a `ServiceGroup` (swift-service-lifecycle): it waits until the group begins a
    /// graceful shutdown, then shuts down with `shutdown()` (new requests refused, those in flight given
    /// `shutdownGracePeriod`, the rest cancelled, the engine released), and returns. It does not throw. When the task
    /// running it is cancelled instead, the session shuts down the same way with no grace period.
    ///
    /// ```swift
    /// let session = Session(shutdownGracePeriod: 10)
    /// let group = ServiceGroup(services: [session, server], gracefulShutdownSignals: [.sigterm], logger: logger)
    /// try await group.run()
    /// ```
    ///
    /// `AF` (`Session.default`) lives as long as the process: run in a group, it waits for the shutdown and returns
    /// without shutting down, so code elsewhere that uses `AF` keeps working. Give the group a `Session` of its own.
    public func run() async {
        let gracefully: Bool
        do {
            try await gracefulShutdown()
            gracefully = true
        } catch {
            gracefully = false
        }
        guard !activity.read({ $0.isProcessLived }) else { return }
        await shutdown(gracePeriod: gracefully ? nil : 0)
    }
}

// MARK: - A scoped session

extension Session {
    /// Makes a session, runs `body` with it, then shuts it down as `shutdown()` does (requests still in flight get
    /// `shutdownGracePeriod`, then are cancelled) before returning `body`'s value or rethrowing its error. When the
    /// calling task is cancelled, the shutdown has no grace period.
    ///
    /// ```swift
    /// let names = try await Session.withSession(shutdownGracePeriod: 5) { session in
    ///     try await session.request("https://example.com/names").serializingDecodable([String].self).value
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - configuration:         The `URLSessionConfiguration`. `URLSessionConfiguration.af.default` by default.
    ///   - interceptor:           The `RequestInterceptor` for every request. `nil` by default.
    ///   - serverTrustManager:    Chooses how each TLS host's identity is judged. `nil` by default.
    ///   - tls:                   Trust roots, client certificates and the HTTP/2 offer. `.default` by default.
    ///   - redirectHandler:       The `RedirectHandler` for every request. `nil` (follow) by default.
    ///   - cachedResponseHandler: Decides what the configuration's `urlCache` stores. `nil` by default.
    ///   - eventMonitors:         Monitors told of every request's events. None by default.
    ///   - maximumResponseSize:   The largest body a request holds in memory. 100 MiB by default.
    ///   - logger:                Where request lifecycle lines go. Discards everything by default.
    ///   - tracer:                Traces every request. `nil` (the bootstrapped tracer, if any) by default.
    ///   - metrics:               What is measured with swift-metrics. `.default` by default.
    ///   - connections:           How the engine makes and keeps connections. `.default` by default.
    ///   - shutdownGracePeriod:   How long requests in flight may finish when `body` ends, in seconds. 30 by default.
    ///   - isolation:             The caller's isolation, which `body` runs in.
    ///   - body:                  The work to do with the session.
    /// - Returns: `body`'s value.
    /// - Throws: `body`'s error, after the session shut down.
    public static func withSession<Result: Sendable>(
        configuration: URLSessionConfiguration = URLSessionConfiguration.af.default,
        interceptor: (any RequestInterceptor)? = nil,
        serverTrustManager: ServerTrustManager? = nil,
        tls: TLSSettings = .default,
        redirectHandler: (any RedirectHandler)? = nil,
        cachedResponseHandler: (any CachedResponseHandler)? = nil,
        eventMonitors: [any EventMonitor] = [],
        maximumResponseSize: Int64? = Session.defaultMaximumResponseSize,
        logger: Logger = Session.disabledLogger,
        tracer: (any Tracer)? = nil,
        metrics: MetricsOptions = .default,
        connections: ConnectionSettings = .default,
        shutdownGracePeriod: TimeInterval = Session.defaultShutdownGracePeriod,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (Session) async throws -> Result
    ) async throws -> Result {
        let session = Session(
            configuration: configuration, interceptor: interceptor, serverTrustManager: serverTrustManager, tls: tls,
            redirectHandler: redirectHandler, cachedResponseHandler: cachedResponseHandler,
            eventMonitors: eventMonitors, maximumResponseSize: maximumResponseSize, logger: logger, tracer: tracer,
            metrics: metrics, connections: connections, shutdownGracePeriod: shutdownGracePeriod)
        do {
            let value = try await body(session)
            await session.shutdown()
            return value
        } catch {
            await session.shutdown()
            throw error
        }
    }
}
