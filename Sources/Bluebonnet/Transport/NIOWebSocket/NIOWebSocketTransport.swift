import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSOCKS
import NIOSSL
import NIOTLS
import NIOWebSocket
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Opens WebSockets on channels of its own (AsyncHTTPClient cannot upgrade a connection), with the session's TLS
/// settings, server trust evaluators and proxies, as every other request of the session has them: a `CONNECT` tunnel
/// or SOCKS5 proxy first, then TLS whose evaluator judges the connection before the upgrade request is written, then
/// the upgrade (NIO's upgrader, which checks `Sec-WebSocket-Accept`), then frames (`WebSocketFrameHandler`).
final class NIOWebSocketTransport: WebSocketTransport {
    private let configuration: TransportConfiguration
    /// The attempts under way, so that a session going away closes its sockets.
    private let attempts = Protected(Attempts())
    /// Bytes the sockets moved to reassemble fragmented messages, added up when each message is whole: read by
    /// tests, which prove reassembly linear in a message's size by it.
    let reassemblyCopies = Protected(0)

    private struct Attempts {
        var open: [ObjectIdentifier: WebSocketAttempt] = [:]
        var shutDown = false
    }

    init(configuration: TransportConfiguration) {
        self.configuration = configuration
        Confinement.installEventLoopProbe { MultiThreadedEventLoopGroup.currentEventLoop != nil }
    }

    func connect(_ request: TransportRequest, options: WebSocketOptions, sink: any WebSocketSink) -> any TransportTask {
        let attempt = WebSocketAttempt(
            request: request, options: options, sink: sink, configuration: configuration,
            reassemblyCopies: reassemblyCopies
        ) { [weak self] attempt in
            self?.attempts.write { _ = $0.open.removeValue(forKey: ObjectIdentifier(attempt)) }
        }
        let accepted = attempts.write { state -> Bool in
            guard !state.shutDown else { return false }
            state.open[ObjectIdentifier(attempt)] = attempt
            return true
        }
        guard accepted else {
            sink.transportDidComplete(body: Data(), error: .sessionDeinitialized)
            return CompletedTransportTask()
        }
        attempt.start()
        return attempt
    }

    func shutdown() {
        let open = attempts.write { state -> [WebSocketAttempt] in
            state.shutDown = true
            defer { state.open = [:] }
            return Array(state.open.values)
        }
        for attempt in open { attempt.fail(.sessionDeinitialized) }
    }
}

/// One WebSocket: the connection, the upgrade, then the open socket until it closes. Its sink is told of each step
/// from the channel's event loop; `WebSocketConnection` calls come from any thread and hop to it.
final class WebSocketAttempt: TransportTask, WebSocketConnection, @unchecked Sendable {
    // @unchecked: every mutable field is behind `state`; the frame handler is reached only on its event loop through
    // `NIOLoopBound`.

    private let request: TransportRequest
    private let options: WebSocketOptions
    private let sink: any WebSocketSink
    private let configuration: TransportConfiguration
    private let onEnd: @Sendable (WebSocketAttempt) -> Void
    private let reassemblyCopies: Protected<Int>?
    private let state = Protected(State())

    private struct State {
        var channel: (any Channel)?
        var frames: NIOLoopBound<WebSocketFrameHandler>?
        var timeout: Scheduled<Void>?
        var ended = false
        var cancelled = false
        var suspended = false
    }

    init(
        request: TransportRequest, options: WebSocketOptions, sink: any WebSocketSink,
        configuration: TransportConfiguration, reassemblyCopies: Protected<Int>? = nil,
        onEnd: @escaping @Sendable (WebSocketAttempt) -> Void
    ) {
        self.request = request
        self.options = options
        self.sink = sink
        self.configuration = configuration
        self.reassemblyCopies = reassemblyCopies
        self.onEnd = onEnd
    }

    // MARK: - Connecting

    private struct Target {
        let url: URL
        let host: String
        let port: Int
        let secure: Bool
    }

    func start() {
        // The TLS context reads the system's trust roots, and the trust manager is the user's code.
        Confinement.assertOffEventLoop("Opening a WebSocket")
        guard let url = request.urlRequest.url, let host = url.host, !host.isEmpty,
            let scheme = url.scheme?.lowercased(), ["ws", "wss", "http", "https"].contains(scheme)
        else {
            return fail(.sessionTaskFailed(error: URLError(.unsupportedURL)))
        }
        let secure = Origin.isSecure(scheme)
        let target = Target(url: url, host: host, port: Origin.effectivePort(url), secure: secure)
        let trust: (NIOSSLContext, ServerTrustEnforcer?)?
        do {
            if secure {
                let (tls, enforcer) = try AsyncHTTPClientTransport.trustSetup(
                    host: host, serverTrustManager: configuration.serverTrustManager, tls: configuration.tls)
                trust = (try NIOSSLContext(configuration: tls), enforcer)
            } else {
                trust = nil
            }
        } catch {
            return fail(
                error.asAFError ?? .serverTrustEvaluationFailed(reason: .trustEvaluationFailed(error: error)))
        }
        let route = configuration.proxies?.route(for: url)
        let (connectHost, connectPort) =
            switch route {
            case let .tunnel(proxy), let .socks(proxy): (proxy.host, proxy.port)
            case nil: (host, target.port)
            }
        let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
        // The whole upgrade (connection, proxy, TLS, the response's head) within the request timeout (the request's
        // own when it is tighter), or by the request's deadline when that comes first. An open socket is not timed:
        // it may be quiet for hours.
        var allowed = request.idleTimeout ?? configuration.requestTimeout
        if let deadline = request.deadline { allowed = min(allowed, deadline.timeIntervalSinceNow) }
        let timeout = eventLoop.scheduleTask(in: AsyncHTTPClientTransport.timeAmount(allowed)) { [self] in
            fail(.sessionTaskFailed(error: URLError(.timedOut)))
        }
        state.write { $0.timeout = timeout }
        ClientBootstrap(group: eventLoop)
            .connectTimeout(AsyncHTTPClientTransport.timeAmount(min(allowed, 60)))
            .channelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
            .connect(host: connectHost, port: connectPort)
            .flatMap { [self] channel -> EventLoopFuture<any Channel> in
                let stillWanted = state.write { state -> Bool in
                    guard !state.ended else { return false }
                    state.channel = channel
                    return true
                }
                guard stillWanted else {
                    channel.close(promise: nil)
                    return channel.eventLoop.makeFailedFuture(AFError.explicitlyCancelled)
                }
                return carry(channel, route: route, target: target).map { channel }
            }
            .flatMap { [self] channel in
                guard let (context, enforcer) = trust else { return channel.eventLoop.makeSucceededFuture(channel) }
                return secureChannel(channel, context: context, enforcer: enforcer, target: target).map { channel }
            }
            .flatMapThrowing { [self] channel in try upgrade(channel, target: target) }
            .whenFailure { [self] error in
                fail(map(error, route: route, enforcer: trust?.1, target: target))
            }
    }

    /// Through the proxy, if one carries the connection.
    private func carry(_ channel: any Channel, route: ProxyConfiguration.Route?, target: Target) -> EventLoopFuture<
        Void
    > {
        guard let route else { return channel.eventLoop.makeSucceededVoidFuture() }
        let established = channel.eventLoop.makePromise(of: Void.self)
        do {
            switch route {
            case let .tunnel(proxy):
                try channel.pipeline.syncOperations.addHandler(
                    ProxyTunnelHandler(
                        proxy: proxy, targetHost: target.host, targetPort: target.port, established: established))
            case .socks:
                let address: SOCKSAddress = .domain(target.host, port: target.port)
                try channel.pipeline.syncOperations.addHandlers(
                    SOCKSClientHandler(targetAddress: address),
                    EventWaiter(promise: established) { event in
                        event is SOCKSProxyEstablishedEvent
                    })
            }
        } catch {
            established.fail(error)
        }
        return established.futureResult
    }

    /// TLS, then the evaluator's (or the host name rule's) judgement of the connection.
    private func secureChannel(
        _ channel: any Channel, context: NIOSSLContext, enforcer: ServerTrustEnforcer?, target: Target
    ) -> EventLoopFuture<Void> {
        let handshake = channel.eventLoop.makePromise(of: Void.self)
        do {
            let serverName = Self.isIPAddress(target.host) ? nil : target.host
            try channel.pipeline.syncOperations.addHandlers(
                try NIOSSLClientHandler(context: context, serverHostname: serverName),
                EventWaiter(promise: handshake) { event in
                    if case .handshakeCompleted = event as? TLSUserEvent { return true }
                    return false
                })
        } catch {
            handshake.fail(error)
        }
        return handshake.futureResult.flatMap {
            enforcer?.verify(channel) ?? SubjectAlternativeNameRequirement.verify(channel)
        }
    }

    static func isIPAddress(_ host: String) -> Bool {
        (try? SocketAddress(ipAddress: host.trimmingCharacters(in: CharacterSet(charactersIn: "[]")), port: 0)) != nil
    }

    /// Writes the upgrade request; the response's head comes to `upgraded` (a `101`) or to `UpgradeResponseHandler`.
    private func upgrade(_ channel: any Channel, target: Target) throws {
        let responses = UpgradeResponseHandler(attempt: self, maximumBodySize: request.maximumBodySize)
        let responsesBox = NIOLoopBound(responses, eventLoop: channel.eventLoop)
        let limit = options.maximumMessageSize
        let upgrader = NIOWebSocketClientUpgrader(
            maxFrameSize: min(max(limit, 125), Int(UInt32.max)), automaticErrorHandling: false
        ) { [self] channel, head in
            // The response handler is for a refusal only: frames go past it from now on.
            channel.pipeline.syncOperations.removeHandler(responsesBox.value, promise: nil)
            return upgraded(channel, head: head, target: target)
        }
        try channel.pipeline.syncOperations.addHTTPClientHandlers(
            leftOverBytesStrategy: .forwardBytes,
            withClientUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
        try channel.pipeline.syncOperations.addHandler(responses)

        var headers = NIOHTTP1.HTTPHeaders()
        var hasHost = false
        for (name, value) in request.headers {
            let lowercased = name.lowercased()
            // The upgrade's own fields are NIO's to write; extensions are not offered (none is supported).
            if Self.upgradeFields.contains(lowercased) { continue }
            if lowercased == "host" { hasHost = true }
            headers.add(name: name, value: value)
        }
        if options.offersCompression { headers.add(name: "Sec-WebSocket-Extensions", value: PerMessageDeflate.offer) }
        if !hasHost {
            let defaultPort = target.secure ? 443 : 80
            let host = target.host.contains(":") ? "[\(target.host)]" : target.host
            headers.add(name: "Host", value: target.port == defaultPort ? host : "\(host):\(target.port)")
        }
        let head = HTTPRequestHead(
            version: .http1_1, method: .GET, uri: Self.requestTarget(of: target.url), headers: headers)
        channel.write(HTTPClientRequestPart.head(head), promise: nil)
        channel.writeAndFlush(HTTPClientRequestPart.end(nil)).whenSuccess { [sink] in
            sink.transportDidSendRequestHead()
            sink.transportDidSendRequest(hadBody: false)
        }
    }

    static let upgradeFields: Set<String> = [
        "connection", "upgrade", "sec-websocket-key", "sec-websocket-version", "sec-websocket-extensions",
        "content-length", "transfer-encoding",
    ]

    /// The path and query, as the request line carries them.
    static func requestTarget(of url: URL) -> String {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        let path = components?.percentEncodedPath ?? ""
        let query = components?.percentEncodedQuery.map { "?\($0)" } ?? ""
        return (path.isEmpty ? "/" : path) + query
    }

    // MARK: - The upgrade's answer

    /// A `101` whose accept key NIO checked: the subprotocol and extensions are checked, the head is shown to the
    /// request (its head steps may hold it), and the socket opens.
    private func upgraded(_ channel: any Channel, head: HTTPResponseHead, target: Target) -> EventLoopFuture<Void> {
        let requested = Set(
            request.headers.filter { $0.name.lowercased() == "sec-websocket-protocol" }
                .flatMap { $0.value.split(separator: ",") }
                .map { $0.trimmingCharacters(in: .whitespaces) })
        let chosen = head.headers["Sec-WebSocket-Protocol"].first?.trimmingCharacters(in: .whitespaces)
        // NIO drops a failure of this future: the attempt is failed here, which closes the connection.
        func refuse(_ code: URLSessionWebSocketTask.CloseCode, _ description: String) -> EventLoopFuture<Void> {
            let error = AFError.sessionTaskFailed(error: WebSocketProtocolError(code, description))
            fail(error)
            return channel.eventLoop.makeFailedFuture(error)
        }
        if let chosen, !requested.contains(chosen) {
            return refuse(.protocolError, "The server chose the subprotocol \(chosen), which was not offered")
        }
        let extensions = head.headers["Sec-WebSocket-Extensions"]
        let deflate: PerMessageDeflate?
        do {
            if options.offersCompression, try PerMessageDeflate.accepts(extensions) {
                deflate = try PerMessageDeflate()
            } else if !extensions.isEmpty {
                return refuse(.mandatoryExtensionMissing, "The server named extensions, and none was offered")
            } else {
                deflate = nil
            }
        } catch {
            return refuse(
                .mandatoryExtensionMissing, (error as? PerMessageDeflate.NegotiationError)?.description ?? "\(error)")
        }
        let frames = WebSocketFrameHandler(
            sink: sink, attempt: self, deflate: deflate, maximumMessageSize: options.maximumMessageSize,
            closeTimeout: AsyncHTTPClientTransport.timeAmount(options.closeTimeout),
            pingTimeout: options.pingTimeout.map(AsyncHTTPClientTransport.timeAmount),
            reassemblyCopies: reassemblyCopies
        ) { [self] error in end(error) }
        do {
            try channel.pipeline.syncOperations.addHandler(frames)
        } catch {
            fail(TransportErrorMapper.afError(from: error))
            return channel.eventLoop.makeFailedFuture(error)
        }
        let bound = NIOLoopBound(frames, eventLoop: channel.eventLoop)
        let (cancelled, suspended) = state.write { state -> (Bool, Bool) in
            state.frames = bound
            state.timeout?.cancel()
            state.timeout = nil
            return (state.cancelled || state.ended, state.suspended)
        }
        if cancelled {
            fail(.explicitlyCancelled)
            return channel.eventLoop.makeFailedFuture(AFError.explicitlyCancelled)
        }
        if suspended { frames.suspend() }
        let reply = sink.transportDidReceiveResponse(
            responseHead(head, url: target.url), expectedBodyLength: 0, encodedBodyLength: .none,
            protocolName: "http/1.1", setCookieFields: head.headers["set-cookie"])
        let open: @Sendable (AFError?) -> Void = { [self] error in
            channel.eventLoop.execute { [self] in
                if let error { return fail(error) }
                bound.value.open(connection: self, protocol: chosen)
            }
        }
        if let hold = reply.hold { hold(TransportReadiness(settle: open)) } else { open(nil) }
        return channel.eventLoop.makeSucceededVoidFuture()
    }

    /// Any other answer: a hop like any other (a redirect, a challenge, an error status), its body gathered.
    /// Whether the attempt is still under way: once it ended (failed, cancelled), its sink hears nothing more.
    var isLive: Bool { !state.read { $0.ended } }

    fileprivate func didReceiveRefusal(_ head: HTTPResponseHead) -> TransportHeadReply? {
        let live = state.write { state -> Bool in
            state.timeout?.cancel()
            state.timeout = nil
            return !state.ended
        }
        guard live else { return nil }
        let declared = head.headers.first(name: "content-length").flatMap(Int64.init) ?? -1
        return sink.transportDidReceiveResponse(
            responseHead(head, url: request.urlRequest.url), expectedBodyLength: declared,
            encodedBodyLength: .none, protocolName: head.version.minor == 0 ? "http/1.0" : "http/1.1",
            setCookieFields: head.headers["set-cookie"])
    }

    fileprivate func didReceiveRefusalBody(_ body: Data, streams: Bool) {
        let ended = state.read { $0.ended }
        guard !ended else { return }
        if !body.isEmpty { sink.transportDidReceiveBodyBytes(body.count) }
        guard streams else { return end(nil, body: body) }
        if !body.isEmpty { sink.transportDidReceiveBodyChunk(body, readiness: TransportReadiness(settle: { _ in })) }
        end(nil)
    }

    private func responseHead(_ head: HTTPResponseHead, url: URL?) -> ResponseHead {
        ResponseHead(
            url: url ?? URL(fileURLWithPath: "/"), statusCode: Int(head.status.code),
            httpVersion: "HTTP/\(head.version.major).\(head.version.minor)",
            fields: head.headers.map { (name: $0.name, value: $0.value) })
    }

    private func map(
        _ error: any Error, route: ProxyConfiguration.Route?, enforcer: ServerTrustEnforcer?, target: Target
    ) -> AFError {
        if let afError = error as? AFError { return afError }
        if let refusal = error as? ProxyTunnelHandler.Refusal {
            return .sessionTaskFailed(
                error: URLError(
                    .cannotConnectToHost,
                    userInfo: [
                        NSLocalizedDescriptionKey: refusal.description, NSURLErrorFailingURLErrorKey: target.url,
                    ]))
        }
        if error is NIOHTTPClientUpgradeError {
            return .sessionTaskFailed(error: URLError(.badServerResponse, userInfo: [NSUnderlyingErrorKey: error]))
        }
        return enforcer?.mappedHandshakeError(error)
            ?? SubjectAlternativeNameRequirement.mapped(error, host: target.host)
            ?? TransportErrorMapper.afError(from: error)
    }

    // MARK: - Ending

    /// Ends the attempt with `error`, closing the connection; the first end wins.
    func fail(_ error: AFError) {
        end(error)
    }

    private func end(_ error: AFError?, body: Data = Data()) {
        let ended = state.write { state -> (any Channel)?? in
            guard !state.ended else { return nil }
            state.ended = true
            state.timeout?.cancel()
            state.timeout = nil
            state.frames = nil
            defer { state.channel = nil }
            return .some(state.channel)
        }
        guard let ended else { return }
        ended?.close(promise: nil)
        onEnd(self)
        sink.transportDidComplete(body: body, error: error)
    }

    // MARK: - TransportTask

    func cancel() {
        let (channel, frames) = state.write { state -> ((any Channel)?, NIOLoopBound<WebSocketFrameHandler>?) in
            state.cancelled = true
            return (state.channel, state.frames)
        }
        guard let channel, let frames else { return fail(.explicitlyCancelled) }
        // An open socket says goodbye (1001) before it goes; the attempt ends with the cancellation at once.
        channel.eventLoop.execute { frames.value.goAway() }
        fail(.explicitlyCancelled)
    }

    func suspend() {
        let frames = state.write { state in
            state.suspended = true
            return state.frames
        }
        frames.map { frames in frames.eventLoop.execute { frames.value.suspend() } }
    }

    func resume() {
        let frames = state.write { state in
            state.suspended = false
            return state.frames
        }
        frames.map { frames in frames.eventLoop.execute { frames.value.resume() } }
    }

    // MARK: - WebSocketConnection

    private func onFrames(
        orElse failure: @escaping @Sendable () -> Void, _ body: @escaping @Sendable (WebSocketFrameHandler) -> Void
    ) {
        guard let frames = state.read({ $0.frames }) else { return failure() }
        frames.eventLoop.execute { body(frames.value) }
    }

    func send(_ message: URLSessionWebSocketTask.Message, completion: @escaping @Sendable ((any Error)?) -> Void) {
        onFrames(orElse: { completion(WebSocketFailure.notConnected) }) { $0.send(message, completion: completion) }
    }

    func sendPing(completion: @escaping @Sendable ((any Error)?) -> Void) {
        onFrames(orElse: { completion(WebSocketFailure.notConnected) }) { $0.sendPing(completion: completion) }
    }

    func close(code: UInt16, reason: Data?) {
        onFrames(orElse: {}) { $0.close(code: code, reason: reason ?? Data()) }
    }
}

/// Waits for one user event (a TLS handshake, a SOCKS tunnel), then steps aside; an error or the channel's end first
/// fails the wait.
final class EventWaiter: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private let promise: EventLoopPromise<Void>
    private let matches: (Any) -> Bool
    private var settled = false

    init(promise: EventLoopPromise<Void>, matches: @escaping (Any) -> Bool) {
        self.promise = promise
        self.matches = matches
    }

    private func settle(_ error: (any Error)?) {
        guard !settled else { return }
        settled = true
        if let error { promise.fail(error) } else { promise.succeed(()) }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard matches(event) else { return context.fireUserInboundEventTriggered(event) }
        settle(nil)
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        settle(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        settle(ChannelError.eof)
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        settle(ChannelError.eof)
    }
}

/// The answer to an upgrade that was not a `101`: its head goes to the request as any hop's does, and its body
/// (within the request's memory limit) once it ended; then the connection closes. Also fails the attempt on a `101`
/// NIO refused (a wrong `Sec-WebSocket-Accept`) and on a connection that ends before the answer.
final class UpgradeResponseHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPClientResponsePart

    /// A refusal's body larger than this is refused in turn, when the request sets no limit of its own.
    static let defaultBodyLimit: Int64 = 1 << 20

    private let attempt: WebSocketAttempt
    private let maximumBodySize: Int64
    private var body = Data()
    private var reply: TransportHeadReply?
    private var decided = true
    private var ended = false

    init(attempt: WebSocketAttempt, maximumBodySize: Int64?) {
        self.attempt = attempt
        self.maximumBodySize = maximumBodySize ?? Self.defaultBodyLimit
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case let .head(head):
            guard reply == nil, let reply = attempt.didReceiveRefusal(head) else { return }
            self.reply = reply
            if let hold = reply.hold {
                decided = false
                let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
                let eventLoop = context.eventLoop
                hold(
                    TransportReadiness { [attempt] error in
                        eventLoop.execute {
                            if let error { return attempt.fail(error) }
                            bound.value.didDecide()
                        }
                    })
            }
        case var .body(buffer):
            guard Int64(body.count) + Int64(buffer.readableBytes) <= maximumBodySize else {
                body = Data()
                attempt.fail(.responseLimitExceeded(reason: .maximumResponseSizeExceeded(limit: maximumBodySize)))
                return
            }
            body.append(contentsOf: buffer.readBytes(length: buffer.readableBytes) ?? [])
        case .end:
            ended = true
            if decided { deliver() }
        }
    }

    private func didDecide() {
        decided = true
        if ended { deliver() }
    }

    private func deliver() {
        attempt.didReceiveRefusalBody(body, streams: reply?.streamsBody ?? false)
        body = Data()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        if error is NIOHTTPClientUpgradeError {
            attempt.fail(
                .sessionTaskFailed(error: URLError(.badServerResponse, userInfo: [NSUnderlyingErrorKey: error])))
        } else {
            attempt.fail(TransportErrorMapper.afError(from: error))
        }
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        attempt.fail(.sessionTaskFailed(error: URLError(.networkConnectionLost)))
        context.fireChannelInactive()
    }
}
