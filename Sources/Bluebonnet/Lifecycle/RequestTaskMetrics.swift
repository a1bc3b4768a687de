import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What was measured of one attempt of a request: one transaction per hop, redirects included. The property names
/// are those of `URLSessionTaskMetrics`, so code that reads Alamofire's metrics compiles.
///
/// FoundationNetworking's metrics types cannot be created outside `URLSession`, so Bluebonnet has its own. Only what
/// the engine measures is filled; see `RequestTaskTransactionMetrics` for what stays `nil`.
public struct RequestTaskMetrics: Sendable {
    /// The first hop, kept apart from the others so a request without redirects records its metrics without
    /// allocating; `nil` for a task that ended before any hop left (cancelled before it was resumed).
    let firstTransaction: RequestTaskTransactionMetrics?
    /// The hops after the first, one per redirect followed or challenge answered.
    let laterTransactions: [RequestTaskTransactionMetrics]
    let startTime: CFAbsoluteTime
    let endTime: CFAbsoluteTime
    /// How many of the later hops were redirects (the others answered an authentication challenge).
    let redirects: Int
    /// The error that ended the attempt, once it ended.
    var error: AFError?

    /// One entry per hop, in order.
    public var transactionMetrics: [RequestTaskTransactionMetrics] {
        firstTransaction.map { [$0] + laterTransactions } ?? []
    }

    /// From the start of the attempt's first hop to the end of its last.
    public var taskInterval: DateInterval {
        DateInterval(
            start: Date(timeIntervalSinceReferenceDate: startTime),
            end: Date(timeIntervalSinceReferenceDate: max(startTime, endTime)))
    }

    /// How many redirects the attempt followed; a hop that answered an authentication challenge is not one.
    public var redirectCount: Int { redirects }
}

/// What was measured of one hop: the request sent, the response head, when each stage began and ended, and the bytes
/// of the bodies. The property names are those of `URLSessionTaskTransactionMetrics`.
///
/// AsyncHTTPClient tells a request when its head and body were written and when the response head and body arrived,
/// but not which connection carried it: `domainLookupStartDate`, `domainLookupEndDate`, `connectStartDate`,
/// `connectEndDate`, `secureConnectionStartDate`, `secureConnectionEndDate`, `localAddress`, `localPort`,
/// `remoteAddress` and `remotePort` are always `nil` here, never estimated.
public struct RequestTaskTransactionMetrics: Sendable {
    /// How the resource was fetched.
    public enum ResourceFetchType: Sendable {
        /// Not known.
        case unknown
        /// Loaded over the network.
        case networkLoad
        /// Pushed by the server.
        case serverPush
        /// Served from a local cache.
        case localCache
    }

    /// The request of this hop, as the user (or the redirect handler) made it.
    public let request: URLRequest
    var fetchStartTime: CFAbsoluteTime
    var requestStartTime: CFAbsoluteTime?
    var requestEndTime: CFAbsoluteTime?
    var responseStartTime: CFAbsoluteTime?
    var responseEndTime: CFAbsoluteTime?
    var head: ResponseHead?
    var requestBodyBytesSent: Int64 = 0
    var responseBodyBytesDecoded: Int64 = 0
    /// For a body the engine decoded: its declared length on the wire (`.some(nil)` when undeclared).
    var responseBodyBytesEncoded: Int64??
    var protocolName: String?
    var fetchType: ResourceFetchType = .networkLoad

    init(request: URLRequest, fetchStartTime: CFAbsoluteTime) {
        self.request = request
        self.fetchStartTime = fetchStartTime
    }

    /// The response head, once it arrived.
    public var response: URLResponse? { head?.httpResponse }
    /// When the hop was handed to the engine.
    public var fetchStartDate: Date? { Date(timeIntervalSinceReferenceDate: fetchStartTime) }
    /// Not measured: always `nil`.
    public var domainLookupStartDate: Date? { nil }
    /// Not measured: always `nil`.
    public var domainLookupEndDate: Date? { nil }
    /// Not measured: always `nil`.
    public var connectStartDate: Date? { nil }
    /// Not measured: always `nil`.
    public var secureConnectionStartDate: Date? { nil }
    /// Not measured: always `nil`.
    public var secureConnectionEndDate: Date? { nil }
    /// Not measured: always `nil`.
    public var connectEndDate: Date? { nil }
    /// When the engine wrote the request head.
    public var requestStartDate: Date? { requestStartTime.map(Date.init(timeIntervalSinceReferenceDate:)) }
    /// When the engine wrote the last byte of the request.
    public var requestEndDate: Date? { requestEndTime.map(Date.init(timeIntervalSinceReferenceDate:)) }
    /// When the response head arrived.
    public var responseStartDate: Date? { responseStartTime.map(Date.init(timeIntervalSinceReferenceDate:)) }
    /// When the response ended, or the hop failed.
    public var responseEndDate: Date? { responseEndTime.map(Date.init(timeIntervalSinceReferenceDate:)) }
    /// The protocol of the response, as ALPN names it (`http/1.1`, `h2`); `nil` before the head arrived.
    public var networkProtocolName: String? { protocolName }
    /// Whether the hop went through a proxy: never, as Bluebonnet connects directly.
    public var isProxyConnection: Bool { false }
    /// How the resource was fetched.
    public var resourceFetchType: ResourceFetchType { fetchType }
    /// Bytes of the request body written.
    public var countOfRequestBodyBytesSent: Int64 { requestBodyBytesSent }
    /// Bytes of the request body before content encoding: Bluebonnet encodes none, so the bytes sent.
    public var countOfRequestBodyBytesBeforeEncoding: Int64 { requestBodyBytesSent }
    /// Bytes of the response body as they came over the wire: the declared `Content-Length` of a compressed body
    /// (the engine decodes it), else the bytes received; 0 when a compressed body declared no length.
    public var countOfResponseBodyBytesReceived: Int64 {
        switch responseBodyBytesEncoded {
        case .none: responseBodyBytesDecoded
        case let .some(declared): declared ?? 0
        }
    }
    /// Bytes of the response body after decoding.
    public var countOfResponseBodyBytesAfterDecoding: Int64 { responseBodyBytesDecoded }
    /// Not measured: always `nil`.
    public var localAddress: String? { nil }
    /// Not measured: always `nil`.
    public var localPort: Int? { nil }
    /// Not measured: always `nil`.
    public var remoteAddress: String? { nil }
    /// Not measured: always `nil`.
    public var remotePort: Int? { nil }
}

/// The metrics of the attempt in progress and of the attempts before it, as raw stamps.
struct MetricsLog {
    private var first: RequestTaskTransactionMetrics?
    private var later: [RequestTaskTransactionMetrics] = []
    private var endTime: CFAbsoluteTime?
    private var redirects = 0
    /// Attempts that ended before a retry.
    private var past: [RequestTaskMetrics] = []
    /// An attempt whose task ended before any hop left, as URLSession reports one: no transactions.
    private var withoutHop: RequestTaskMetrics?
    /// The error that ended the current attempt, once it ended.
    private var endError: AFError?

    /// A hop begins.
    mutating func beginHop(_ request: URLRequest, at time: CFAbsoluteTime) {
        let hop = RequestTaskTransactionMetrics(request: request, fetchStartTime: time)
        if first == nil { first = hop } else { later.append(hop) }
    }

    /// The next hop follows a redirect.
    mutating func noteRedirect() {
        redirects += 1
    }

    /// Updates the hop in progress.
    mutating func updateHop(_ update: (inout RequestTaskTransactionMetrics) -> Void) {
        if later.isEmpty {
            guard first != nil else { return }
            update(&first!)
        } else {
            update(&later[later.count - 1])
        }
    }

    /// The attempt ended; its metrics, if a hop began or a task had been made for it.
    mutating func endAttempt(at time: CFAbsoluteTime, error: AFError?, hadTask: Bool = false) -> RequestTaskMetrics? {
        endError = error
        if first == nil, hadTask, withoutHop == nil {
            withoutHop = RequestTaskMetrics(
                firstTransaction: nil, laterTransactions: [], startTime: time, endTime: time, redirects: 0,
                error: error)
        }
        updateHop { if $0.responseEndTime == nil { $0.responseEndTime = time } }
        if endTime == nil { endTime = time }
        return current
    }

    /// A retry begins: the attempt that ended joins the past ones.
    mutating func beginRetry() {
        if let current { past.append(current) }
        withoutHop = nil
        endError = nil
        first = nil
        later = []
        endTime = nil
        redirects = 0
    }

    private var current: RequestTaskMetrics? {
        guard let first else { return withoutHop }
        let end = endTime ?? (later.last ?? first).responseEndTime ?? (later.last ?? first).fetchStartTime
        return RequestTaskMetrics(
            firstTransaction: first, laterTransactions: later, startTime: first.fetchStartTime, endTime: end,
            redirects: redirects, error: endError)
    }

    /// How many attempts began: those measured, and the current one if it has a hop or a task, or was announced
    /// (an `.eager` session makes an attempt's task before `resume()`).
    func attemptCount(current task: RequestTask?, announced: Bool) -> Int {
        let current = first != nil || withoutHop != nil || task?.attempt == past.count || announced
        return past.count + (current ? 1 : 0)
    }

    /// The request attempt `index` began with.
    func originalRequest(ofAttempt index: Int) -> URLRequest? {
        if index < past.count { return past[index].firstTransaction?.request }
        return first?.request
    }

    /// What was measured of attempt `index` (0 for the first), if it ended.
    func endedAttempt(_ index: Int) -> RequestTaskMetrics? {
        if index < past.count { return past[index] }
        guard index == past.count, endTime != nil || withoutHop != nil else { return nil }
        return current
    }

    /// The request of the latest hop.
    var latestHopRequest: URLRequest? { (later.last ?? first)?.request }

    /// The last attempt's metrics.
    var last: RequestTaskMetrics? { current ?? past.last }

    /// Every attempt's metrics, in order.
    var all: [RequestTaskMetrics] { current.map { past + [$0] } ?? past }
}
