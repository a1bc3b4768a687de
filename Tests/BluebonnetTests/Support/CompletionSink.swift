@_spi(Transport) @testable import Bluebonnet
import Foundation
import NIOCore
import NIOPosix
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A sink that keeps how its attempt ended and the event loop it heard the end on; `completion()` awaits the end.
final class CompletionSink: TransportSink, @unchecked Sendable {
    // @unchecked: the fields are touched only under `lock`.
    private let lock = NSLock()
    private var ended: (body: Data, error: AFError?)?
    private var endedOn: (any EventLoop)?
    private var waiters: [CheckedContinuation<AFError?, Never>] = []

    var isComplete: Bool {
        lock.lock(); defer { lock.unlock() }
        return ended != nil
    }

    var body: Data {
        lock.lock(); defer { lock.unlock() }
        return ended?.body ?? Data()
    }

    /// The event loop the end was heard on, if it was heard on one.
    var completionLoop: (any EventLoop)? {
        lock.lock(); defer { lock.unlock() }
        return endedOn
    }

    func completion() async -> AFError? {
        await withCheckedContinuation { continuation in
            lock.lock()
            if let ended {
                lock.unlock()
                continuation.resume(returning: ended.error)
                return
            }
            waiters.append(continuation)
            lock.unlock()
        }
    }

    func transportDidSendRequestHead() {}
    func transportDidReceiveResponse(
        _ head: ResponseHead, expectedBodyLength: Int64, encodedBodyLength: Int64??, protocolName: String,
        setCookieFields: [String]
    ) -> TransportHeadReply {
        .proceed(streamingBody: false)
    }
    func transportDidSendBodyBytes(_ count: Int) {}
    func transportDidSendRequest(hadBody: Bool) {}
    func transportDidReceiveBodyBytes(_ count: Int) {}
    func transportDidReceiveBodyChunk(_ chunk: Data, readiness: TransportReadiness) {}

    func transportDidComplete(body: Data, error: AFError?) {
        let loop = MultiThreadedEventLoopGroup.currentEventLoop
        lock.lock()
        ended = (body, error)
        endedOn = loop
        let waiting = waiters
        waiters = []
        lock.unlock()
        for waiter in waiting { waiter.resume(returning: error) }
    }
}

extension CompletionSink {
    /// Starts one attempt of `url` on `transport`, heard by a new sink.
    static func start(
        _ url: URL, on transport: AsyncHTTPClientTransport, headers: [(name: String, value: String)] = [],
        idleTimeout: TimeInterval? = nil, deadline: Date? = nil
    ) -> (CompletionSink, any TransportTask) {
        let sink = CompletionSink()
        let request = TransportRequest(
            urlRequest: URLRequest(url: url), headers: headers, idleTimeout: idleTimeout, deadline: deadline,
            maximumBodySize: nil, logger: nil)
        return (sink, transport.execute(request, sink: sink))
    }
}
