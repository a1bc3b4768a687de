import Foundation
import NIOCore
import NIOEmbedded
import NIOWebSocket
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Bluebonnet

/// An open WebSocket's frame handling on an `EmbeddedChannel`, fed raw bytes as a server would send them: what the
/// sink is told, what is written back, and whether reads are asked for. For the frame tests and the fuzz target
/// (this file is the fuzz package's too, by a symlink).
final class WebSocketFrameHarness {
    /// What the sink was told.
    final class Sink: WebSocketSink, @unchecked Sendable {
        // @unchecked: the embedded channel runs everything on the calling thread.
        var messages: [URLSessionWebSocketTask.Message] = []
        var closes: [(code: UInt16, reason: Data)] = []
        var ends: [AFError?] = []
        /// Whether deliveries wait for `release()` instead of being ready at once.
        var holds = false
        var held: [TransportReadiness] = []

        func transportDidSendRequestHead() {}
        func transportDidReceiveResponse(
            _ head: ResponseHead, expectedBodyLength: Int64, encodedBodyLength: Int64??, protocolName: String,
            setCookieFields: [String]
        ) -> TransportHeadReply { .proceed(streamingBody: true) }
        func transportDidSendBodyBytes(_ count: Int) {}
        func transportDidSendRequest(hadBody: Bool) {}
        func transportDidReceiveBodyBytes(_ count: Int) {}
        func transportDidReceiveBodyChunk(_ chunk: Data, readiness: TransportReadiness) { readiness.ready() }
        func transportDidComplete(body: Data, error: AFError?) {}
        func webSocketDidOpen(_ connection: any WebSocketConnection, protocol: String?) {}
        func webSocketDidReceive(_ message: URLSessionWebSocketTask.Message, readiness: TransportReadiness) {
            messages.append(message)
            if holds { held.append(readiness) } else { readiness.ready() }
        }
        func webSocketDidReceiveClose(code: UInt16, reason: Data) { closes.append((code, reason)) }
    }

    /// Counts the reads the handlers above it ask the channel for.
    final class ReadCounter: ChannelOutboundHandler {
        typealias OutboundIn = NIOAny
        var reads = 0

        func read(context: ChannelHandlerContext) {
            reads += 1
            context.read()
        }
    }

    let channel = EmbeddedChannel()
    let sink = Sink()
    /// The handler under test.
    let frames: WebSocketFrameHandler
    let reads = ReadCounter()
    let maximumMessageSize: Int

    init(maximumMessageSize: Int = 1 << 20, compression: Bool = false) throws {
        self.maximumMessageSize = maximumMessageSize
        let request = TransportRequest(
            urlRequest: URLRequest(url: URL(string: "ws://127.0.0.1/")!), headers: [], idleTimeout: nil,
            deadline: nil, maximumBodySize: nil, logger: nil)
        let attempt = WebSocketAttempt(
            request: request, options: WebSocketOptions(maximumMessageSize: maximumMessageSize), sink: sink,
            configuration: TransportConfiguration(requestTimeout: 60, maximumConnectionsPerHost: 1)
        ) { _ in }
        let sink = sink
        frames = WebSocketFrameHandler(
            sink: sink, attempt: attempt, deflate: compression ? try PerMessageDeflate() : nil,
            maximumMessageSize: maximumMessageSize, closeTimeout: .seconds(10)
        ) { error in sink.ends.append(error) }
        try channel.pipeline.syncOperations.addHandlers(
            reads, ByteToMessageHandler(WebSocketFrameDecoder(maxFrameSize: max(maximumMessageSize, 125))),
            WebSocketFrameEncoder(), frames)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 1)).wait()
        frames.open(connection: attempt, protocol: nil)
    }

    /// Bytes from the server; an error the pipeline raised is swallowed (the handler closes the channel for it).
    func feed(_ bytes: [UInt8]) {
        guard channel.isActive else { return }
        _ = try? channel.writeInbound(ByteBuffer(bytes: bytes))
        channel.embeddedEventLoop.run()
    }

    /// Closes the channel, which releases its handlers.
    func finish() {
        _ = try? channel.finish(acceptAlreadyClosed: true)
    }

    /// A frame as a server sends it (unmasked).
    static func frame(_ opcode: UInt8, _ payload: [UInt8], fin: Bool = true, rsv1: Bool = false) -> [UInt8] {
        var bytes: [UInt8] = [(fin ? 0x80 : 0) | (rsv1 ? 0x40 : 0) | opcode]
        if payload.count < 126 {
            bytes.append(UInt8(payload.count))
        } else {
            bytes += [126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        }
        return bytes + payload
    }

    /// The frames written back, unmasked: (opcode, payload).
    func written() -> [(opcode: WebSocketOpcode, payload: [UInt8])] {
        var bytes = ByteBuffer()
        while let part = try? channel.readOutbound(as: ByteBuffer.self) {
            var part = part
            bytes.writeBuffer(&part)
        }
        // The client's frames: masked, and short here (control frames and small messages).
        var frames: [(WebSocketOpcode, [UInt8])] = []
        let data = Array(bytes.readableBytesView)
        var index = 0
        while index + 2 <= data.count {
            let opcode = WebSocketOpcode(encodedWebSocketOpcode: data[index] & 0x0F) ?? .continuation
            let masked = data[index + 1] & 0x80 != 0
            var length = Int(data[index + 1] & 0x7F)
            index += 2
            if length == 126, index + 2 <= data.count {
                length = Int(data[index]) << 8 | Int(data[index + 1])
                index += 2
            }
            let key = masked && index + 4 <= data.count ? Array(data[index..<index + 4]) : [0, 0, 0, 0]
            if masked { index += 4 }
            guard index + length <= data.count else { break }
            let payload = (0..<length).map { data[index + $0] ^ key[$0 % 4] }
            frames.append((opcode, payload))
            index += length
        }
        return frames
    }
}
