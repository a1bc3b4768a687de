import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Plays a stored response into a sink as the engine would play a network one: the head, then the body whole or
/// in chunks that wait for the consumer, then completion. Every call to the sink is made on one serial queue, never
/// on an event loop, so the sink sees its calls in order and user code may run.
final class CachedResponseReplay: TransportTask {
    private struct State {
        var completed = false
        var suspended = false
        /// The next chunk's offset, while the replay waits for `resume()`.
        var parkedOffset: Int?
    }

    /// Chunks of a streamed body, as large as the engine's typical reads.
    static let chunkSize = 64 * 1024

    private let entry: CacheEntry
    private let body: Data
    private let age: Int?
    private let fromCache: Bool
    private let sink: any TransportSink
    private let queue = DispatchQueue(label: "org.bluebonnet.cache.replay", target: .global(qos: .userInitiated))
    private let state = Protected(State())

    /// Makes a replay; `start()` plays it.
    ///
    /// - Parameters:
    ///   - entry:     The stored head.
    ///   - body:      The stored body.
    ///   - age:       The `Age` the response is given; `nil` keeps the stored headers as they are.
    ///   - fromCache: Whether the metrics say `.localCache` (not after a revalidation, which went to the network).
    ///   - sink:      The request.
    init(entry: CacheEntry, body: Data, age: Int?, fromCache: Bool, sink: any TransportSink) {
        self.entry = entry
        self.body = body
        self.age = age
        self.fromCache = fromCache
        self.sink = sink
    }

    func start() {
        queue.async { [self] in
            guard !isCompleted else { return }
            if fromCache { sink.transportWillServeFromCache() }
            let reply = sink.transportDidReceiveResponse(
                entry.head(age: age), expectedBodyLength: Int64(body.count), encodedBodyLength: .none,
                protocolName: entry.protocolName, setCookieFields: [])
            guard let hold = reply.hold else {
                sendBody(streaming: reply.streamsBody)
                return
            }
            hold(
                TransportReadiness { [self] error in
                    queue.async { [self] in
                        if let error { complete(error: error) } else { sendBody(streaming: reply.streamsBody) }
                    }
                })
        }
    }

    private var isCompleted: Bool { state.read { $0.completed } }

    private func sendBody(streaming: Bool) {
        guard !isCompleted else { return }
        guard streaming else {
            if !body.isEmpty { sink.transportDidReceiveBodyBytes(body.count) }
            complete(body: body, error: nil)
            return
        }
        sendChunk(from: 0)
    }

    /// One chunk, then the next once the consumer is ready (and the replay is not suspended).
    private func sendChunk(from offset: Int) {
        let parked = state.write { state -> Bool in
            guard !state.completed else { return true }
            if state.suspended { state.parkedOffset = offset }
            return state.suspended
        }
        guard !parked else { return }
        guard offset < body.count else {
            complete(body: Data(), error: nil)
            return
        }
        let end = min(body.count, offset + Self.chunkSize)
        let chunk = body.subdata(in: body.startIndex + offset..<body.startIndex + end)
        sink.transportDidReceiveBodyBytes(chunk.count)
        sink.transportDidReceiveBodyChunk(
            chunk,
            readiness: TransportReadiness { [self] error in
                queue.async { [self] in
                    if let error { complete(error: error) } else { sendChunk(from: end) }
                }
            })
    }

    private func complete(body: Data = Data(), error: AFError?) {
        let first = state.write { state -> Bool in
            defer { state.completed = true }
            return !state.completed
        }
        guard first else { return }
        sink.transportDidComplete(body: body, error: error)
    }

    func cancel() {
        queue.async { [self] in complete(error: .sessionTaskFailed(error: URLError(.cancelled))) }
    }

    func suspend() {
        state.write { $0.suspended = true }
    }

    func resume() {
        let parked = state.write { state -> Int? in
            state.suspended = false
            defer { state.parkedOffset = nil }
            return state.parkedOffset
        }
        if let parked { queue.async { [self] in sendChunk(from: parked) } }
    }
}
