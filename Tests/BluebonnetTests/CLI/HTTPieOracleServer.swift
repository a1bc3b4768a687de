import Foundation
import NIOCore
import NIOPosix
import Synchronization

/// A response the echo server gives, as bytes: a status line, fields in order, and a body.
struct CannedResponse: Sendable {
    var status: Int
    var reason: String
    var headers: [(name: String, value: String)]
    var body: Data

    init(_ status: Int, _ reason: String, headers: [(name: String, value: String)] = [], body: Data = Data()) {
        self.status = status
        self.reason = reason
        self.headers = headers
        self.body = body
    }

    /// `200 OK` with `ok` and a newline as plain text.
    static let ok = CannedResponse(
        200, "OK", headers: [("Content-Type", "text/plain")], body: Data("ok\n".utf8))

    /// `200 OK` with a JSON document.
    static func json(_ text: String) -> CannedResponse {
        CannedResponse(200, "OK", headers: [("Content-Type", "application/json")], body: Data(text.utf8))
    }

    /// A status with a short text body.
    static func status(_ code: Int, _ reason: String) -> CannedResponse {
        CannedResponse(code, reason, headers: [("Content-Type", "text/plain")], body: Data("\(code)\n".utf8))
    }

    /// A redirect to `location`.
    static func redirect(_ code: Int, to location: String) -> CannedResponse {
        CannedResponse(code, "Redirect", headers: [("Location", location)])
    }

    /// A file's bytes with the given fields (`Content-Disposition`, `Content-Type`).
    static func file(_ body: Data, headers: [(name: String, value: String)]) -> CannedResponse {
        CannedResponse(200, "OK", headers: headers, body: body)
    }

    /// `200 OK` setting cookies.
    static func setting(cookies: [String]) -> CannedResponse {
        CannedResponse(
            200, "OK", headers: cookies.map { ("Set-Cookie", $0) } + [("Content-Type", "text/plain")],
            body: Data("ok\n".utf8))
    }

    /// The response with `{p}` in its fields and text body replaced by `port` (a redirect to the server itself).
    func resolved(port: Int) -> CannedResponse {
        var copy = self
        copy.headers = headers.map { ($0.name, OracleCase.resolve($0.value, port: port)) }
        if let text = String(data: body, encoding: .utf8), text.contains("{p}") {
            copy.body = Data(OracleCase.resolve(text, port: port).utf8)
        }
        return copy
    }

    /// The bytes sent for a request with `method`: no body for `HEAD`; the connection closes after each response.
    func bytes(for method: String) -> [UInt8] {
        var head = "HTTP/1.1 \(status) \(reason)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        return Array(head.utf8) + (method == "HEAD" ? [] : [UInt8](body))
    }
}

/// A raw socket server for one case of the corpus: it records the exact bytes of each request (the chunked framing of
/// a body taken off, a TLS handshake noted as such) and answers with its canned responses in order, the last one
/// again for any request after them.
final class RawEchoServer: Sendable {
    let port: Int
    private let channel: any Channel
    private let state: Mutex<(requests: [WireRequest], answered: Int)>
    let responses: [CannedResponse]

    private init(channel: any Channel, responses: [CannedResponse]) {
        self.channel = channel
        self.responses = responses.isEmpty ? [.ok] : responses
        state = Mutex(([], 0))
        port = channel.localAddress?.port ?? 0
    }

    /// Starts listening on a free loopback port.
    static func start(responses: [CannedResponse]) async throws -> RawEchoServer {
        let recorder = Recorder()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    // A hang guard only: a client that stops sending in the middle of a request (httpie 3.2.4 does,
                    // with -x and a small file body) is recorded as such rather than holding the suite up.
                    try channel.pipeline.syncOperations.addHandler(IdleStateHandler(readTimeout: .seconds(30)))
                    try channel.pipeline.syncOperations.addHandler(RawEchoHandler(recorder: recorder))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        let server = RawEchoServer(channel: channel, responses: responses)
        recorder.server.withLock { $0 = server }
        return server
    }

    /// Records a request and returns the response for it.
    fileprivate func record(_ request: WireRequest) -> CannedResponse {
        state.withLock { state in
            state.requests.append(request)
            let response = responses[min(state.answered, responses.count - 1)]
            state.answered += 1
            return response.resolved(port: port)
        }
    }

    /// The requests received since the last call, in arrival order; the responses start again from the first.
    func take() -> [WireRequest] {
        state.withLock { state in
            defer { state = ([], 0) }
            return state.requests
        }
    }

    func stop() async {
        try? await channel.close()
    }

    /// Hands the server to connections accepted before `start` returned it.
    fileprivate final class Recorder: Sendable {
        let server = Mutex<RawEchoServer?>(nil)
    }
}

/// One connection of the echo server: bytes gathered until they hold a whole request, which is recorded and answered;
/// then the connection closes.
private final class RawEchoHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let recorder: RawEchoServer.Recorder
    private var received: [UInt8] = []
    private var answered = false
    private var continued = false

    init(recorder: RawEchoServer.Recorder) {
        self.recorder = recorder
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !answered else { return }
        var buffer = unwrapInboundIn(data)
        received += buffer.readBytes(length: buffer.readableBytes) ?? []
        guard let server = recorder.server.withLock({ $0 }) else { return }
        // A TLS record (handshake, 0x16) where a request line was expected: noted, and the connection closed.
        if received.first == 0x16 {
            answered = true
            _ = server.record(.tlsHandshake)
            context.close(promise: nil)
            return
        }
        switch WireRequest.parse(received) {
        case .incomplete:
            if !continued, let end = WireRequest.find([13, 10, 13, 10], in: received, from: 0),
                String(decoding: received[..<end], as: UTF8.self).lowercased().contains("expect: 100-continue")
            {
                continued = true
                context.writeAndFlush(
                    wrapOutboundOut(ByteBuffer(string: "HTTP/1.1 100 Continue\r\n\r\n")), promise: nil)
            }
        case .malformed:
            answered = true
            _ = server.record(
                WireRequest(line: "<malformed> " + WireRequest.escaped(received), headers: [], body: Data()))
            context.close(promise: nil)
        case let .request(request, _):
            answered = true
            let response = server.record(request)
            let method = String(request.line.prefix { $0 != " " })
            let channel = context.channel
            context.writeAndFlush(wrapOutboundOut(ByteBuffer(bytes: response.bytes(for: method))))
                .whenComplete { _ in channel.close(promise: nil) }
        }
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard event is IdleStateHandler.IdleStateEvent, !answered else { return }
        answered = true
        // A connection opened and never used is no request.
        if !received.isEmpty, let server = recorder.server.withLock({ $0 }) {
            _ = server.record(
                WireRequest(line: "<incomplete> " + WireRequest.escaped(received), headers: [], body: Data()))
        }
        context.close(promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}
