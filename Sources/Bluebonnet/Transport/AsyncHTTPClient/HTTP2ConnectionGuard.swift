import AsyncHTTPClient
import NIOCore
import NIOSSL

/// Closes an HTTP/2 connection as soon as swift-nio-http2 has found a connection error on it.
///
/// On a connection error (a header block of too many `CONTINUATION` frames or too large, a frame it cannot parse,
/// its control-frame buffer full of acknowledgements a peer never reads, ...) `NIOHTTP2Handler` writes a `GOAWAY` and
/// fires the error down the pipeline, but closes nothing, and neither does AsyncHTTPClient. Its frame decoder, stuck on
/// the frame it refused, keeps every byte read after it (hundreds of MiB a second from a fast peer), and the
/// connection's requests wait for their idle timeout. RFC 9113 §5.4.1: after a `GOAWAY` for an error, close the
/// connection.
///
/// The guard sits between TLS and `NIOHTTP2Handler` and follows the frames the connection writes. When one is a
/// `GOAWAY` with an error code, it passes nothing more up from the socket, and on the next turn of the event loop
/// closes the socket beneath TLS: closing through TLS would wait up to `TLSConfiguration.shutdownTimeout` (5 s) for
/// the peer's `close_notify`, decoding and passing on what it reads meanwhile. The close fails the connection's
/// streams, and their requests, with `HTTPClientError.remoteConnectionClosed`.
final class HTTP2ConnectionGuard: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = IOData
    typealias OutboundOut = IOData

    private var frames = HTTP2OutboundFrames()
    /// Set once a `GOAWAY` for an error went out: what arrives after it is dropped.
    private var isClosing = false

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !isClosing else { return }
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        var sawConnectionError = false
        if !isClosing {
            switch unwrapOutboundIn(data) {
            case let .byteBuffer(buffer): sawConnectionError = frames.scan(buffer.readableBytesView)
            case let .fileRegion(region): frames.skip(region.readableBytes)
            }
        }
        context.write(data, promise: promise)
        guard sawConnectionError else { return }
        isClosing = true
        // Not from inside this write: `NIOHTTP2Handler` is in the middle of reporting the error (it flushes the
        // `GOAWAY` and fires the error after this returns).
        context.eventLoop.assumeIsolated().execute {
            // `close` on a handler's context goes to the handler before it: on the TLS handler's, to the socket.
            let beneathTLS = try? context.pipeline.syncOperations.context(handlerType: NIOSSLHandler.self)
            (beneathTLS ?? context).close(mode: .all, promise: nil)
        }
    }
}

extension HTTP2ConnectionGuard {
    /// What AsyncHTTPClient runs on each new HTTP/2 connection: a guard above its TLS handler at once, then `check`
    /// (the connection's trust check). A connection closed while it was checked, by the guard or by the server, fails
    /// to be made: handed to the pool closed, it would keep the requests given to it waiting, and fail them as
    /// cancelled.
    ///
    /// - Parameter check: The check that decides whether the connection is used.
    /// - Returns: The connection initializer.
    static func initializer(
        then check: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> @Sendable (any Channel) -> EventLoopFuture<Void> {
        { channel in
            // AsyncHTTPClient calls this on the connection's event loop while the server's first SETTINGS is being
            // read: the guard is in place before the frames after it are decoded.
            if channel.eventLoop.inEventLoop {
                install(on: channel)
            } else {
                channel.eventLoop.execute { install(on: channel) }
            }
            return check(channel).flatMapThrowing { _ in
                guard channel.isActive else { throw HTTPClientError.remoteConnectionClosed }
            }
        }
    }

    /// Adds a guard right after the TLS handler of `channel`; a connection without one (not a connection AsyncHTTPClient
    /// speaks HTTP/2 on) is left alone.
    private static func install(on channel: any Channel) {
        let pipeline = channel.pipeline.syncOperations
        guard channel.isActive, let tls = try? pipeline.handler(type: NIOSSLHandler.self) else { return }
        try? pipeline.addHandler(HTTP2ConnectionGuard(), position: .after(tls))
    }
}

/// Follows the HTTP/2 frames (RFC 9113 §4.1) in the bytes a connection writes, to see a `GOAWAY` that reports an
/// error (§6.8). A frame is a 9-byte header (a 24-bit payload length, the type, the flags, the stream), then the
/// payload; a `GOAWAY`'s payload opens with the last stream's ID and the error code, 4 bytes each. swift-nio-http2
/// writes each frame whole in one buffer, but a `DATA` frame's payload in a write of its own after its header; nothing
/// here relies on either.
struct HTTP2OutboundFrames {
    static let headerSize = 9
    static let goAwayType: UInt8 = 0x7
    /// The error code of a graceful `GOAWAY`.
    static let noError: UInt32 = 0

    private var headerBytesSeen = 0
    private var payloadLength = 0
    private var type: UInt8 = 0
    private var streamID: UInt32 = 0
    private var payloadBytesSeen = 0
    private var errorCode: UInt32 = 0
    /// Set when bytes that held a frame header went by unread (a file region): no frame is recognised after.
    private(set) var isLost = false

    /// Follows `bytes`, the next ones the connection writes.
    ///
    /// - Parameter bytes: The bytes.
    /// - Returns: Whether they complete the error code of a `GOAWAY` on the connection (stream 0) that is not
    ///   `NO_ERROR`.
    mutating func scan(_ bytes: ByteBufferView) -> Bool {
        guard !isLost else { return false }
        var found = false
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if headerBytesSeen < Self.headerSize {
                takeHeader(bytes[index])
                index += 1
            } else if type == Self.goAwayType, payloadBytesSeen < 8 {
                if payloadBytesSeen >= 4 { errorCode = errorCode << 8 | UInt32(bytes[index]) }
                index += 1
                payloadBytesSeen += 1
                if payloadBytesSeen == 8, streamID == 0, errorCode != Self.noError { found = true }
            } else {
                // A payload is skipped whole, however large.
                let step = min(payloadLength - payloadBytesSeen, bytes.endIndex - index)
                index += step
                payloadBytesSeen += step
            }
            if headerBytesSeen == Self.headerSize, payloadBytesSeen == payloadLength { startFrame() }
        }
        return found
    }

    /// Follows `count` bytes written that cannot be read.
    ///
    /// - Parameter count: How many.
    mutating func skip(_ count: Int) {
        guard !isLost else { return }
        let inPayload =
            headerBytesSeen == Self.headerSize && (type != Self.goAwayType || payloadBytesSeen >= 8)
            && count <= payloadLength - payloadBytesSeen
        guard inPayload else {
            isLost = true
            return
        }
        payloadBytesSeen += count
        if payloadBytesSeen == payloadLength { startFrame() }
    }

    private mutating func takeHeader(_ byte: UInt8) {
        switch headerBytesSeen {
        case 0..<3: payloadLength = payloadLength << 8 | Int(byte)
        case 3: type = byte
        case 4: break  // the flags
        default: streamID = (streamID << 8 | UInt32(byte)) & 0x7FFF_FFFF
        }
        headerBytesSeen += 1
    }

    private mutating func startFrame() {
        headerBytesSeen = 0
        payloadLength = 0
        type = 0
        streamID = 0
        payloadBytesSeen = 0
        errorCode = 0
    }
}
