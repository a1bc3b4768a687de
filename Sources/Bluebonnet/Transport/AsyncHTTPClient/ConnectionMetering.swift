import CoreMetrics
import Foundation
import Logging
import NIOCore
import NIOSSL

/// Watches each connection the engine opens, from the hook AsyncHTTPClient calls once a connection is established
/// (after TCP, and TLS with its ALPN choice): how many are open and how long each lived, by HTTP version, TLS version and
/// peer, as OpenTelemetry's `http.client.open_connections` and `http.client.connection.duration`; and a `.debug` line
/// per connection. Made only when a metrics factory or a debug logger is there: it costs a connection's open and close,
/// never a request's.
///
/// What the hook cannot see, AsyncHTTPClient does not tell: when DNS, connect and the TLS handshake began and ended,
/// the cipher suite, which connection carried a given request, and whether it was reused (see the Observability
/// article).
struct ConnectionMetering: Sendable {
    let factory: (any MetricsFactory)?
    let dimensions: [(String, String)]
    let logger: Logger?

    /// The engine's HTTP version names, as OpenTelemetry's `network.protocol.version` spells them.
    enum HTTPVersion: String {
        case http1 = "1.1"
        case http2 = "2"
    }

    /// Records `channel`, a connection just established for `version`, until it closes. On its event loop.
    func connectionOpened(_ channel: any Channel, version: HTTPVersion) {
        let opened = NIODeadline.now()
        var attributes: [(String, String)] = [
            ("network.protocol.name", "http"), ("network.protocol.version", version.rawValue),
        ]
        if let peer = channel.remoteAddress {
            if let address = peer.ipAddress { attributes.append(("network.peer.address", address)) }
            if let port = peer.port { attributes.append(("network.peer.port", String(port))) }
        }
        if let tls = Self.tlsVersion(of: channel) { attributes.append(("tls.protocol.version", tls)) }
        attributes += dimensions
        let dimensions = attributes
        let open = factory.map { Meter(label: "http.client.open_connections", dimensions: dimensions, factory: $0) }
        open?.increment()
        logger?.debug("connection opened", metadata: Self.metadata(dimensions))
        channel.closeFuture.whenComplete { [factory, logger] _ in
            open?.decrement()
            let lived = NIODeadline.now() - opened
            if let factory {
                CoreMetrics.Timer(
                    label: "http.client.connection.duration", dimensions: dimensions, preferredDisplayUnit: .seconds,
                    factory: factory
                ).recordNanoseconds(lived.nanoseconds)
            }
            logger?.debug(
                "connection closed",
                metadata: Self.metadata(dimensions).merging(["lived-ms": "\(lived.nanoseconds / 1_000_000)"]) { $1 })
        }
    }

    /// The hook for a connection of `version`, running `next` (the engine's own checks) after recording it.
    func initializer(
        _ version: HTTPVersion, then next: @escaping @Sendable (any Channel) -> EventLoopFuture<Void>
    ) -> @Sendable (any Channel) -> EventLoopFuture<Void> {
        { channel in
            if channel.eventLoop.inEventLoop {
                connectionOpened(channel, version: version)
            } else {
                channel.eventLoop.execute { connectionOpened(channel, version: version) }
            }
            return next(channel)
        }
    }

    /// The negotiated TLS version, as OpenTelemetry's `tls.protocol.version` spells it (`1.3`); `nil` for cleartext.
    private static func tlsVersion(of channel: any Channel) -> String? {
        guard let handler = try? channel.pipeline.syncOperations.handler(type: NIOSSLHandler.self) else { return nil }
        switch handler.tlsVersion {
        case .tlsv13?: return "1.3"
        case .tlsv12?: return "1.2"
        case .tlsv11?: return "1.1"
        case .tlsv1?: return "1.0"
        case nil: return nil
        }
    }

    private static func metadata(_ attributes: [(String, String)]) -> Logger.Metadata {
        var metadata = Logger.Metadata()
        for (name, value) in attributes { metadata[name] = "\(value)" }
        return metadata
    }
}
