import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why a WebSocket was closed for breaking the protocol: a frame the client refused, or the server's refusal of the
/// upgrade's terms. Carried by `AFError.sessionTaskFailed(error:)`.
public struct WebSocketProtocolError: Error, Sendable, CustomStringConvertible {
    /// The close code sent for it (RFC 6455 §7.4.1).
    public let closeCode: URLSessionWebSocketTask.CloseCode
    /// What went wrong.
    public let description: String

    init(_ closeCode: URLSessionWebSocketTask.CloseCode, _ description: String) {
        self.closeCode = closeCode
        self.description = description
    }
}
