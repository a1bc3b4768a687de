import CoreMetrics
import Foundation
import Tracing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Session {
    /// What a session measures with swift-metrics, under OpenTelemetry's names for HTTP clients.
    ///
    /// Measured, with the bootstrapped `MetricsSystem` (or `factory`): `http.client.request.duration` (a timer per
    /// physical request, by `http.request.method`, `server.address`, `server.port`, `url.scheme`,
    /// `http.response.status_code` and `error.type`; a method outside OpenTelemetry's known set is `_OTHER`),
    /// `http.client.active_requests` (a meter of requests under way), `http.client.request.body.size` and
    /// `http.client.response.body.size` (recorders, in bytes), and Bluebonnet's own `bluebonnet.client.retries` and
    /// `bluebonnet.client.cache_hits` (counters). Nothing is measured when no factory is bootstrapped or given.
    public struct MetricsOptions: Sendable {
        /// Whether requests are measured.
        public var isEnabled: Bool
        /// Dimensions added to every metric (a service's name, say).
        public var dimensions: [(String, String)]
        /// The factory to record with; `nil` for the one bootstrapped in `MetricsSystem`.
        public var factory: (any MetricsFactory)?

        /// Creates options.
        ///
        /// - Parameters:
        ///   - isEnabled:  Whether requests are measured. `true` by default.
        ///   - dimensions: Dimensions added to every metric. None by default.
        ///   - factory:    The factory; `nil` (the bootstrapped one) by default.
        public init(isEnabled: Bool = true, dimensions: [(String, String)] = [], factory: (any MetricsFactory)? = nil) {
            self.isEnabled = isEnabled
            self.dimensions = dimensions
            self.factory = factory
        }

        /// Measured, when a factory is bootstrapped.
        public static let `default` = MetricsOptions()
        /// Not measured.
        public static let disabled = MetricsOptions(isEnabled: false)

        /// What records the session's requests, or `nil` when nothing does.
        var metering: RequestMetering? {
            guard isEnabled else { return nil }
            if let factory { return RequestMetering(factory: factory, dimensions: dimensions) }
            let bootstrapped = MetricsSystem.factory
            guard !(bootstrapped is NOOPMetricsHandler) else { return nil }
            return RequestMetering(factory: bootstrapped, dimensions: dimensions)
        }
    }
}

/// Records each request's metrics when it finishes, from its transactions; counts it as active from its first hop.
struct RequestMetering: RequestObserverMaking {
    let factory: any MetricsFactory
    let dimensions: [(String, String)]

    func makeObserver() -> any RequestObserving {
        // The operation an API client named, from the caller's context as the request is made.
        let operation = ServiceContext.current?.requestOperation
        return RequestMeter(
            metering: self, dimensions: operation.map { dimensions + [("openapi.operation_id", $0)] } ?? dimensions)
    }
}

/// One request's metrics. A retry a response serializer asks for reopens a request after it finished (Alamofire's
/// serializer retry): each finish records only what is new since the one before.
final class RequestMeter: RequestObserving {
    private struct State {
        /// The dimensions of the active-requests meter, from the first hop until the request finishes.
        var active: [(String, String)]?
        /// How many transactions and retries earlier finishes recorded.
        var recordedTransactions = 0
        var recordedRetries = 0
    }

    private let metering: RequestMetering
    /// The session's dimensions, and the request's operation when it has one.
    private let extraDimensions: [(String, String)]
    private let state = Protected(State())

    init(metering: RequestMetering, dimensions: [(String, String)]) {
        self.metering = metering
        self.extraDimensions = dimensions
    }

    func hopWillSend(_ hop: inout TransportRequest) {
        let dimensions = Self.base(method: hop.urlRequest.httpMethod, url: hop.urlRequest.url) + extraDimensions
        let first = state.write { state -> Bool in
            guard state.active == nil else { return false }
            state.active = dimensions
            return true
        }
        guard first else { return }
        Meter(label: "http.client.active_requests", dimensions: dimensions, factory: metering.factory).increment()
    }

    func hopDidReceive(_ response: ResponseHead) {}

    func hopDidEnd(error: AFError?) {}

    func requestDidFinish(_ request: Request, response: ResponseHead?, error: AFError?) {
        let all = request.allTaskMetrics.flatMap(\.transactionMetrics)
        let retryCount = request.retryCount
        let (wasActive, recorded, recordedRetries) = state.write { state in
            defer {
                state.active = nil
                state.recordedTransactions = all.count
                state.recordedRetries = max(state.recordedRetries, retryCount)
            }
            return (state.active, min(state.recordedTransactions, all.count), state.recordedRetries)
        }
        if let dimensions = wasActive {
            Meter(label: "http.client.active_requests", dimensions: dimensions, factory: metering.factory).decrement()
        }
        let transactions = all[recorded...]
        for (index, transaction) in zip(transactions.indices, transactions) {
            let status = transaction.head?.statusCode
            var dimensions = Self.base(method: transaction.request.httpMethod, url: transaction.request.url)
            if let status { dimensions.append(("http.response.status_code", String(status))) }
            // The request's error belongs to its last hop; an earlier hop failed only by its status.
            if index == all.count - 1, let error {
                dimensions.append(("error.type", RequestTrace.errorType(of: error)))
            } else if let status, status >= 400 {
                dimensions.append(("error.type", String(status)))
            }
            dimensions += extraDimensions
            if let start = transaction.fetchStartDate {
                let end = transaction.responseEndDate ?? Date()
                CoreMetrics.Timer(
                    label: "http.client.request.duration", dimensions: dimensions, factory: metering.factory
                )
                .recordSeconds(max(0, end.timeIntervalSince(start)))
            }
            if transaction.countOfRequestBodyBytesSent > 0 {
                Recorder(label: "http.client.request.body.size", dimensions: dimensions, factory: metering.factory)
                    .record(transaction.countOfRequestBodyBytesSent)
            }
            if transaction.head != nil {
                Recorder(label: "http.client.response.body.size", dimensions: dimensions, factory: metering.factory)
                    .record(transaction.countOfResponseBodyBytesAfterDecoding)
            }
            if transaction.resourceFetchType == .localCache {
                Counter(
                    label: "bluebonnet.client.cache_hits",
                    dimensions: Self.base(url: transaction.request.url)
                        + extraDimensions, factory: metering.factory
                ).increment()
            }
        }
        if retryCount > recordedRetries {
            let first = all.first?.request
            Counter(
                label: "bluebonnet.client.retries",
                dimensions: Self.base(method: first?.httpMethod, url: first?.url) + extraDimensions,
                factory: metering.factory
            ).increment(by: retryCount - recordedRetries)
        }
    }

    /// The dimensions every metric of a hop has: method, server and scheme.
    private static func base(method: String? = nil, url: URL?) -> [(String, String)] {
        var dimensions: [(String, String)] = []
        // A method outside OpenTelemetry's known set is `_OTHER`: custom methods make no unbounded set of series.
        if let method { dimensions.append(("http.request.method", RequestTrace.knownMethod(method))) }
        if let host = url?.host { dimensions.append(("server.address", host)) }
        if let port = url?.port ?? (url?.scheme?.lowercased() == "https" ? 443 : url?.scheme != nil ? 80 : nil) {
            dimensions.append(("server.port", String(port)))
        }
        if let scheme = url?.scheme?.lowercased() { dimensions.append(("url.scheme", scheme)) }
        return dimensions
    }
}
