import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import NIOSSL
import NIOWebSocket

/// A WebSocket server on loopback, plain or with TLS, for the client's tests. The path chooses what it does:
///
/// - `/echo`: sends every message back; answers a close with the same code.
/// - `/messages?count=N&size=S&code=C&binary=1`: sends `N` messages (`message 0`… or `S` bytes each), then closes
///   with `C` (1000 by default).
/// - `/close?code=C&reason=R`: closes at once.
/// - `/subprotocol`: chooses the first of the offered protocols it knows (`chat`, `superchat`).
/// - `/wrong-subprotocol`: answers with a protocol nobody offered.
/// - `/extension?name=E`: answers naming the extension `E` (`permessage-deflate` by default), offered or not.
/// - `/deflate?text=T&size=N`: accepts `permessage-deflate` when offered, then sends `T` and `N` zero bytes,
///   compressed when it was accepted (a small `N`-byte bomb), then closes.
/// - `/big?size=N&fragments=K`: sends one binary message of `N` bytes in `K` fragments.
/// - `/flood?count=N&size=S`: sends `N` binary messages of `S` bytes, writing only while the socket takes them
///   (`floodWritten` counts them, `floodIsWaiting` says it waits for the client to read).
/// - `/fault?kind=K`: breaks the protocol: `masked`, `reserved`, `badutf8`, `hugeframe` (a 1 GiB length, then
///   silence), `truncated`, `continuation`, `reservedclose`, `bigcontrol`, `badaccept`, `closeflood` (a thousand
///   close frames and a message), `silent` (half a frame, then nothing: pings are counted and never answered).
/// - `/status?code=C`: refuses the upgrade with `C`.
/// - `/redirect?to=PATH`: refuses it with a 302 to `PATH`.
/// - `/basic-auth/USER/PASSWORD`: upgrades only with those Basic credentials, else 401 with a challenge.
///
/// Every upgrade request's head is kept (`upgradeHeads`), with each ping and close the clients sent.
public final class WebSocketServer: Sendable {
    /// `ws://127.0.0.1:<port>`, or `wss://localhost:<port>` with TLS.
    public let baseURL: URL
    /// The port the server listens on.
    public let port: Int
    private let channel: any Channel
    let stats: WebSocketServerStats

    private init(channel: any Channel, host: String, port: Int, secure: Bool, stats: WebSocketServerStats) {
        self.channel = channel
        self.port = port
        self.stats = stats
        let name = secure ? "localhost" : (host.contains(":") ? "[\(host)]" : host)
        baseURL = URL(string: "\(secure ? "wss" : "ws")://\(name):\(port)")!
    }

    /// Starts listening.
    ///
    /// - Parameters:
    ///   - tls:  The server's TLS configuration; `nil` for plain `ws:`.
    ///   - host: The address to bind. Loopback by default.
    ///   - port: The port; 0 (the default) picks a free one.
    /// - Returns: The running server.
    public static func start(
        tls: TLSConfiguration? = nil, host: String = "127.0.0.1", port: Int = 0
    ) async throws -> WebSocketServer {
        let stats = WebSocketServerStats()
        let context = try tls.map { try NIOSSLContext(configuration: $0) }
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    if let context {
                        try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    }
                    let upgrader = NIOWebSocketServerUpgrader(
                        maxFrameSize: 1 << 24, automaticErrorHandling: false,
                        shouldUpgrade: { channel, head in
                            channel.eventLoop.makeSucceededFuture(
                                WebSocketRoute.upgradeHeaders(for: head, stats: stats))
                        },
                        upgradePipelineHandler: { channel, head in
                            channel.eventLoop.makeCompletedFuture {
                                // Frames go past the HTTP answers from now on.
                                let refusals = try channel.pipeline.syncOperations.handler(type: RefusalHandler.self)
                                channel.pipeline.syncOperations.removeHandler(refusals, promise: nil)
                                try channel.pipeline.syncOperations.addHandler(
                                    WebSocketRoute(head: head, stats: stats))
                            }
                        })
                    let refusals = RefusalHandler()
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline(
                        withServerUpgrade: (upgraders: [upgrader], completionHandler: { _ in }))
                    try channel.pipeline.syncOperations.addHandler(refusals)
                }
            }
            .bind(host: host, port: port)
            .get()
        return WebSocketServer(
            channel: channel, host: host, port: channel.localAddress?.port ?? 0, secure: tls != nil, stats: stats)
    }

    /// The URL of `path` (which may hold a query).
    public func url(_ path: String) -> URL {
        URL(string: baseURL.absoluteString + path)!
    }

    /// Closes the listening socket.
    public func stop() async {
        try? await channel.close()
    }

    /// Every upgrade request's head received, in arrival order, as `name: value` lines after the request line.
    public var upgradeHeads: [String] { stats.snapshot.heads }
    /// How many pings clients sent.
    public var pingsReceived: Int { stats.snapshot.pings }
    /// The close codes clients sent, in order.
    public var closeCodesReceived: [UInt16] { stats.snapshot.closeCodes }
    /// Messages `/flood` has written so far.
    public var floodWritten: Int { stats.snapshot.floodWritten }
    /// Whether `/flood` is waiting for the client to read before it writes more.
    public var floodIsWaiting: Bool { stats.snapshot.floodWaiting }
}

/// What the WebSocket server saw, shared by its connections.
final class WebSocketServerStats: Sendable {
    struct Snapshot {
        var heads: [String] = []
        var pings = 0
        var closeCodes: [UInt16] = []
        var floodWritten = 0
        var floodWaiting = false
    }

    private let state = NIOLockedValueBox(Snapshot())

    var snapshot: Snapshot { state.withLockedValue { $0 } }

    func update(_ body: (inout Snapshot) -> Void) {
        state.withLockedValue(body)
    }
}

/// Answers the requests that were not upgraded.
final class RefusalHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private var head: HTTPRequestHead?

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case let .head(head): self.head = head
        case .body: break
        case .end:
            guard let head else { return }
            let (path, query) = WebSocketRoute.split(head.uri)
            var headers = HTTPHeaders([("Content-Length", "0"), ("Connection", "close")])
            let status: HTTPResponseStatus
            if path == "/redirect" {
                status = .found
                headers.add(name: "Location", value: query["to"] ?? "/echo")
            } else if path.hasPrefix("/basic-auth/") {
                status = .unauthorized
                headers.add(name: "WWW-Authenticate", value: "Basic realm=\"websocket\"")
            } else {
                status = HTTPResponseStatus(statusCode: Int(query["code"] ?? "") ?? 404)
            }
            context.write(
                wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: status, headers: headers))),
                promise: nil)
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in channel.close(promise: nil) }
        }
    }
}

/// One upgraded connection, doing what its path says.
final class WebSocketRoute: ChannelInboundHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let path: String
    private let query: [String: String]
    private let stats: WebSocketServerStats
    private var floodLeft = 0
    private var floodSize = 0
    private var closing = false

    /// Whether the upgrade accepted `permessage-deflate` (on `/deflate`, when the client offered it).
    private let deflateNegotiated: Bool

    init(head: HTTPRequestHead, stats: WebSocketServerStats) {
        (path, query) = Self.split(head.uri)
        self.stats = stats
        deflateNegotiated =
            path == "/deflate" && head.headers["Sec-WebSocket-Extensions"].joined().contains("permessage-deflate")
    }

    static func split(_ uri: String) -> (String, [String: String]) {
        let components = URLComponents(string: uri)
        var query: [String: String] = [:]
        for item in components?.queryItems ?? [] { query[item.name] = item.value ?? "" }
        return (components?.path ?? uri, query)
    }

    /// The headers of the `101`, or `nil` to refuse the upgrade (the refusal handler answers).
    static func upgradeHeaders(for head: HTTPRequestHead, stats: WebSocketServerStats) -> HTTPHeaders? {
        let lines = head.headers.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
        stats.update { $0.heads.append("\(head.method) \(head.uri)\n\(lines)") }
        let (path, query) = split(head.uri)
        switch path {
        case "/status", "/redirect":
            return nil
        case "/subprotocol":
            let offered = head.headers["Sec-WebSocket-Protocol"].flatMap { $0.split(separator: ",") }
                .map { $0.trimmingCharacters(in: .whitespaces) }
            guard let chosen = offered.first(where: { ["chat", "superchat"].contains($0) }) else { return [:] }
            return HTTPHeaders([("Sec-WebSocket-Protocol", chosen)])
        case "/wrong-subprotocol":
            return HTTPHeaders([("Sec-WebSocket-Protocol", "unoffered")])
        case "/extension":
            return HTTPHeaders([("Sec-WebSocket-Extensions", query["name"] ?? "permessage-deflate")])
        case "/deflate":
            let offered = head.headers["Sec-WebSocket-Extensions"].joined(separator: ",")
            guard offered.contains("permessage-deflate") else { return [:] }
            return HTTPHeaders([("Sec-WebSocket-Extensions", "permessage-deflate; server_no_context_takeover")])
        default:
            if path.hasPrefix("/basic-auth/") {
                let parts = path.split(separator: "/")
                guard parts.count == 3 else { return nil }
                let expected = "Basic " + Data("\(parts[1]):\(parts[2])".utf8).base64EncodedString()
                return head.headers["Authorization"].first == expected ? [:] : nil
            }
            if path == "/fault", split(head.uri).1["kind"] == "badaccept" {
                // NIO writes the right key; a second one makes the answer ambiguous, which the client must refuse.
                return HTTPHeaders([("Sec-WebSocket-Accept", "d3Jvbmc=")])
            }
            return [:]
        }
    }

    func handlerAdded(context: ChannelHandlerContext) {
        switch path {
        case "/messages":
            let count = Int(query["count"] ?? "") ?? 1
            let size = Int(query["size"] ?? "")
            for index in 0..<count {
                if let size {
                    send(context, .binary, ByteBuffer(repeating: UInt8(index % 251), count: size))
                } else {
                    send(context, query["binary"] == "1" ? .binary : .text, ByteBuffer(string: "message \(index)"))
                }
            }
            close(context, code: UInt16(query["code"] ?? "") ?? 1000, reason: query["reason"] ?? "")
        case "/close":
            close(context, code: UInt16(query["code"] ?? "") ?? 1000, reason: query["reason"] ?? "")
        case "/big":
            let size = Int(query["size"] ?? "") ?? 0
            let fragments = max(1, Int(query["fragments"] ?? "") ?? 1)
            let part = max(1, (size + fragments - 1) / fragments)
            var sent = 0
            var first = true
            while sent < size || first {
                let length = min(part, size - sent)
                let fin = sent + length >= size
                let frame = WebSocketFrame(
                    fin: fin, opcode: first ? .binary : .continuation,
                    data: ByteBuffer(repeating: UInt8(truncatingIfNeeded: sent), count: length))
                context.write(wrapOutboundOut(frame), promise: nil)
                sent += length
                first = false
            }
            context.flush()
        case "/deflate":
            // Compressed only when the client offered permessage-deflate (and so the upgrade accepted it).
            let compressed = deflateNegotiated
            if let text = query["text"] {
                sendMaybeCompressed(context, .text, Data(text.utf8), compressed: compressed)
            }
            if let size = Int(query["size"] ?? "") {
                sendMaybeCompressed(context, .binary, Data(count: size), compressed: compressed)
            }
            close(context, code: 1000, reason: "")
        case "/flood":
            floodLeft = Int(query["count"] ?? "") ?? 100
            floodSize = Int(query["size"] ?? "") ?? 1024
            flood(context)
        case "/fault":
            fault(context, kind: query["kind"] ?? "")
        default:
            break
        }
    }

    /// `data` as one message; compressed (raw deflate, the final block's tail left in, as RFC 7692 §7.2.3.4
    /// allows) when `compressed`.
    private func sendMaybeCompressed(
        _ context: ChannelHandlerContext, _ opcode: WebSocketOpcode, _ data: Data, compressed: Bool
    ) {
        guard compressed, let deflated = Zlib.compress(data, format: .raw) else {
            return send(context, opcode, ByteBuffer(bytes: data))
        }
        let frame = WebSocketFrame(fin: true, rsv1: true, opcode: opcode, data: ByteBuffer(bytes: deflated))
        context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
    }

    private func send(_ context: ChannelHandlerContext, _ opcode: WebSocketOpcode, _ data: ByteBuffer) {
        context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: opcode, data: data)), promise: nil)
    }

    private func close(_ context: ChannelHandlerContext, code: UInt16, reason: String) {
        guard !closing else { return }
        closing = true
        var payload = ByteBuffer()
        payload.writeInteger(code)
        payload.writeString(reason)
        send(context, .connectionClose, payload)
    }

    private func flood(_ context: ChannelHandlerContext) {
        while floodLeft > 0, context.channel.isWritable {
            floodLeft -= 1
            send(context, .binary, ByteBuffer(repeating: 7, count: floodSize))
            stats.update { $0.floodWritten += 1 }
        }
        let waiting = floodLeft > 0
        stats.update { $0.floodWaiting = waiting }
        if !waiting { close(context, code: 1000, reason: "") }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if floodLeft > 0, context.channel.isWritable { flood(context) }
        context.fireChannelWritabilityChanged()
    }

    /// Bytes written beneath the frame encoder, as they are.
    private func raw(_ context: ChannelHandlerContext, _ bytes: [UInt8]) {
        guard let encoder = try? context.pipeline.syncOperations.context(handlerType: WebSocketFrameEncoder.self)
        else { return }
        encoder.writeAndFlush(NIOAny(ByteBuffer(bytes: bytes)), promise: nil)
    }

    private func fault(_ context: ChannelHandlerContext, kind: String) {
        switch kind {
        case "masked": raw(context, [0x81, 0x82, 1, 2, 3, 4, 0x68 ^ 1, 0x69 ^ 2])
        case "reserved": raw(context, [0xC1, 0x02, 0x68, 0x69])
        case "badutf8": raw(context, [0x81, 0x02, 0xC3, 0x28])
        case "hugeframe": raw(context, [0x82, 0x7F, 0, 0, 0, 0, 0x40, 0, 0, 0, 1, 2, 3])
        case "truncated":
            raw(context, [0x82, 0x64] + [UInt8](repeating: 9, count: 10))
            context.close(promise: nil)
        case "continuation": raw(context, [0x80, 0x02, 0x68, 0x69])
        case "reservedclose": raw(context, [0x88, 0x02, 0x03, 0xED])
        case "bigcontrol": raw(context, [0x89, 0x7E, 0x00, 0x80] + [UInt8](repeating: 1, count: 128))
        case "closeflood":
            // A close, then a thousand more and a message: everything after the first close is ignored.
            raw(context, [UInt8]((0..<1000).flatMap { _ in [0x88, 0x02, 0x03, 0xE8] }) + [0x81, 0x01, 0x78])
        case "silent":
            // A binary frame that announces 16 bytes and brings 3; the pings that follow go unanswered.
            raw(context, [0x82, 0x10, 1, 2, 3])
        default: break
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        switch frame.opcode {
        case .text, .binary, .continuation:
            guard path == "/echo" else { return }
            let out = WebSocketFrame(fin: frame.fin, opcode: frame.opcode, data: frame.unmaskedData)
            context.writeAndFlush(wrapOutboundOut(out), promise: nil)
        case .ping:
            stats.update { $0.pings += 1 }
            guard !(path == "/fault" && query["kind"] == "silent") else { return }
            send(context, .pong, frame.unmaskedData)
        case .connectionClose:
            var payload = frame.unmaskedData
            let code = payload.readInteger(as: UInt16.self)
            stats.update { $0.closeCodes.append(code ?? 1005) }
            if !closing {
                closing = true
                var echo = ByteBuffer()
                if let code { echo.writeInteger(code) }
                let channel = context.channel
                context.writeAndFlush(wrapOutboundOut(WebSocketFrame(fin: true, opcode: .connectionClose, data: echo)))
                    .whenComplete { _ in channel.close(promise: nil) }
            } else {
                context.close(promise: nil)
            }
        default:
            break
        }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
