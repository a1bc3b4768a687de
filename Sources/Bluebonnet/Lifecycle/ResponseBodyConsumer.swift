import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Takes the body of a request's final response as it arrives: a download's file, a stream's handlers. Calls come
/// from the engine's thread (a NIO event loop): a consumer does bookkeeping there and moves real work elsewhere.
protocol ResponseBodyConsumer: AnyObject, Sendable {
    /// The head of a response whose body streams here arrived; its chunks follow. A consumer makes the head's
    /// `HTTPURLResponse` only when something of its own needs one (a validator, a download's destination).
    ///
    /// - Parameter head: The head.
    func responseBodyWillBegin(_ head: ResponseHead)

    /// A chunk of the body. Tell `readiness` when there is room for more; until then the engine reads nothing.
    ///
    /// - Parameters:
    ///   - chunk:     The bytes, decoded.
    ///   - readiness: The engine's wait.
    func consume(_ chunk: Data, readiness: TransportReadiness)

    /// The body ended, completely or with `error`. `completion` runs once the consumer is done with it (a file
    /// written and moved), with the error the consumer itself met, if any.
    ///
    /// - Parameters:
    ///   - error:      The transport's error, if the body was cut short.
    ///   - completion: Called once, from any thread but never an event loop when the consumer did file I/O.
    func responseBodyDidEnd(error: AFError?, completion: @escaping @Sendable (AFError?) -> Void)

    /// The body of a final response that was held in memory rather than streamed here, because it might have been
    /// followed (a redirect declined, a `401` no credential answered), or that a local file gave; `nil` when a retry
    /// forgets the last attempt's. Called off the event loops, before the request is validated and finished.
    ///
    /// - Parameter body: The body.
    func responseBodyWasHeld(_ body: Data?)
}
