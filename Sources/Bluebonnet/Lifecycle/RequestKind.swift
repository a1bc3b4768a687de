import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What kind of request a `Request` is: a value fixed when the request is made, of five parts. The lifecycle reads
/// these parts where it once called a subclass's override, and the machine keeps the state of the body and of the
/// consumer (`RequestStateMachine.BodyState`, `Hop.delivery`).
///
/// A new kind of request is a new value of these parts: a thin subclass (or none) passes its `RequestKind` to
/// `Request`'s initializer and, for the parts that name the request itself in a role, conforms to that role's
/// protocol (`ResponseBodyConsumer` for `.streamed`, `RequestBodyMaking` for `.madeByRequest`, `WebSocketSink` for
/// `.webSocket`). `Request.swift` has no hook to override.
struct RequestKind: Sendable {
    /// What the request sends beside its `URLRequest`'s own `httpBody`.
    enum Body: Sendable {
        /// Nothing: the `URLRequest`'s `httpBody`, if any, is the body (data requests, downloads, sockets).
        case inURLRequest
        /// A body known when the request is made (a stream request's upload).
        case supplied(BodySupply)
        /// A body the request makes once, after its first `URLRequest` (an upload's data, file, stream or form): the
        /// request conforms to `RequestBodyMaking`.
        case madeByRequest
    }

    /// What takes the body of the request's final response.
    enum Consumer: Sendable {
        /// Gathered in memory and kept as `DataRequest.data`.
        case memory
        /// Handed to the request as it arrives (a download's file, a stream's handlers, a socket's refused upgrade):
        /// the request conforms to `ResponseBodyConsumer`.
        case streamed
    }

    /// What carries the request's hops.
    enum Route: Sendable {
        /// The session's HTTP engine. A `file:` URL is read from the disk when `loadsLocalFiles`, as URLSession loads
        /// it for Alamofire's data and download requests; other kinds fail it with `unsupportedURL`.
        case http(loadsLocalFiles: Bool)
        /// The session's WebSocket engine, whose URL may also be `ws:` or `wss:`: the request conforms to
        /// `WebSocketSink`. `subprotocol` is offered in `Sec-WebSocket-Protocol`.
        case webSocket(subprotocol: String?, options: WebSocketOptions)
    }

    /// Whose credentials (the session's `Authorization`, `Proxy-Authorization` and `Cookie` headers, the request's
    /// `authenticate` credential, a URL's user and password) the request carries.
    enum Credentials: Sendable {
        /// Its first request's origin's, while its hops stay there.
        case firstRequestOrigin
        /// An origin recorded elsewhere, read when a hop needs it (a resumed download's, which its resume data names:
        /// its first URL may be a CDN's a redirect led to).
        case recorded(@Sendable () -> Request.CredentialOwner)
    }

    /// What the request releases once it has ended, however it ended; it runs before the validators.
    struct Cleanup: Sendable {
        /// Whether it does file I/O now, so it must not run on the thread that completed the request (an event loop).
        let blocks: @Sendable () -> Bool
        /// Releases it.
        let run: @Sendable () -> Void
    }

    var body: Body = .inURLRequest
    var consumer: Consumer = .memory
    var route: Route = .http(loadsLocalFiles: false)
    var credentials: Credentials = .firstRequestOrigin
    var cleanup: Cleanup?

    /// Whether the route reads `file:` URLs from the disk.
    var loadsLocalFiles: Bool {
        if case .http(loadsLocalFiles: true) = route { return true }
        return false
    }

    /// Whether the route is a WebSocket's, whose URL may be `ws:` or `wss:`.
    var carriesWebSocket: Bool {
        if case .webSocket = route { return true }
        return false
    }
}

/// Where the bytes of a body the request streams come from, sent after the head.
enum BodySupply: Sendable {
    /// One body, sent as it is each time it is sent (an upload's data, file or stream).
    case fixed(UploadBody)
    /// A fresh stream for each send, of `length` bytes (`nil`: chunked); it may be sent again only when `isReplayable`.
    case fresh(length: Int64?, isReplayable: Bool, makeStream: @Sendable () -> InputStream)

    /// Whether the body can be sent again (a redirect that keeps it, a challenge's answer, a retry).
    var isReplayable: Bool {
        switch self {
        case let .fixed(body): body.isReplayable
        case let .fresh(_, isReplayable, _): isReplayable
        }
    }

    /// The body one send streams.
    func bodyForSend() -> UploadBody {
        switch self {
        case let .fixed(body): body
        case let .fresh(length, _, makeStream): UploadBody(source: .stream(makeStream()), length: length)
        }
    }
}

/// A request that makes its body once, after its first `URLRequest` (`RequestKind.Body.madeByRequest`).
protocol RequestBodyMaking: Request {
    /// Makes the body, on `requestQueue` (a form may take a while to encode). `.unreadable` is a body URLSession would
    /// make a task of that fails once it runs (a file it cannot read); a failure fails the request before it is sent.
    func makeBody() -> Result<MadeBody, AFError>

    /// The body was made and the machine holds it; `requestAlreadyEnded` when the request ended meanwhile (its
    /// cleanup ran before the body existed). Called after the monitors heard of the `URLRequest`.
    func didMakeBody(requestAlreadyEnded: Bool)
}

/// What `RequestBodyMaking.makeBody()` made.
enum MadeBody: Sendable {
    /// The body to send.
    case body(BodySupply)
    /// A body that cannot be read: each send fails with `error`, as URLSession's task does once it runs.
    case unreadable(URLError)
}
