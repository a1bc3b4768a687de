import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// A plain `http://` request through an HTTP proxy, sent as every forward proxy expects it (RFC 9112 §3.2.2): to the
/// proxy, with the target in absolute form (`GET http://origin/path HTTP/1.1`), rather than through a `CONNECT`
/// tunnel, which AsyncHTTPClient would open and which many proxies refuse to any port but 443 (squid's default).
///
/// AsyncHTTPClient writes a request's target from its URL's path, so the request goes to it with the proxy's host
/// and port and the target's path, and carries the target's origin in a field of its own (`originField`).
/// The handler installed on each of the forwarding client's connections takes that field out of the head and puts
/// the origin in front of the path. Only the forwarding client's connections carry it, and every request on them
/// sets the field, so a field a user named the same never reaches a server.
enum AbsoluteFormForwarding {
    /// The field that carries the target's `http://host[:port]` from the request to its connection's handler.
    static let originField = "x-bluebonnet-forward-origin"

    /// The URL AsyncHTTPClient is given for `url` forwarded through `proxy`, and the fields the request needs: the
    /// origin for the handler, `Host` when the request sets none (AsyncHTTPClient's would name the proxy), and the
    /// proxy's own Basic credentials, which go to the proxy alone (it takes `Proxy-Authorization` off what it
    /// forwards, RFC 9110 §11.7.2).
    ///
    /// - Throws: `HTTPClientError.invalidURL` for a URL without a host.
    static func prepare(
        _ url: URL, through proxy: ProxyConfiguration.Endpoint, headers: inout NIOHTTP1.HTTPHeaders
    ) throws -> URL {
        guard let host = url.host, !host.isEmpty,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { throw HTTPClientError.invalidURL }
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        let authority = url.port.map { "\(bracketed):\($0)" } ?? bracketed
        if !headers.contains(name: "host") { headers.add(name: "Host", value: authority) }
        headers.replaceOrAdd(name: originField, value: "http://" + authority)
        if let username = proxy.username {
            let credentials = Data("\(username):\(proxy.password ?? "")".utf8).base64EncodedString()
            headers.replaceOrAdd(name: "Proxy-Authorization", value: "Basic " + credentials)
        }
        components.user = nil
        components.password = nil
        components.fragment = nil
        components.host = proxy.host
        components.port = proxy.port
        guard let forwarded = components.url else { throw HTTPClientError.invalidURL }
        return forwarded
    }

    /// Installs the handler on a new connection of the forwarding client, between AsyncHTTPClient's request handler
    /// and its encoder, so it sees each head before it is written.
    static func install(on channel: any Channel) -> EventLoopFuture<Void> {
        // Called once AsyncHTTPClient's handlers are in place, and before the connection carries a request.
        channel.eventLoop.submit {
            let pipeline = channel.pipeline.syncOperations
            let encoder = try pipeline.handler(type: HTTPRequestEncoder.self)
            try pipeline.addHandler(AbsoluteFormTargetHandler(), position: .after(encoder))
        }
    }
}

/// Writes each request head's target in absolute form, from the origin its request carries.
final class AbsoluteFormTargetHandler: ChannelOutboundHandler, RemovableChannelHandler, Sendable {
    typealias OutboundIn = HTTPClientRequestPart
    typealias OutboundOut = HTTPClientRequestPart

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        guard case var .head(head) = unwrapOutboundIn(data),
            let origin = head.headers.first(name: AbsoluteFormForwarding.originField)
        else { return context.write(data, promise: promise) }
        head.headers.remove(name: AbsoluteFormForwarding.originField)
        head.uri = origin + (head.uri.hasPrefix("/") ? head.uri : "/" + head.uri)
        context.write(wrapOutboundOut(.head(head)), promise: promise)
    }
}
