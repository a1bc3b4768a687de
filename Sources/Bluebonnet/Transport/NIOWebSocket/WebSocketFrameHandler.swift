import Foundation
import NIOCore
import NIOWebSocket
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An open WebSocket's frames (RFC 6455), on its event loop: whole messages reassembled within the size limit and
/// handed to the sink one readiness at a time (no more is read until the sink has room), text checked as UTF-8,
/// pings answered, pongs matched to their pings (and, with a ping timeout, a ping left unanswered failing the socket),
/// the close handshake carried out both ways. Any breach by the server closes the connection with the close code
/// RFC 6455 gives for it.
final class WebSocketFrameHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = WebSocketFrame
    typealias OutboundIn = WebSocketFrame
    typealias OutboundOut = WebSocketFrame

    private let sink: any WebSocketSink
    /// Asked before the sink is told anything: an attempt that ended (cancelled, failed) tells it nothing more.
    private let attempt: WebSocketAttempt
    /// `permessage-deflate`, when the server accepted it.
    private let deflate: PerMessageDeflate?
    private let maximumMessageSize: Int
    private let closeTimeout: TimeAmount
    /// How long a ping may wait for its pong before the socket fails; `nil` to wait for as long as it stays open.
    private let pingTimeout: TimeAmount?
    /// Where the bytes moved to reassemble fragmented messages are added up, for tests (the transport's counter).
    private let reassemblyCopies: Protected<Int>?
    private let ended: (AFError?) -> Void

    private var context: ChannelHandlerContext?
    private var opened = false
    private var suspended = false
    private var unsettledDeliveries = 0
    private var readPending = false
    /// Frames that arrived before the socket opened (while the request's head steps ran), and whether the
    /// connection ended then: both wait for `open`, so handlers hear of nothing before the connection.
    private var early: [WebSocketFrame] = []
    private var endedBeforeOpening = false
    private var fragments: ByteBuffer?
    /// Bytes moved so far to reassemble the message in `fragments`: each fragment's, and the message's whenever its
    /// buffer moved to grow.
    private var fragmentsCopied = 0
    private var fragmentsAreText = false
    private var fragmentsAreCompressed = false
    private var closeSent = false
    private var closeReceived = false
    /// Whether the client began the close: the socket's end is then no failure, answered or not.
    private var closedByClient = false
    private var failure: AFError?
    private var pings: [(payload: UInt64, deadline: NIODeadline?, completion: @Sendable ((any Error)?) -> Void)] = []
    private var nextPing: UInt64 = 0
    private var closeTimer: Scheduled<Void>?
    /// Fires at the deadline of the oldest ping still unanswered.
    private var pingTimer: Scheduled<Void>?

    init(
        sink: any WebSocketSink, attempt: WebSocketAttempt, deflate: PerMessageDeflate?, maximumMessageSize: Int,
        closeTimeout: TimeAmount, pingTimeout: TimeAmount? = nil, reassemblyCopies: Protected<Int>? = nil,
        ended: @escaping (AFError?) -> Void
    ) {
        self.sink = sink
        self.attempt = attempt
        self.deflate = deflate
        self.maximumMessageSize = maximumMessageSize
        self.closeTimeout = closeTimeout
        self.pingTimeout = pingTimeout
        self.reassemblyCopies = reassemblyCopies
        self.ended = ended
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    /// The context holds the handler: letting it go here breaks the cycle, which would otherwise keep every closed
    /// socket's handler (and its compression streams) in memory.
    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
        closeTimer?.cancel()
        closeTimer = nil
        pingTimer?.cancel()
        pingTimer = nil
        early = []
        fragments = nil
    }

    // MARK: - Opening and reading

    /// The request took the upgrade's head: messages flow from now on.
    func open(connection: any WebSocketConnection, protocol: String?) {
        guard !opened, context != nil, attempt.isLive else { return }
        opened = true
        sink.webSocketDidOpen(connection, protocol: `protocol`)
        let waiting = early
        early = []
        for frame in waiting { receive(frame) }
        if endedBeforeOpening { return end() }
        readIfAllowed()
    }

    func suspend() {
        suspended = true
    }

    func resume() {
        suspended = false
        readIfAllowed()
    }

    /// Reads wait for the sink (a delivery not yet settled), for `suspend()`, and for the socket to take what was
    /// written: a server that floods pings and never reads their pongs stops being read, rather than filling memory
    /// with pongs.
    private var mayRead: Bool {
        opened && !suspended && unsettledDeliveries == 0 && (context?.channel.isWritable ?? false)
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        readIfAllowed()
        context.fireChannelWritabilityChanged()
    }

    func read(context: ChannelHandlerContext) {
        if mayRead { context.read() } else { readPending = true }
    }

    private func readIfAllowed() {
        guard mayRead, readPending, let context else { return }
        readPending = false
        context.read()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        if opened { receive(frame) } else { early.append(frame) }
    }

    private func receive(_ frame: WebSocketFrame) {
        guard let context, !closeReceived, failure == nil else { return }
        // RSV1 marks a compressed message, on its first frame only, when permessage-deflate was negotiated.
        let compressed = frame.rsv1 && deflate != nil && (frame.opcode == .text || frame.opcode == .binary)
        if frame.rsv2 || frame.rsv3 || (frame.rsv1 && !compressed) {
            return breach(.protocolError, "The server set reserved bits no extension gave a meaning")
        }
        if frame.maskKey != nil { return breach(.protocolError, "The server masked a frame") }
        switch frame.opcode {
        case .text, .binary:
            guard fragments == nil else {
                return breach(.protocolError, "The server began a message before the last one ended")
            }
            guard frame.length <= maximumMessageSize else { return tooLarge() }
            if frame.fin {
                complete(frame.data, text: frame.opcode == .text, compressed: compressed)
            } else {
                fragments = frame.data
                fragmentsCopied = 0
                fragmentsAreText = frame.opcode == .text
                fragmentsAreCompressed = compressed
            }
        case .continuation:
            guard var buffer = fragments else {
                return breach(.protocolError, "The server continued a message it never began")
            }
            // Taken out, so the buffer has one owner while it grows: a copy left in `fragments` made every append
            // copy the whole message so far (quadratic in the number of fragments).
            fragments = nil
            guard buffer.readableBytes + frame.length <= maximumMessageSize else { return tooLarge() }
            var data = frame.data
            let kept = buffer.readableBytes
            let start = Self.address(of: buffer)
            buffer.writeBuffer(&data)
            // Growing may move the message (by doubling, so that is linear too); a copy always moves it.
            fragmentsCopied += frame.length + (Self.address(of: buffer) == start ? 0 : kept)
            if frame.fin {
                let copied = fragmentsCopied
                reassemblyCopies?.write { $0 += copied }
                complete(buffer, text: fragmentsAreText, compressed: fragmentsAreCompressed)
            } else {
                fragments = buffer
            }
        case .ping:
            guard !closeSent else { return }
            let pong = WebSocketFrame(fin: true, opcode: .pong, maskKey: .random(), data: frame.data)
            context.writeAndFlush(wrapOutboundOut(pong), promise: nil)
        case .pong:
            var data = frame.data
            // A pong answers the ping with its payload and every ping before it; one nobody asked for is ignored.
            guard let payload = data.readInteger(as: UInt64.self),
                let index = pings.firstIndex(where: { $0.payload == payload })
            else { return }
            let answered = pings[...index]
            pings.removeSubrange(...index)
            armPingTimer()
            for ping in answered { ping.completion(nil) }
        case .connectionClose:
            receiveClose(frame.data)
        default:
            breach(.protocolError, "The server sent a frame of unknown opcode \(frame.opcode)")
        }
    }

    /// Where `buffer`'s bytes are, to tell whether a write moved them.
    private static func address(of buffer: ByteBuffer) -> UInt {
        buffer.withUnsafeReadableBytes { UInt(bitPattern: $0.baseAddress) }
    }

    private func complete(_ payload: ByteBuffer, text: Bool, compressed: Bool) {
        var buffer = payload
        if compressed, let deflate {
            do {
                buffer = try deflate.inflate(payload, limit: maximumMessageSize)
            } catch .tooLarge {
                return tooLarge()
            } catch {
                return breach(.protocolError, "The server sent a compressed message that does not inflate")
            }
        }
        let message: URLSessionWebSocketTask.Message
        if text {
            guard let string = String(validating: buffer.readableBytesView, as: UTF8.self) else {
                return breach(.invalidFramePayloadData, "The server sent a text message that is not UTF-8")
            }
            message = .string(string)
        } else {
            message = .data(Data(buffer.readableBytesView))
        }
        deliver(message)
    }

    private func deliver(_ message: URLSessionWebSocketTask.Message) {
        guard let context, attempt.isLive else { return }
        unsettledDeliveries += 1
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        let eventLoop = context.eventLoop
        sink.webSocketDidReceive(
            message,
            readiness: TransportReadiness { error in
                eventLoop.execute { bound.value.deliveryDidSettle(error) }
            })
    }

    private func deliveryDidSettle(_ error: AFError?) {
        unsettledDeliveries -= 1
        if let error {
            guard failure == nil else { return }
            failure = error
            sendClose(code: UInt16(URLSessionWebSocketTask.CloseCode.goingAway.rawValue), reason: Data())
            context?.close(promise: nil)
            return
        }
        readIfAllowed()
    }

    // MARK: - Closing

    private func receiveClose(_ payload: ByteBuffer) {
        var payload = payload
        var code = UInt16(URLSessionWebSocketTask.CloseCode.noStatusReceived.rawValue)
        var reason = Data()
        if payload.readableBytes == 1 {
            return breach(.protocolError, "The server sent a close frame of one byte")
        }
        if let status = payload.readInteger(as: UInt16.self) {
            guard Self.isValidCloseCode(status) else {
                return breach(.protocolError, "The server closed with the reserved code \(status)")
            }
            guard String(validating: payload.readableBytesView, as: UTF8.self) != nil else {
                return breach(.invalidFramePayloadData, "The server's close reason is not UTF-8")
            }
            code = status
            reason = Data(payload.readableBytesView)
        }
        closeReceived = true
        if attempt.isLive { sink.webSocketDidReceiveClose(code: code, reason: reason) }
        // Echoed (without a status when none came), then the connection goes: the server has nothing more to say.
        let echo = code == URLSessionWebSocketTask.CloseCode.noStatusReceived.rawValue ? nil : code
        sendClose(code: echo, reason: Data())
        context?.close(promise: nil)
    }

    /// Codes a close frame may carry (RFC 6455 §7.4, and the IANA registry's 1012–1014).
    static func isValidCloseCode(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: true
        default: false
        }
    }

    /// The client closes: the close frame goes out, and the server's answer is awaited for `closeTimeout`.
    func close(code: UInt16, reason: Data) {
        guard !closeSent, let context else { return }
        closedByClient = true
        // A control frame's payload is at most 125 bytes: the status and 123 of the reason.
        let normal = UInt16(URLSessionWebSocketTask.CloseCode.normalClosure.rawValue)
        sendClose(code: Self.isValidCloseCode(code) ? code : normal, reason: reason.prefix(123))
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        closeTimer = context.eventLoop.scheduleTask(in: closeTimeout) {
            bound.value.context?.close(promise: nil)
        }
    }

    /// Cancelled: says it is going away, and the connection closes.
    func goAway() {
        closedByClient = true
        sendClose(code: UInt16(URLSessionWebSocketTask.CloseCode.goingAway.rawValue), reason: Data())
        context?.close(promise: nil)
    }

    private func sendClose(code: UInt16?, reason: Data) {
        guard !closeSent, let context else { return }
        closeSent = true
        var payload = context.channel.allocator.buffer(capacity: 2 + reason.count)
        if let code {
            payload.writeInteger(code)
            payload.writeBytes(reason)
        }
        let frame = WebSocketFrame(fin: true, opcode: .connectionClose, maskKey: .random(), data: payload)
        context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
    }

    /// The server broke the protocol: the connection closes with `code`, and the attempt fails with the reason.
    private func breach(_ code: URLSessionWebSocketTask.CloseCode, _ description: String) {
        guard failure == nil else { return }
        failure = .sessionTaskFailed(error: WebSocketProtocolError(code, description))
        fragments = nil
        sendClose(code: UInt16(code.rawValue), reason: Data())
        context?.close(promise: nil)
    }

    private func tooLarge() {
        guard failure == nil else { return }
        failure = .responseLimitExceeded(reason: .webSocketMessageTooLarge(limit: maximumMessageSize))
        fragments = nil
        sendClose(code: UInt16(URLSessionWebSocketTask.CloseCode.messageTooBig.rawValue), reason: Data())
        context?.close(promise: nil)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        switch error {
        case NIOWebSocketError.invalidFrameLength:
            tooLarge()
        case NIOWebSocketError.fragmentedControlFrame, NIOWebSocketError.multiByteControlFrameLength:
            breach(.protocolError, "The server sent a control frame that was fragmented or longer than 125 bytes")
        default:
            // After the close handshake, a TLS peer that skips its close_notify is no failure.
            if failure == nil, !closeReceived, !closedByClient { failure = TransportErrorMapper.afError(from: error) }
            context.close(promise: nil)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if opened { end() } else { endedBeforeOpening = true }
        context.fireChannelInactive()
    }

    /// The connection is gone: pending pings fail, and the attempt ends.
    private func end() {
        closeTimer?.cancel()
        closeTimer = nil
        pingTimer?.cancel()
        pingTimer = nil
        let waiting = pings
        pings = []
        for ping in waiting { ping.completion(WebSocketFailure.notConnected) }
        let error: AFError? =
            if let failure { failure } else if closeReceived || closedByClient { nil } else {
                .sessionTaskFailed(error: URLError(.networkConnectionLost))
            }
        ended(error)
    }

    // MARK: - Sending

    func send(_ message: URLSessionWebSocketTask.Message, completion: @escaping @Sendable ((any Error)?) -> Void) {
        guard let context, !closeSent, failure == nil else { return completion(WebSocketFailure.notConnected) }
        var buffer: ByteBuffer
        let opcode: WebSocketOpcode
        switch message {
        case let .string(string):
            buffer = context.channel.allocator.buffer(string: string)
            opcode = .text
        case let .data(data):
            buffer = context.channel.allocator.buffer(capacity: data.count)
            buffer.writeBytes(data)
            opcode = .binary
        @unknown default:
            return completion(WebSocketFailure.notConnected)
        }
        var compressed = false
        if let deflate, let deflated = deflate.deflate(buffer) {
            buffer = deflated
            compressed = true
        }
        let frame = WebSocketFrame(fin: true, rsv1: compressed, opcode: opcode, maskKey: .random(), data: buffer)
        let written = context.eventLoop.makePromise(of: Void.self)
        written.futureResult.whenComplete { result in
            if case let .failure(error) = result { completion(error) } else { completion(nil) }
        }
        context.writeAndFlush(wrapOutboundOut(frame), promise: written)
    }

    func sendPing(completion: @escaping @Sendable ((any Error)?) -> Void) {
        guard let context, !closeSent, failure == nil else { return completion(WebSocketFailure.notConnected) }
        nextPing &+= 1
        let deadline = pingTimeout.map { NIODeadline.now() + $0 }
        pings.append((nextPing, deadline, completion))
        if pings.count == 1 { armPingTimer() }
        var payload = context.channel.allocator.buffer(capacity: 8)
        payload.writeInteger(nextPing)
        let frame = WebSocketFrame(fin: true, opcode: .ping, maskKey: .random(), data: payload)
        context.writeAndFlush(wrapOutboundOut(frame), promise: nil)
    }

    /// Sets the ping timer for the oldest ping still unanswered, or clears it when every ping was answered.
    private func armPingTimer() {
        pingTimer?.cancel()
        pingTimer = nil
        guard let context, let deadline = pings.first?.deadline else { return }
        let bound = NIOLoopBound(self, eventLoop: context.eventLoop)
        pingTimer = context.eventLoop.scheduleTask(deadline: deadline) {
            bound.value.pingWentUnanswered()
        }
    }

    /// A ping's pong did not come in time: the server is gone or stuck (half a frame, then silence). The socket says
    /// it is going away (1001), closes, and fails with `URLError(.timedOut)`, which holds the reason.
    private func pingWentUnanswered() {
        // A timer that fired as the pong came finds its ping answered.
        guard let pingTimeout, let deadline = pings.first?.deadline, deadline <= .now() else { return }
        pingTimer = nil
        guard failure == nil, !closeReceived, !closedByClient else { return }
        let code = URLSessionWebSocketTask.CloseCode.goingAway
        let seconds = String(format: "%g", Double(pingTimeout.nanoseconds) / 1_000_000_000)
        let reason = WebSocketProtocolError(code, "The server answered no ping within \(seconds) seconds")
        failure = .sessionTaskFailed(error: URLError(.timedOut, userInfo: [NSUnderlyingErrorKey: reason]))
        fragments = nil
        sendClose(code: UInt16(code.rawValue), reason: Data())
        context?.close(promise: nil)
    }
}
