import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request whose response body is collected in memory.
public class DataRequest: Request, @unchecked Sendable {
    // @unchecked: the body is in the request's state, behind its lock; the convertible is immutable.
    /// The `URLRequestConvertible` the request is made from.
    public let convertible: any URLRequestConvertible

    /// The response body, once the request completed; `nil` when no byte of it arrived.
    public var data: Data? { mutableState.read { $0.data } }

    init(
        convertible: any URLRequestConvertible,
        underlyingQueue: DispatchQueue,
        serializationQueue: DispatchQueue,
        eventMonitor: (any EventMonitor)?,
        interceptor: (any RequestInterceptor)? = nil,
        shouldAutomaticallyResume: Bool? = nil,
        context: SessionContext,
        delegate: any RequestLifecycleDelegate,
        makesURLRequestOnRequestQueue: Bool = false
    ) {
        self.convertible = convertible
        super.init(
            underlyingQueue: underlyingQueue, serializationQueue: serializationQueue,
            eventMonitor: eventMonitor, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume,
            context: context, delegate: delegate, makesURLRequestOnRequestQueue: makesURLRequestOnRequestQueue,
            makeURLRequest: { try convertible.asURLRequest() })
    }

    // As in Alamofire, `data` stays `nil` until a byte arrives: an empty body (a redirect not followed, a 204) is `nil`.
    override var loadsLocalFiles: Bool { true }

    override func didReceiveBody(_ data: Data?) {
        mutableState.write { $0.data = data?.isEmpty == false ? data : nil }
    }
}

extension DataRequest {
    /// How the session's monitor hears of a serialized response. Alamofire's generic
    /// `EventMonitor.request(_:didParseResponse:)` takes a `Sendable` value, so a handler has one only where its
    /// value is known to be `Sendable` (the overloads of `response(queue:responseSerializer:completionHandler:)` and
    /// `serializingResponse(using:automaticallyCancelling:)` that say so), and none where it is not (JSON's `Any`).
    typealias ParseEvent<Value> = @Sendable (any EventMonitor, DataRequest, DataResponse<Value, AFError>) -> Void

    /// `EventMonitor.request(_:didParseResponse:)`, when the session's monitor listens for it: `nil` otherwise, so
    /// that a request nobody monitors makes no closure for it.
    func parseEvent<Value: Sendable>() -> ParseEvent<Value>? {
        guard monitoredEvents.contains(.parsing) else { return nil }
        return { monitor, request, response in monitor.request(request, didParseResponse: response) }
    }
}
