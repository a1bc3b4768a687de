import Foundation
import Hummingbird
import HummingbirdCore
import HummingbirdHTTP2
import HummingbirdTLS
import Logging
import NIOCore
import NIOSSL
import ServiceLifecycle

/// An in-process httpbin-style server on a real loopback socket, for tests, `bonnet demo` and benchmarks.
public final class TestServer: Sendable {
    /// `http://127.0.0.1:<port>`.
    public let baseURL: URL
    /// The port the server listens on.
    public let port: Int
    /// Every request the server received, with a barrier to wait for one.
    public let arrivals: RequestArrivals
    /// The connections that asked for `/peer` and have since closed, each recorded as the path `/<client port>`, with
    /// a barrier to wait for one (`closedConnections.wait(forPath: "/\(port)")`).
    public let closedConnections: RequestArrivals
    private let task: Task<Void, any Error>
    private let group: ServiceGroup

    private init(
        baseURL: URL, port: Int, arrivals: RequestArrivals, closedConnections: RequestArrivals,
        task: Task<Void, any Error>, group: ServiceGroup
    ) {
        self.baseURL = baseURL
        self.port = port
        self.arrivals = arrivals
        self.closedConnections = closedConnections
        self.task = task
        self.group = group
    }

    /// How long `stop()` lets requests in flight finish before cancelling them.
    static let gracePeriod = Duration.milliseconds(500)

    /// Errors from starting the server.
    public enum StartError: Error {
        /// The server stopped before it was listening; the underlying error says why (port in use, ...).
        case didNotStart((any Error)?)
    }

    /// Starts the server in the background and returns once it is listening.
    ///
    /// - Parameters:
    ///   - host: The address to bind. `127.0.0.1` by default.
    ///   - port: The port; `0` (the default) picks a free one.
    ///   - tls:   A TLS configuration to serve HTTPS with (`TestCertificates.serverConfiguration(...)`); plain HTTP by
    ///            default.
    ///   - http2: With `tls`, whether HTTP/2 is offered through ALPN as well as HTTP/1.1. `false` by default.
    ///   - unixSocketPath: A Unix-domain socket to listen on instead of `host` and `port`; `baseURL` is then
    ///            `http+unix://` with the path percent-encoded as its host. `nil` by default.
    /// - Returns: The running server.
    public static func start(
        host: String = "127.0.0.1", port: Int = 0, tls: TLSConfiguration? = nil,
        http2: Bool = false, unixSocketPath: String? = nil
    ) async throws -> TestServer {
        let (ports, continuation) = AsyncStream<Int>.makeStream()
        let server: HTTPServerBuilder =
            try tls.map { tls in
                http2 ? try .http2Upgrade(tlsConfiguration: tls) : try .tls(.http1(), tlsConfiguration: tls)
            } ?? .http1()
        let arrivals = RequestArrivals()
        let closedConnections = RequestArrivals()
        let address: BindAddress = unixSocketPath.map { .unixDomainSocket(path: $0) } ?? .hostname(host, port: port)
        let app = makeApplication(
            address: address, server: server, arrivals: arrivals, closedConnections: closedConnections
        ) { continuation.yield($0) }
        var configuration = ServiceGroupConfiguration(
            services: [app], logger: Logger(label: "BluebonnetTestServer.group"))
        configuration.maximumGracefulShutdownDuration = gracePeriod
        let group = ServiceGroup(configuration: configuration)
        let task = Task {
            defer { continuation.finish() }
            try await group.run()
        }
        var iterator = ports.makeAsyncIterator()
        guard let bound = await iterator.next() else {
            let failure: (any Error)?
            do { try await task.value; failure = nil } catch { failure = error }
            throw StartError.didNotStart(failure)
        }
        let scheme = tls == nil ? "http" : "https"
        let authority =
            unixSocketPath.map { $0.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? $0 }
            ?? "\(host):\(bound)"
        return TestServer(
            baseURL: URL(string: "\(scheme)\(unixSocketPath == nil ? "" : "+unix")://\(authority)")!, port: bound,
            arrivals: arrivals, closedConnections: closedConnections, task: task, group: group)
    }

    /// Runs the server in the foreground until SIGINT or SIGTERM.
    ///
    /// - Parameters:
    ///   - host:    The address to bind.
    ///   - port:    The port; `0` picks a free one.
    ///   - onStart: Called with the bound port once the server listens.
    public static func run(host: String = "127.0.0.1", port: Int, onStart: @escaping @Sendable (Int) -> Void)
        async throws
    {
        let app = makeApplication(
            address: .hostname(host, port: port), server: .http1(), arrivals: nil, closedConnections: nil,
            onStart: onStart)
        try await app.runService()
    }

    /// What a failure to start listening means, in a person's words (the port taken, not allowed, an address that is
    /// not this machine's); `nil` for any other error. Hummingbird's and NIO's servers fail alike.
    ///
    /// - Parameters:
    ///   - error: What starting the server threw.
    ///   - host:  The address it was to listen on.
    ///   - port:  The port it was to listen on.
    /// - Returns: The sentence, or `nil`.
    public static func listeningFailure(_ error: any Error, host: String, port: Int) -> String? {
        guard let failure = error as? IOError else { return nil }
        switch failure.errnoCode {
        case EADDRINUSE:
            return "port \(port) is already in use (another server listens there; --port 0 picks a free one)"
        case EACCES:
            return "not allowed to listen on port \(port) (ports below 1024 need root)"
        case EADDRNOTAVAIL:
            return "\(host) is not an address of this machine"
        default:
            return nil
        }
    }

    /// The absolute URL of `path` (which may hold a query) on this server.
    ///
    /// - Parameter path: A path such as `/get?a=1`.
    /// - Returns: The URL.
    public func url(_ path: String) -> URL {
        URL(string: baseURL.absoluteString + path)!
    }

    /// Stops the server gracefully and waits until it closed its socket.
    ///
    /// Cancelling the serving task instead can drop a connection NIO accepted but had not handed over yet, which
    /// traps in `NIOAsyncWriter` (swift-nio#2637); a graceful shutdown serves or closes every accepted connection,
    /// and cancels what is still running after `gracePeriod`.
    public func stop() async {
        await group.triggerGracefulShutdown()
        _ = await task.result
    }

    private static func makeApplication(
        address: BindAddress,
        server: HTTPServerBuilder,
        arrivals: RequestArrivals?,
        closedConnections: RequestArrivals?,
        onStart: @escaping @Sendable (Int) -> Void
    ) -> some ApplicationProtocol {
        var logger = Logger(label: "BluebonnetTestServer")
        logger.logLevel = .critical
        let router = HTTPBinRouter()
        return Application(
            responder: CallbackResponder<TestServerContext> { request, context in
                // A server in the foreground (`bonnet serve`) keeps no record: it may run for days.
                arrivals?.record(target: request.uri.description)
                if request.uri.path == "/peer" { return peer(context, closedConnections: closedConnections) }
                return try await router.respond(to: request, context: context)
            },
            server: server,
            configuration: ApplicationConfiguration(
                address: address, serverName: "BluebonnetTestServer"),
            onServerRunning: { channel in
                onStart(channel.localAddress?.port ?? 0)
            },
            logger: logger
        )
    }
}

/// The per-request context: the core storage plus the peer's address for `/ip`, `origin` and `/peer`.
public struct TestServerContext: RequestContext {
    /// Hummingbird's core context.
    public var coreContext: CoreRequestContextStorage
    /// The peer's IP address.
    public let remoteAddress: String?
    /// The peer's port.
    public let remotePort: Int?
    /// Completes when the connection closes.
    let closeFuture: EventLoopFuture<Void>

    /// Creates the context from the channel that received the request.
    ///
    /// - Parameter source: The channel and logger.
    public init(source: ApplicationRequestContextSource) {
        coreContext = .init(source: source)
        remoteAddress = source.channel.remoteAddress?.ipAddress
        remotePort = source.channel.remoteAddress?.port
        closeFuture = source.channel.closeFuture
    }
}

extension TestServer {
    /// `/peer`: the client's address and port, so a test can tell which connection carried a request; the connection's
    /// close is recorded in `closedConnections` once it happens.
    fileprivate static func peer(_ context: TestServerContext, closedConnections: RequestArrivals?) -> Response {
        let port = context.remotePort ?? 0
        if let closedConnections {
            context.closeFuture.whenComplete { _ in closedConnections.record(target: "/\(port)") }
        }
        let object: [String: Any] = ["address": context.remoteAddress ?? "", "port": port]
        return HTTPBinResponses.json(object)
    }
}
