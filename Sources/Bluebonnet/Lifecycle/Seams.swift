import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The seams where features plug into a request's lifecycle. The session assembles each ordered list once
// (`SessionContext`); the lifecycle calls them without knowing which feature is behind one: it only learns that a
// hop leaves, that a head arrived (and what must be done before its body is read), and whether a finished hop leads
// to another one, is final, or failed.

// MARK: - A hop leaves

/// Adds what a feature contributes to each hop before it goes on the wire (the jar's `Cookie` header, the request's
/// cache handler). Runs on the thread that sends the hop; must be cheap and must not block.
protocol HopPreparing: Sendable {
    /// - Parameters:
    ///   - hop:      The hop as it will be sent. A preparer appends headers and never removes or reorders those
    ///               already there; what it appends is validated after every preparer ran.
    ///   - request:  The request sending it.
    ///   - features: The request's feature values.
    func prepare(_ hop: inout TransportRequest, of request: Request, features: FeatureValues)
}

// MARK: - A response head arrives

/// What a head step sees of a response head.
struct ResponseHeadFacts: Sendable {
    let head: ResponseHead
    /// The request the hop sent.
    let hopRequest: URLRequest?
    /// The first request's URL (the main document, for cookie rules).
    let firstURL: URL?
    /// Each `Set-Cookie` field apart (the response joins them with commas, which `Expires` dates also contain).
    let setCookieFields: [String]
    /// The request's feature values.
    let features: FeatureValues
}

extension ResponseHeadFacts {
    /// The head as `HTTPURLResponse`, made when first read.
    var response: HTTPURLResponse { head.httpResponse }
}

/// Work a head step does before any of the body is read, off the event loop (on the request's `underlyingQueue`);
/// it calls `done` once, from any thread: `nil` reads on, an error ends the hop.
typealias HeadWork = @Sendable (_ request: Request, _ done: @escaping @Sendable (AFError?) -> Void) -> Void

/// Told of each response head (stored cookies, invalidated cache entries, `onHTTPResponse`).
protocol ResponseHeadStep: Sendable {
    /// Runs on the engine's thread: bookkeeping only. Returns the work to finish before the body is read, or `nil`.
    func work(for head: ResponseHeadFacts) -> HeadWork?
}

// MARK: - A hop ends

/// What a follower sees of a hop that ended, taken under the request's lock.
struct HopFacts: Sendable {
    let head: ResponseHead
    /// The request the hop sent (an answered challenge's, or the last one made).
    let hopRequest: URLRequest
    /// The last request made, which a redirect is made from.
    let lastRequest: URLRequest
    /// The URL whose origin owns the request's credentials; `nil` when no origin does.
    let credentialOwner: URL?
    /// How many new hops (redirects) the attempt followed.
    let followedHops: Int
    /// The request's feature values.
    let features: FeatureValues
    /// What earlier answers on this hop left (reset by each new hop and each retry).
    let notes: FeatureValues
}

extension HopFacts {
    /// The head as `HTTPURLResponse`, made when first read.
    var response: HTTPURLResponse { head.httpResponse }
}

/// What a follower makes of a finished hop.
enum HopExamination: Sendable {
    /// The response forbids going on: the hop fails with this error.
    case failure(AFError)
    /// Another hop may follow; `decide` runs off the event loop (on the request's `underlyingQueue`) and calls its
    /// completion once, from any thread.
    case decide(@Sendable (_ request: Request, _ completion: @escaping @Sendable (HopDecision) -> Void) -> Void)
}

/// A follower's decision.
enum HopDecision: Sendable {
    /// A new hop (a redirect): counted, recorded in `requests`, and its notes start empty.
    case newHop(URLRequest)
    /// The same hop again (a challenge answered), with the notes it leaves for the next answer.
    case sameHopAgain(URLRequest, notes: FeatureValues)
    /// No other hop: the response is delivered.
    case deliver
}

/// Decides whether a finished hop leads to another (redirects, 401 challenges). The first follower in the session's
/// list that examines a response decides it.
protocol HopFollowing: Sendable {
    /// Cheap, on the engine's thread: whether a response with this status may concern the follower at all. Facts are
    /// gathered only when some follower says yes, so an ordinary response costs a comparison per follower.
    func considers(status: Int) -> Bool
    /// On the engine's thread, under the request's lock, when the head arrives: whether the response will lead to
    /// another hop (its body then stays in memory, and `onHTTPResponse` does not see it).
    func mayFollow(_ facts: HopFacts) -> Bool
    /// On the engine's thread once the hop's body arrived: `nil` when the follower does not take the response.
    func examine(_ facts: HopFacts) -> HopExamination?
    /// On the engine's thread, under the request's lock, when the head arrives and the session's monitor listens:
    /// what the monitor is told of it, as URLSession tells Alamofire's delegate (a 401's challenge), whether or not
    /// the follower answers it; `nil` for nothing. The event runs on the monitor's queue.
    func monitorEvent(for facts: HopFacts) -> SessionMonitorEvent?
}

extension HopFollowing {
    /// Nothing to tell.
    func monitorEvent(for facts: HopFacts) -> SessionMonitorEvent? { nil }
}

/// An event of Alamofire's session delegate for a monitor, made on the monitor's queue with the session and the
/// attempt's task.
typealias SessionMonitorEvent = @Sendable (any EventMonitor, URLSession, URLSessionTask) -> Void

// MARK: - Watching a request from outside

/// Makes, for each request, what watches it from outside its lifecycle (spans, metrics). Asked once, on the thread
/// that makes the request, so it can capture that thread's task-local context.
protocol RequestObserverMaking: Sendable {
    func makeObserver() -> any RequestObserving
}

/// Told of a request's hops and of its end. Calls are serial for one request, come from any thread (an event loop
/// for the head and the end of a hop, which is bookkeeping only), and never under the request's lock.
protocol RequestObserving: Sendable {
    /// A hop is about to leave; headers appended here go with it (a trace context).
    func hopWillSend(_ hop: inout TransportRequest)
    /// The hop's response head arrived.
    func hopDidReceive(_ head: ResponseHead)
    /// The hop ended: with its error, or `nil` once its body arrived.
    func hopDidEnd(error: AFError?)
    /// The request ended, with its last response and its error; its public state (metrics, retries) is final.
    func requestDidFinish(_ request: Request, response: ResponseHead?, error: AFError?)
}

/// Several observers as one, each told in order.
struct CompositeRequestObserving: RequestObserving, RequestObserverMaking {
    let observers: [any RequestObserving]
    let makers: [any RequestObserverMaking]

    init(makers: [any RequestObserverMaking]) {
        self.makers = makers
        observers = []
    }

    private init(observers: [any RequestObserving]) {
        self.observers = observers
        makers = []
    }

    func makeObserver() -> any RequestObserving {
        CompositeRequestObserving(observers: makers.map { $0.makeObserver() })
    }

    func hopWillSend(_ hop: inout TransportRequest) {
        for observer in observers { observer.hopWillSend(&hop) }
    }

    func hopDidReceive(_ head: ResponseHead) {
        for observer in observers { observer.hopDidReceive(head) }
    }

    func hopDidEnd(error: AFError?) {
        for observer in observers { observer.hopDidEnd(error: error) }
    }

    func requestDidFinish(_ request: Request, response: ResponseHead?, error: AFError?) {
        for observer in observers { observer.requestDidFinish(request, response: response, error: error) }
    }
}
