import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A raw-socket server that misbehaves on purpose, byte by byte, beside the httpbin-style `TestServer`: a hostile
/// peer for the client's fault tests. It reads one request head per connection and answers it with the fault its
/// path names (see `FaultScript`), then closes.
public final class FaultServer: Sendable {
    /// `http://127.0.0.1:<port>`.
    public let baseURL: URL
    /// The port the server listens on.
    public let port: Int
    private let channel: any Channel
    private let stats: FaultServerStats

    private init(channel: any Channel, port: Int, stats: FaultServerStats) {
        self.channel = channel
        self.port = port
        self.stats = stats
        baseURL = URL(string: "http://127.0.0.1:\(port)")!
    }

    /// Starts listening on a free loopback port.
    ///
    /// - Returns: The running server.
    public static func start() async throws -> FaultServer {
        let stats = FaultServerStats()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                stats.connectionOpened()
                return channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(FaultConnectionHandler(stats: stats))
                }
            }
            .bind(host: "127.0.0.1", port: 0)
            .get()
        return FaultServer(channel: channel, port: channel.localAddress?.port ?? 0, stats: stats)
    }

    /// The absolute URL of `path` (which may hold a query).
    ///
    /// - Parameter path: A path such as `/endless`.
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
    /// Every request head received, as text, in arrival order.
    public var receivedHeads: [String] { stats.snapshot.heads }
    /// Every request target received, with a barrier to wait for one.
    public var arrivals: RequestArrivals { stats.arrivals }
    /// How many requests `/flaky` has seen for `key`.
    ///
    /// - Parameter key: The `key` query value.
    /// - Returns: The count.
    public func attempts(forKey key: String) -> Int { stats.snapshot.attempts[key] ?? 0 }
    /// Response bytes written to sockets (accepted by the kernel), over every connection.
    public var bytesSent: Int64 { stats.snapshot.bytesSent }
}

/// What the fault server has seen and done, shared by its connections.
final class FaultServerStats: Sendable {
    struct Snapshot {
        var connections = 0
        var heads: [String] = []
        var bytesSent: Int64 = 0
        var attempts: [String: Int] = [:]
    }

    private let state = NIOLockedValueBox(Snapshot())
    let arrivals = RequestArrivals()

    var snapshot: Snapshot { state.withLockedValue { $0 } }
    func connectionOpened() { state.withLockedValue { $0.connections += 1 } }
    func received(head: String) { state.withLockedValue { $0.heads.append(head) } }
    func sent(_ count: Int) { state.withLockedValue { $0.bytesSent += Int64(count) } }
    /// Counts a request for `key`; returns how many there have been, this one included.
    func attempt(key: String) -> Int {
        state.withLockedValue { state in
            state.attempts[key, default: 0] += 1
            return state.attempts[key] ?? 0
        }
    }
}

/// Reads the request head of one connection, then hands the channel to the script its path names.
final class FaultConnectionHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer

    /// A head longer than this is not a request the fault server answers.
    static let maximumHeadSize = 64 * 1024

    private let stats: FaultServerStats
    private var head = ByteBuffer()
    private var answered = false

    init(stats: FaultServerStats) {
        self.stats = stats
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !answered else { return }
        var buffer = unwrapInboundIn(data)
        head.writeBuffer(&buffer)
        let text = String(buffer: head)
        guard let end = text.range(of: "\r\n\r\n") else {
            if head.readableBytes > Self.maximumHeadSize { context.close(promise: nil) }
            return
        }
        answered = true
        let requestHead = String(text[..<end.lowerBound])
        stats.received(head: requestHead)
        let target = requestHead.split(separator: " ", maxSplits: 2).dropFirst().first.map(String.init) ?? "/"
        stats.arrivals.record(target: target)
        FaultScript(target: target).run(on: FaultWriter(channel: context.channel, stats: stats))
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }
}

/// Writes to one connection from its event loop, counting what the kernel took.
struct FaultWriter: Sendable {
    let channel: any Channel
    let stats: FaultServerStats

    var eventLoop: any EventLoop { channel.eventLoop }

    /// Writes and flushes `bytes`; the future completes once they are written.
    @discardableResult
    func write(_ bytes: [UInt8]) -> EventLoopFuture<Void> {
        let count = bytes.count
        return channel.writeAndFlush(ByteBuffer(bytes: bytes)).map { stats.sent(count) }
    }

    /// Writes and flushes `text` as UTF-8.
    @discardableResult
    func write(_ text: String) -> EventLoopFuture<Void> {
        write(Array(text.utf8))
    }

    /// How a connection ends after a write.
    enum Ending {
        /// A clean close (FIN).
        case close
        /// A reset (RST).
        case reset
    }

    /// Writes `bytes`, then ends the connection.
    func write(_ bytes: [UInt8], then ending: Ending) {
        write(bytes).whenComplete { _ in
            switch ending {
            case .close: close()
            case .reset: reset()
            }
        }
    }

    /// Writes `text` as UTF-8, then ends the connection.
    func write(_ text: String, then ending: Ending) {
        write(Array(text.utf8), then: ending)
    }

    /// Closes the connection cleanly (FIN).
    func close() {
        channel.close(promise: nil)
    }

    /// Resets the connection (RST): linger on, zero seconds, then close.
    func reset() {
        guard let provider = channel as? any SocketOptionProvider else { return close() }
        provider.setSoLinger(linger(l_onoff: 1, l_linger: 0)).whenComplete { _ in channel.close(promise: nil) }
    }

    /// Runs `body` after `delay` on the connection's event loop.
    func after(_ delay: TimeAmount, _ body: @escaping @Sendable () -> Void) {
        eventLoop.scheduleTask(in: delay, body)
    }
}
