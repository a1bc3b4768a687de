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
