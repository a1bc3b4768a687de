import Foundation
import NIOCore
import NIOPosix
import NIOSSL

/// A raw HTTP/2 peer over TLS, offering only `h2` through ALPN, that breaks the protocol on purpose: the hostile
/// server of the client's HTTP/2 fault tests. It writes its frames byte by byte, with no HTTP/2 library, so it can send
/// what a library would refuse to. It reads the client's preface and frames up to the first `HEADERS` (the request),
/// then commits its fault on that stream.
public final class HTTP2FaultServer: Sendable {
    /// What the server does once the request has arrived.
    public enum Fault: Sendable {
        /// A `HEADERS` frame without `END_HEADERS`, then `CONTINUATION` frames of 1 KiB without end: until the client
        /// leaves, or until `limit` bytes have been written, when the server closes the connection.
        case endlessContinuation(limit: Int)
        /// Empty `SETTINGS` frames back to back, with the client's acknowledgements never read (the server stops
        /// reading): until the client leaves, or until `limit` bytes have been written, when the server goes silent and
        /// leaves the connection open.
        case settingsFlood(limit: Int)
    }

    /// `https://127.0.0.1:<port>`.
    public let baseURL: URL
    /// The port the server listens on.
    public let port: Int
    private let channel: any Channel
    private let stats: FaultServerStats
    /// Records `closed` each time a connection closes, with a barrier to wait for it.
    private let closes: RequestArrivals

    private static let closedEvent = "closed"

    private init(channel: any Channel, port: Int, stats: FaultServerStats, closes: RequestArrivals) {
        self.channel = channel
        self.port = port
        self.stats = stats
        self.closes = closes
        baseURL = URL(string: "https://127.0.0.1:\(port)")!
    }

    /// Starts listening on a free loopback port.
    ///
    /// - Parameters:
    ///   - tls:   The server's TLS configuration (`TestCertificates.serverConfiguration(...)`); its application protocols
    ///            are replaced with `h2` alone.
    ///   - fault: What the server does.
    /// - Returns: The running server.
    public static func start(tls: TLSConfiguration, fault: Fault) async throws -> HTTP2FaultServer {
        var tls = tls
        tls.applicationProtocols = ["h2"]
        let context = try NIOSSLContext(configuration: tls)
        let stats = FaultServerStats()
        let closes = RequestArrivals()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                stats.connectionOpened()
                channel.closeFuture.whenComplete { _ in closes.record(target: HTTP2FaultServer.closedEvent) }
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(NIOSSLServerHandler(context: context))
                    try channel.pipeline.syncOperations.addHandler(HTTP2FaultHandler(fault: fault, stats: stats))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return HTTP2FaultServer(
            channel: channel, port: channel.localAddress?.port ?? 0, stats: stats, closes: closes)
    }

    /// The absolute URL of `path`.
    ///
    /// - Parameter path: A path such as `/`.
    /// - Returns: The URL.
    public func url(_ path: String) -> URL {
        URL(string: baseURL.absoluteString + path)!
    }

    /// Closes the listening socket; connections still open are left to their peers.
    public func stop() async {
        try? await channel.close()
    }

    /// How many connections were accepted.
    public var connectionCount: Int { stats.snapshot.connections }
    /// How many requests (`HEADERS` frames opening a stream) arrived over HTTP/2: a client that did not negotiate `h2`
    /// sends none.
    public var requestsReceived: Int { stats.snapshot.heads.count }
    /// Frame bytes written to sockets (accepted by TLS and the kernel), over every connection.
    public var bytesSent: Int64 { stats.snapshot.bytesSent }

    /// Returns once `count` connections have closed, by either side, counting those closed before the call.
    ///
    /// - Parameters:
    ///   - count:   How many. 1 by default.
    ///   - timeout: How long to wait, in seconds: a hang guard. 30 by default.
    /// - Returns: `true` once they closed; `false` when `timeout` passed first.
    public func closedConnections(_ count: Int = 1, timeout: Double = 30) async -> Bool {
        await closes.wait(forPath: Self.closedEvent, count: count, timeout: timeout)
    }
}

/// One connection of the HTTP/2 fault server.
final class HTTP2FaultHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    /// What a client sends first (RFC 9113 §3.4).
    static let clientPreface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
    /// More than this before the first `HEADERS` is not a client the server answers.
    static let maximumPrelude = 64 * 1024

    private let fault: HTTP2FaultServer.Fault
    private let stats: FaultServerStats
    private var received = ByteBuffer()
    private var sawPreface = false
    private var answered = false

    init(fault: HTTP2FaultServer.Fault, stats: FaultServerStats) {
        self.fault = fault
        self.stats = stats
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !answered else { return }
        var bytes = unwrapInboundIn(data)
        received.writeBuffer(&bytes)
        let writer = FaultWriter(channel: context.channel, stats: stats)
        if !sawPreface {
            guard received.readableBytes >= Self.clientPreface.count else { return }
            guard received.readBytes(length: Self.clientPreface.count) == Self.clientPreface else {
                return writer.close()
            }
            sawPreface = true
            // The server's preface: SETTINGS, here with nothing in it.
            writer.write(HTTP2FaultFrames.frame(type: HTTP2FaultFrames.settings, streamID: 0))
        }
        // The client's frames up to its first HEADERS: its SETTINGS, perhaps a WINDOW_UPDATE.
        while let header = received.getBytes(at: received.readerIndex, length: 9) {
            let length = Int(header[0]) << 16 | Int(header[1]) << 8 | Int(header[2])
            guard received.readableBytes >= 9 + length else { break }
            received.moveReaderIndex(forwardBy: 9 + length)
            guard header[3] == HTTP2FaultFrames.headers else { continue }
            let streamID = header[5...8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } & 0x7FFF_FFFF
            answered = true
            received = ByteBuffer()
            stats.received(head: "HEADERS on stream \(streamID)")
            return commit(streamID: streamID, context: context, writer: writer)
        }
        if received.readableBytes > Self.maximumPrelude { writer.close() }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    private func commit(streamID: UInt32, context: ChannelHandlerContext, writer: FaultWriter) {
        switch fault {
        case let .endlessContinuation(limit):
            // `:status: 200` (HPACK's static entry 8), in a header block that never ends.
            writer.write(HTTP2FaultFrames.frame(type: HTTP2FaultFrames.headers, streamID: streamID, payload: [0x88]))
            let continuation = HTTP2FaultFrames.frame(
                type: HTTP2FaultFrames.continuation, streamID: streamID,
                payload: [UInt8](repeating: UInt8(ascii: "a"), count: 1024))
            HTTP2FaultFrames.repeatWrite(continuation, limit: limit, writer: writer) { writer.close() }
        case let .settingsFlood(limit):
            try? context.channel.syncOptions?.setOption(ChannelOptions.autoRead, value: false)
            let settings = HTTP2FaultFrames.frame(type: HTTP2FaultFrames.settings, streamID: 0)
            HTTP2FaultFrames.repeatWrite(settings, limit: limit, writer: writer) {}
        }
    }
}

/// HTTP/2 frames as bytes (RFC 9113 §4.1), for the fault server.
enum HTTP2FaultFrames {
    static let headers: UInt8 = 0x1
    static let settings: UInt8 = 0x4
    static let continuation: UInt8 = 0x9

    /// A frame: the 9-byte header (payload length, type, no flags, stream), then `payload`.
    static func frame(type: UInt8, streamID: UInt32, payload: [UInt8] = []) -> [UInt8] {
        let length = UInt32(payload.count)
        var bytes: [UInt8] = [UInt8(truncatingIfNeeded: length >> 16), UInt8(truncatingIfNeeded: length >> 8)]
        bytes.append(UInt8(truncatingIfNeeded: length))
        bytes += [type, 0]
        for shift: UInt32 in [24, 16, 8, 0] { bytes.append(UInt8(truncatingIfNeeded: streamID >> shift)) }
        return bytes + payload
    }

    /// Writes `frame` again and again, about 64 KiB of them a write and each write once the last was taken, until
    /// `limit` bytes have been written (then calls `then`) or a write fails (the client left).
    static func repeatWrite(
        _ frame: [UInt8], limit: Int, writer: FaultWriter, then: @escaping @Sendable () -> Void
    ) {
        let batch = Array([[UInt8]](repeating: frame, count: max(1, 64 * 1024 / frame.count)).joined())
        @Sendable func next(_ written: Int) {
            guard written < limit else { return then() }
            writer.write(batch).whenSuccess { next(written + batch.count) }
        }
        next(0)
    }
}
