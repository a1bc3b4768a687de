import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a WebSocket attempt is asked for besides the hop: the limits and the subprotocol.
struct WebSocketOptions: Sendable {
    /// The largest message, in bytes, a whole message included when it arrives in fragments.
    var maximumMessageSize: Int
    /// Whether `permessage-deflate` (RFC 7692) is offered.
    var offersCompression = true
    /// How long a close handshake may wait for the server's close frame before the connection is dropped.
    var closeTimeout: TimeInterval = 10
    /// How long a ping may wait for its pong before the socket fails; `nil` to wait as long as the socket is open.
    var pingTimeout: TimeInterval? = nil
}

/// Receives a WebSocket attempt's events. The upgrade is a hop like any other (`TransportSink`): its response head, and
/// for a response that is not `101 Switching Protocols` its body and end. After a `101` the connection is handed over
/// with `webSocketDidOpen`, messages follow, and `transportDidComplete(body:error:)` ends the attempt when the
/// connection closes. Calls are serial and come from an event loop: bookkeeping only.
protocol WebSocketSink: TransportSink {
    /// The upgrade succeeded, and every response head step finished: messages may now be sent and received.
    ///
    /// - Parameters:
    ///   - connection: Where messages, pings and the close go.
    ///   - protocol:   The subprotocol the server chose, if any.
    func webSocketDidOpen(_ connection: any WebSocketConnection, protocol: String?)
    /// A whole message arrived. Until `readiness` is told, nothing more is read.
    func webSocketDidReceive(_ message: URLSessionWebSocketTask.Message, readiness: TransportReadiness)
    /// The server's close frame arrived (before the connection closes).
    ///
    /// - Parameters:
    ///   - code:   Its status code; `1005` (no status) when it carried none.
    ///   - reason: Its reason, empty when it carried none.
    func webSocketDidReceiveClose(code: UInt16, reason: Data)
}

/// An open WebSocket. Every call may come from any thread; completions are called on the engine's thread.
protocol WebSocketConnection: Sendable {
    /// Sends `message`; `completion` gets `nil` once it was written, else the error.
    func send(_ message: URLSessionWebSocketTask.Message, completion: @escaping @Sendable ((any Error)?) -> Void)
    /// Sends a ping; `completion` gets `nil` when its pong arrives, else the error that ended the wait.
    func sendPing(completion: @escaping @Sendable ((any Error)?) -> Void)
    /// Starts the close handshake with `code` and `reason` (at most 123 bytes of it are sent).
    func close(code: UInt16, reason: Data?)
}

/// The engine that opens WebSockets for a session.
protocol WebSocketTransport: Sendable {
    /// Starts one attempt: the upgrade hop, then the connection.
    func connect(_ request: TransportRequest, options: WebSocketOptions, sink: any WebSocketSink) -> any TransportTask
    /// Closes every open connection; attempts fail.
    func shutdown()
}

/// The errors both sides of a WebSocket name.
enum WebSocketFailure {
    /// The upgrade's answer was not `101 Switching Protocols`, as URLSession reports it for a WebSocket task.
    static let badServerResponse = AFError.sessionTaskFailed(error: URLError(.badServerResponse))
    /// What a send, a ping or a close on a socket that is not open fails with: the error URLSession's socket gives.
    static let notConnected = POSIXError(.ENOTCONN)
}
