import Foundation
import NIOCore

/// Opens a `CONNECT` tunnel through an HTTP proxy, then steps aside: the proxy's Basic credentials go to the proxy
/// alone, and its answer (at most 16 KiB of head) is read before anything else is written. A refusal names the
/// proxy and its status.
final class ProxyTunnelHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    /// The proxy would not open the tunnel.
    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    /// The longest answer head a proxy may send.
    static let maximumHeadLength = 16 * 1024

    private let proxy: ProxyConfiguration.Endpoint
    private let authority: String
    private let established: EventLoopPromise<Void>
    private var received: ByteBuffer?
    private var settled = false

    init(proxy: ProxyConfiguration.Endpoint, targetHost: String, targetPort: Int, established: EventLoopPromise<Void>) {
        self.proxy = proxy
        let host = targetHost.contains(":") ? "[\(targetHost)]" : targetHost
        authority = "\(host):\(targetPort)"
        self.established = established
    }

    func handlerAdded(context: ChannelHandlerContext) {
        var head = "CONNECT \(authority) HTTP/1.1\r\nHost: \(authority)\r\n"
        if let username = proxy.username {
            let credentials = Data("\(username):\(proxy.password ?? "")".utf8).base64EncodedString()
            head += "Proxy-Authorization: Basic \(credentials)\r\n"
        }
        head += "\r\n"
        context.writeAndFlush(wrapOutboundOut(context.channel.allocator.buffer(string: head)), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard !settled else { return context.fireChannelRead(data) }
        var chunk = unwrapInboundIn(data)
        if received == nil { received = chunk } else { received?.writeBuffer(&chunk) }
        guard var buffer = received else { return }
        let bytes = buffer.readableBytesView
        guard let end = Self.endOfHead(in: bytes) else {
            if buffer.readableBytes > Self.maximumHeadLength {
                fail(context: context, "The proxy \(endpoint) sent an answer head longer than 16 KiB")
            }
            return
        }
        let headLength = end - bytes.startIndex
        let head = String(decoding: bytes.prefix(headLength), as: UTF8.self)
        let statusLine = head.split(separator: "\r\n", maxSplits: 1).first.map(String.init) ?? ""
        let fields = statusLine.split(separator: " ", maxSplits: 2)
        guard fields.count >= 2, fields[0].hasPrefix("HTTP/1."), let status = Int(fields[1]) else {
            return fail(context: context, "The proxy \(endpoint) answered CONNECT with something other than HTTP")
        }
        guard (200..<300).contains(status) else {
            return fail(
                context: context,
                "The proxy \(endpoint) refused to open a tunnel (CONNECT) to \(authority): it answered \(statusLine)")
        }
        settled = true
        buffer.moveReaderIndex(forwardBy: headLength)
        received = nil
        established.succeed(())
        // Anything after the head is the tunnel's: passed on as the handler leaves.
        if buffer.readableBytes > 0 { context.fireChannelRead(wrapInboundOut(buffer)) }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }

    private var endpoint: String { "\(proxy.host):\(proxy.port)" }

    /// The index just past the blank line that ends the head, if it arrived.
    private static func endOfHead(in bytes: ByteBufferView) -> Int? {
        var index = bytes.startIndex
        while index + 3 < bytes.endIndex {
            if bytes[index] == 13, bytes[index + 1] == 10, bytes[index + 2] == 13, bytes[index + 3] == 10 {
                return index + 4
            }
            index += 1
        }
        return nil
    }

    private func fail(context: ChannelHandlerContext, _ description: String) {
        guard !settled else { return }
        settled = true
        established.fail(Refusal(description: description))
        context.close(promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        guard !settled else { return context.fireErrorCaught(error) }
        settled = true
        established.fail(error)
        context.close(promise: nil)
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(context: context, "The proxy \(endpoint) closed the connection before answering CONNECT")
        context.fireChannelInactive()
    }
}
