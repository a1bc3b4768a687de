import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Streams one AsyncHTTPClient response into a `TransportSink`: the head becomes an `HTTPURLResponse`, body parts
/// are appended once into a `Data` or, when the sink streams the body, handed over one by one with reading paused
/// until the sink is ready for more; reading also pauses while the request is suspended.
final class AHCResponseDelegate: HTTPClientResponseDelegate {
    typealias Response = Void

    /// Largest `Content-Length` reserved up front, so a lying server cannot make us allocate gigabytes at once.
    static let maximumReservation = 64 * 1024 * 1024

    private struct State {
        var body = Data()
        var suspended = false
        var pendingRead: EventLoopPromise<Void>?
        /// The upload's next chunk, held while the request is suspended.
        var pendingUpload: EventLoopPromise<Void>?
        var lastActivity = NIODeadline.now()
        var timedOut = false
        var task: HTTPClient.Task<Void>?
        var completed = false
        /// Whether the body streams to the sink rather than into `body`.
        var streams = false
        /// A streamed chunk is with the sink, which has not asked for more yet: the wait is the consumer's, not the
        /// server's, so the idle timer does not count it.
        var awaitingConsumer = false
        /// The body's content codings, undone as it arrives.
        var decoding: ResponseBodyDecoding?
    }

    private let url: URL
    private let sink: any TransportSink
    private let idleTimeout: TimeAmount?
    /// When the whole request (every hop) must have ended: `timeoutIntervalForResource`.
    private let resourceDeadline: NIODeadline?
    /// The engine's idle timer, which watches this attempt once it is attached.
    private let idleWatch: IdleWatch?
    /// Whether the request streams a body whose end the sink wants to hear of.
    private let hasUploadBody: Bool
    /// The largest decoded body gathered in memory; a server that sends more fails the attempt.
    private let maximumBodySize: Int64?
    /// Whether the response can carry a body: not for `HEAD`, whose `Content-Length` describes a body never sent.
    private let expectsBody: Bool
    private let state = Protected(State())
    /// How far the request got on the wire, or that the engine's timer ended the attempt (`Stage`); it only moves
    /// forward. Read by the callbacks that take no lock: an `Atomic` costs them a load where `state` would cost every
    /// request a lock in each.
    private let stage = Atomic<UInt8>(Stage.waiting)
    /// The host's trust evaluation, when a `ServerTrustManager` has one for it: a handshake that refused the chain is
    /// then a trust failure, not a connection failure.
    private let trust: ServerTrustEnforcer?
    /// The proxy the request goes through, to name in its errors.
    private let proxy: HTTPClient.Configuration.Proxy?
    /// Where the engine learns which loop's connection came free when the response ends.
    private let affinity: LoopAffinity?

    init(
        url: URL, sink: any TransportSink, idleTimeout: TimeInterval?, resourceDeadline: NIODeadline?,
        idleWatch: IdleWatch?, hasUploadBody: Bool,
        maximumBodySize: Int64?, method: String, trust: ServerTrustEnforcer? = nil,
        proxy: HTTPClient.Configuration.Proxy? = nil, affinity: LoopAffinity? = nil
    ) {
        self.url = url
        self.affinity = affinity
        self.trust = trust
        self.proxy = proxy
        self.sink = sink
        self.hasUploadBody = hasUploadBody
        self.maximumBodySize = maximumBodySize
        expectsBody = !method.equalsIgnoringCase("HEAD")
        self.idleTimeout = idleTimeout.map(AsyncHTTPClientTransport.timeAmount)
        self.resourceDeadline = resourceDeadline
        self.idleWatch = idleTimeout == nil && resourceDeadline == nil ? nil : idleWatch
    }

    /// The values of `stage`.
    private enum Stage {
        /// The request waits for a connection: AsyncHTTPClient has not written its head.
        static let waiting: UInt8 = 0
        /// The head was written: the request is on a connection.
        static let sent: UInt8 = 1
        /// The engine's timer ended the attempt (`endTimedOut()`); AsyncHTTPClient may not know yet.
        static let ended: UInt8 = 2
    }

    /// The error that ends a response whose body outgrows `limit`.
    private static func bodyTooLarge(limit: Int64) -> AFError {
        .responseLimitExceeded(reason: .maximumResponseSizeExceeded(limit: limit))
    }

    /// Joins the engine's idle timer once the engine has accepted the request.
    func attach(_ task: HTTPClient.Task<Void>) {
        let start = state.write { state -> NIODeadline? in
            state.task = task
            return state.completed ? nil : state.lastActivity
        }
        guard let idleWatch, let start, let first = Self.earliest(idleTimeout.map { start + $0 }, resourceDeadline)
        else { return }
        idleWatch.watch(self, until: first)
        // An attempt that ended between the check above and joining left before it joined: leave again, rather than
        // stay in the table (holding the request) until the timer next fires.
        if state.read({ $0.completed }) { idleWatch.unwatch(self) }
    }

    /// Ends the attempt with the task's own failure if AsyncHTTPClient never tells the delegate: it fails a request
    /// made on a client that is shutting down (its `Session` went away) without calling it.
    func reportFailureOfTaskWithoutDelegate(_ task: HTTPClient.Task<Void>) {
        task.futureResult.whenFailure { [self] error in fail(with: error) }
    }

    /// What the engine's timer makes of an attempt when it fires.
    enum IdleVerdict {
        /// Still running; it could next time out at this moment.
        case watching(until: NIODeadline)
        /// It ended; it needs no more watching.
        case ended
        /// It timed out: the timer ends it on the task's event loop (`endTimedOut()`), then cancels the task.
        case expired(HTTPClient.Task<Void>)
    }

    /// Asked by the engine's timer: whether nothing was sent or received for the idle timeout, or the request's
    /// resource deadline passed (the attempt is then marked timed out), else when either could next be. Neither a
    /// suspended request nor one whose consumer holds a chunk is idle: their wait is not the server's (the resource
    /// deadline still holds).
    func idleVerdict(now: NIODeadline) -> IdleVerdict {
        state.write { state -> IdleVerdict in
            guard !state.completed else { return .ended }
            let idle: NIODeadline? = idleTimeout.map { timeout in
                state.suspended || state.awaitingConsumer ? now + timeout : state.lastActivity + timeout
            }
            guard let deadline = Self.earliest(idle, resourceDeadline) else { return .ended }
            // A watched attempt always has its task (`attach(_:)` records it before joining).
            guard deadline <= now, let task = state.task else { return .watching(until: deadline) }
            state.timedOut = true
            return .expired(task)
        }
    }

    /// Ends the attempt as timed out at once, without waiting for AsyncHTTPClient, which may take long to let go of a
    /// request still waiting for a connection (its pool finds each one it cancels by a linear search of its waiting
    /// list); the timer cancels the task afterwards. Runs on the task's event loop, where every callback of the
    /// attempt runs, so the sink hears nothing of the attempt after its end: a callback that comes before the task is
    /// cancelled is dropped, and one that can refuse (a head, a body part) stops the request there.
    ///
    /// - Returns: Whether the request's head had been written, so the task holds a connection rather than a place in
    ///   the pool's waiting list.
    func endTimedOut() -> Bool {
        let before = stage.exchange(Stage.ended, ordering: .relaxed)
        fail(with: HTTPClientError.readTimeout)
        return before == Stage.sent
    }

    private static func earliest(_ first: NIODeadline?, _ second: NIODeadline?) -> NIODeadline? {
        switch (first, second) {
        case let (first?, second?): min(first, second)
        case let (first?, nil): first
        case let (nil, second?): second
        case (nil, nil): nil
        }
    }

    func suspend() {
        state.write { $0.suspended = true }
    }

    func resume() {
        let (read, upload) = state.write { state -> (EventLoopPromise<Void>?, EventLoopPromise<Void>?) in
            state.suspended = false
            state.lastActivity = .now()
            defer { state.pendingRead = nil; state.pendingUpload = nil }
            return (state.pendingRead, state.pendingUpload)
        }
        read?.succeed(())
        upload?.succeed(())
    }

    /// Succeeds at once unless the request is suspended, then when it is resumed: the upload pauses with the request.
    func whenResumed(on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        let promise = state.write { state -> EventLoopPromise<Void>? in
            guard state.suspended, !state.completed else { return nil }
            let promise = state.pendingUpload ?? eventLoop.makePromise(of: Void.self)
            state.pendingUpload = promise
            return promise
        }
        return promise?.futureResult ?? eventLoop.makeSucceededVoidFuture()
    }

    func didSendRequestHead(task: HTTPClient.Task<Void>, _ head: HTTPRequestHead) {
        // Not when the timer ended the attempt while it waited for a connection and the pool gave it one since.
        guard
            stage.compareExchange(expected: Stage.waiting, desired: Stage.sent, ordering: .relaxed).exchanged
        else { return }
        sink.transportDidSendRequestHead()
    }

    func didSendRequestPart(task: HTTPClient.Task<Void>, _ part: IOData) {
        // An upload in progress is activity: the idle timer watches the connection, not only the response.
        let live = state.write { state -> Bool in
            guard !state.completed else { return false }
            state.lastActivity = .now()
            return true
        }
        guard live else { return }
        sink.transportDidSendBodyBytes(part.readableBytes)
    }

    func didSendRequest(task: HTTPClient.Task<Void>) {
        guard stage.load(ordering: .relaxed) != Stage.ended else { return }
        sink.transportDidSendRequest(hadBody: hasUploadBody)
    }

    func didReceiveHead(task: HTTPClient.Task<Void>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
        // An attempt the timer ended hears no response: failing here stops the request and frees its connection.
        guard stage.load(ordering: .relaxed) != Stage.ended else {
            return task.eventLoop.makeFailedFuture(HTTPClientError.readTimeout)
        }
        let response = ResponseHead(
            url: url,
            statusCode: Int(head.status.code),
            httpVersion: head.version == .http1_1 ? "HTTP/1.1" : "HTTP/\(head.version.major).\(head.version.minor)",
            fields: head.headers.map { (name: $0.name, value: $0.value) }
        )
        // NIO's parser refuses a malformed length on HTTP/1; HTTP/2's is checked here.
        let declared = ResponseHead.declaredLength(head.headers.first(name: "content-length"))
        // A decoded body is longer than the `Content-Length` the server announced, so its length is unknown.
        let expected = head.headers.contains(name: "content-encoding") ? -1 : declared ?? -1
        // `.none`: not decoded, so the bytes received are the bytes delivered.
        let encoded: Int64?? = head.headers.contains(name: "content-encoding") ? .some(declared) : .none
        let protocolName =
            switch (head.version.major, head.version.minor) {
            case (1, 1): "http/1.1"
            case (1, 0): "http/1.0"
            case (2, _): "h2"
            case let (major, minor): "http/\(major).\(minor)"
            }
        var decoding: ResponseBodyDecoding?
        if head.headers.contains(name: "content-encoding") {
            do {
                decoding = try ResponseBodyDecoding.make(
                    contentEncoding: head.headers["content-encoding"].joined(separator: ", "),
                    ratioLimit: AsyncHTTPClientTransport.decompressionRatioLimit)
            } catch {
                return task.eventLoop.makeFailedFuture(error)
            }
        }
        let reply = sink.transportDidReceiveResponse(
            response, expectedBodyLength: expected, encodedBodyLength: encoded,
            protocolName: protocolName, setCookieFields: head.headers["set-cookie"])
        let streams = reply.streamsBody
        // A streamed body goes to disk or to a consumer, so the memory limit does not apply to it.
        let limit = streams ? nil : maximumBodySize
        // A declared length past the limit fails at the head rather than after the limit's worth of bytes;
        // bodiless responses declare lengths they never send.
        let status = head.status.code
        let tooLarge = expectsBody && status != 204 && status != 304 && (declared ?? 0) > (limit ?? .max)
        let reserve =
            streams || tooLarge ? nil : declared.map { Int(min($0, Int64(Self.maximumReservation), limit ?? .max)) }
        state.write { state in
            state.lastActivity = .now()
            state.body = Data()
            state.streams = streams
            state.decoding = decoding
            if let reserve, reserve > 0 { state.body.reserveCapacity(reserve) }
        }
        if tooLarge, let limit {
            return task.eventLoop.makeFailedFuture(Self.bodyTooLarge(limit: limit))
        }
        guard let hold = reply.hold else { return task.eventLoop.makeSucceededVoidFuture() }
        // The sink decides before any of the body is read; its wait is not the server's idleness.
        state.write { $0.awaitingConsumer = true }
        let decided = task.eventLoop.makePromise(of: Void.self)
        hold(TransportReadiness(PromiseReadiness(promise: decided)))
        return decided.futureResult.always { [self] _ in
            state.write { state in
                state.awaitingConsumer = false
                state.lastActivity = .now()
            }
        }
    }

    func didReceiveBodyPart(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
        guard let decoding = state.read({ $0.decoding }) else { return receive(task: task, buffer, decoded: nil) }
        // Decoded here, on the event loop, as NIO's gzip decoder did before: bounded by the ratio limit per byte.
        var decoded = Data()
        do {
            try buffer.withUnsafeReadableBytes { bytes in
                try decoding.decode(bytes) { decoded.append(contentsOf: $0) }
            }
        } catch {
            return task.eventLoop.makeFailedFuture(error)
        }
        // Nothing to hand over yet (the decoder waits for the rest of a unit): read on. Bytes arrived all the same,
        // so the server is not idle: a 128 KiB zstd block on a slow link decodes only once it is whole.
        if decoded.isEmpty {
            state.write { $0.lastActivity = .now() }
            return task.eventLoop.makeSucceededVoidFuture()
        }
        return receive(task: task, buffer, decoded: decoded)
    }

    /// Takes the body's next bytes: `decoded` when the body is decoded here, else `buffer` as it came.
    private func receive(task: HTTPClient.Task<Void>, _ buffer: ByteBuffer, decoded: Data?) -> EventLoopFuture<Void> {
        let count = decoded?.count ?? buffer.readableBytes
        enum Next { case `continue`, wait(EventLoopPromise<Void>), tooLarge(limit: Int64), stream, ended }
        let next = state.write { state -> Next in
            // The attempt was ended by the timer before AsyncHTTPClient cancelled the task.
            if state.completed { return .ended }
            if state.streams {
                state.lastActivity = .now()
                state.awaitingConsumer = true
                return .stream
            }
            if let maximumBodySize, Int64(state.body.count) + Int64(count) > maximumBodySize {
                // Dropped at once, not when the error arrives: the limit bounds memory, not only the result.
                state.body = Data()
                return .tooLarge(limit: maximumBodySize)
            }
            if let decoded {
                state.body.append(decoded)
            } else {
                buffer.withUnsafeReadableBytes { state.body.append(contentsOf: $0) }
            }
            state.lastActivity = .now()
            guard state.suspended else { return .continue }
            let promise = task.eventLoop.makePromise(of: Void.self)
            state.pendingRead = promise
            return .wait(promise)
        }
        switch next {
        case .continue:
            sink.transportDidReceiveBodyBytes(count)
            return task.eventLoop.makeSucceededVoidFuture()
        case let .wait(promise):
            sink.transportDidReceiveBodyBytes(count)
            return promise.futureResult
        case let .tooLarge(limit):
            return task.eventLoop.makeFailedFuture(Self.bodyTooLarge(limit: limit))
        case .ended:
            return task.eventLoop.makeFailedFuture(HTTPClientError.readTimeout)
        case .stream:
            let eventLoop = task.eventLoop
            sink.transportDidReceiveBodyBytes(count)
            let readiness = TransportReadiness()
            sink.transportDidReceiveBodyChunk(decoded ?? Data(buffer.readableBytesView), readiness: readiness)
            // Most consumers take a chunk at once: then no wait is made for it.
            var accepted: EventLoopPromise<Void>?
            let answer = readiness.attach {
                let promise = eventLoop.makePromise(of: Void.self)
                accepted = promise
                return PromiseReadiness(promise: promise)
            }
            switch answer {
            case .some(nil):
                return whenReadingResumed(on: eventLoop)
            case let .some(error?):
                return eventLoop.makeFailedFuture(error)
            case .none:
                guard let accepted else { return eventLoop.makeFailedFuture(AFError.explicitlyCancelled) }
                return accepted.futureResult.flatMap { [self] in whenReadingResumed(on: eventLoop) }
            }
        }
    }

    /// After the consumer took a chunk: reads on at once unless the request is suspended, else when it is resumed.
    private func whenReadingResumed(on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        let promise = state.write { state -> EventLoopPromise<Void>? in
            state.awaitingConsumer = false
            state.lastActivity = .now()
            guard state.suspended, !state.completed else { return nil }
            let promise = eventLoop.makePromise(of: Void.self)
            state.pendingRead = promise
            return promise
        }
        return promise?.futureResult ?? eventLoop.makeSucceededVoidFuture()
    }

    func didFinishRequest(task: HTTPClient.Task<Void>) throws {
        // A coded body that stopped inside its stream is cut short, not complete.
        do {
            try state.read({ $0.decoding })?.finish()
        } catch {
            return fail(with: error)
        }
        let finished = state.write { state -> (Data, EventLoopPromise<Void>?)? in
            guard !state.completed else { return nil }
            state.completed = true
            defer { state.body = Data(); state.pendingUpload = nil }
            return (state.body, state.pendingUpload)
        }
        guard let (body, upload) = finished else { return }
        idleWatch?.unwatch(self)
        // Before the sink hears of the end, which may let the caller make its next request at once.
        affinity?.released(task.eventLoop)
        // The server answered before taking the whole body: the held chunk is never sent.
        upload?.fail(HTTPClientError.requestStreamCancelled)
        sink.transportDidComplete(body: body, error: nil)
    }

    func didReceiveError(task: HTTPClient.Task<Void>, _ error: any Error) {
        fail(with: error)
    }

    /// Ends the attempt with `error`, unless it already ended.
    private func fail(with error: any Error) {
        let failed = state.write { state -> (Bool, EventLoopPromise<Void>?, EventLoopPromise<Void>?)? in
            guard !state.completed else { return nil }
            state.completed = true
            state.body = Data()
            defer { state.pendingRead = nil; state.pendingUpload = nil }
            return (state.timedOut, state.pendingRead, state.pendingUpload)
        }
        guard let (timedOut, pending, upload) = failed else { return }
        idleWatch?.unwatch(self)
        pending?.fail(error)
        upload?.fail(error)
        let mapped =
            timedOut
            ? nil
            : trust?.mappedHandshakeError(error)
                ?? SubjectAlternativeNameRequirement.mapped(error, host: url.host ?? "")
                ?? TransportErrorMapper.proxyRefusal(error, proxy: proxy, target: url)
        sink.transportDidComplete(
            body: Data(),
            error: mapped ?? TransportErrorMapper.afError(from: timedOut ? HTTPClientError.readTimeout : error))
    }
}

/// A readiness answered by completing the event loop promise the engine waits on.
struct PromiseReadiness: ReadinessTarget {
    let promise: EventLoopPromise<Void>

    func settle(_ error: AFError?) {
        if let error { promise.fail(error) } else { promise.succeed(()) }
    }
}
