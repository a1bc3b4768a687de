import Foundation
import Logging
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a `Request` hands to the transport for one attempt (one hop of a redirect chain).
///
/// Part of the engine seam that `BluebonnetTesting`'s `StubTransport` plugs into (`@_spi(Transport)`), not of the
/// API an app uses.
@_spi(Transport) public struct TransportRequest: Sendable {
    /// The request as the user made it.
    public var urlRequest: URLRequest
    /// The header fields as they go on the wire: the request's, then the session's it does not override; validated.
    public var headers: [(name: String, value: String)]
    /// Idle time allowed between reads, when tighter than the session's.
    var idleTimeout: TimeInterval?
    /// Absolute time by which the whole request (every hop) must end.
    var deadline: Date?
    /// The largest response body, in decoded bytes, the engine may gather in memory; `nil` for no limit.
    var maximumBodySize: Int64?
    /// The session's logger, for the engine's own lines; `nil` when it discards `.debug`.
    var logger: Logger?
    /// The body to stream instead of `urlRequest.httpBody`, for uploads.
    var body: UploadBody?
    /// What the session's hop preparers attached for a decorator further down (the cache's handler).
    var features = FeatureValues()
}

/// Receives the events of one attempt. Calls for one attempt are serial; they may come from any thread, and with
/// AsyncHTTPClient they come from a NIO event loop.
///
/// The rule for everything behind a sink: an event loop does bookkeeping only. A sink updates in-memory state under
/// its lock and returns; anything that runs user code (redirect handlers, adapters, retriers, validators awaiting a
/// retry decision, event monitors, progress handlers) or touches the file system hops to the request's
/// `underlyingQueue`, `serializationQueue`, the monitor's or handler's own queue, or NIO's thread pool.
/// `InterceptorTests.testNoUserClosureRunsOnAnEventLoop` checks it for each kind of user closure.
@_spi(Transport) public protocol TransportSink: AnyObject, Sendable {
    /// The engine wrote the request head.
    func transportDidSendRequestHead()
    /// The head of the response arrived.
    ///
    /// - Parameters:
    ///   - head:               The head.
    ///   - expectedBodyLength: The body's decoded length when known, else -1.
    ///   - encodedBodyLength:  For a body the engine decodes, its length on the wire when the server declared it.
    ///   - protocolName:       The protocol, as ALPN names it (`http/1.1`, `h2`).
    ///   - setCookieFields:    Each `Set-Cookie` field apart: `HTTPURLResponse` joins them with commas, which
    ///                         `Expires` dates also contain.
    /// - Returns: How the engine goes on: whether the body streams, and whether it waits for the sink first.
    func transportDidReceiveResponse(
        _ head: ResponseHead, expectedBodyLength: Int64, encodedBodyLength: Int64??,
        protocolName: String, setCookieFields: [String]
    ) -> TransportHeadReply
    /// Bytes of the request body reached the socket.
    func transportDidSendBodyBytes(_ count: Int)
    /// The whole request was sent.
    ///
    /// - Parameter hadBody: Whether it streamed an upload body.
    func transportDidSendRequest(hadBody: Bool)
    /// Bytes of the response body arrived (after decoding).
    func transportDidReceiveBodyBytes(_ count: Int)
    /// A chunk of a body that streams. The engine reads no more until `readiness` is told, which is how a slow
    /// disk or consumer slows the server down rather than filling memory.
    func transportDidReceiveBodyChunk(_ chunk: Data, readiness: TransportReadiness)
    /// The attempt ended: the whole body, or the error that stopped it, already an `AFError` (the engine maps its
    /// own errors, so nothing above `Transport/` knows them).
    func transportDidComplete(body: Data, error: AFError?)
    /// The response about to arrive comes from the cache, not the network.
    func transportWillServeFromCache()
}

extension TransportSink {
    @_spi(Transport) public func transportWillServeFromCache() {}
}

/// What a sink says of a response head.
@_spi(Transport) public struct TransportHeadReply: Sendable {
    /// Whether the body streams to `transportDidReceiveBodyChunk(_:readiness:)` as it arrives, with no limit on its
    /// size, rather than being gathered for `transportDidComplete(body:error:)`.
    var streamsBody: Bool
    /// When set, the engine reads none of the body until the sink settles the readiness handed to this closure
    /// (called once, on the engine's thread): `ready()` reads on, `fail(_:)` ends the attempt. The wait is the
    /// sink's, so the idle timer does not count it.
    var hold: (@Sendable (TransportReadiness) -> Void)?

    /// Reads on at once; the body streams or is gathered.
    static func proceed(streamingBody: Bool) -> Self { Self(streamsBody: streamingBody, hold: nil) }
}

/// A running attempt.
@_spi(Transport) public protocol TransportTask: Sendable {
    /// Stops the attempt; the sink then completes with a cancellation error.
    func cancel()
    /// Stops reading the response body (back-pressure) until `resume()`.
    func suspend()
    /// Reads again after `suspend()`.
    func resume()
}

/// An attempt that failed before it reached the engine; its sink has been told already.
struct CompletedTransportTask: TransportTask {
    func cancel() {}
    func suspend() {}
    func resume() {}
}

/// The engine underneath a `Session`.
@_spi(Transport) public protocol HTTPTransport: Sendable {
    /// Starts one attempt.
    func execute(_ request: TransportRequest, sink: any TransportSink) -> any TransportTask
    /// Releases connections and threads; in-flight attempts fail. It returns at once, without waiting for them.
    func shutdown()
    /// Releases connections and threads as `shutdown()` does, and returns once they are released. It suspends; it
    /// never blocks a thread.
    func shutdownGracefully() async
}

extension HTTPTransport {
    /// An engine with nothing to wait for: `shutdown()`.
    public func shutdownGracefully() async {
        shutdown()
    }
}
