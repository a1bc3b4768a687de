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
        makesURLRequestOnRequestQueue: Bool = false,
        kind: RequestKind = DataRequest.kind
    ) {
        self.convertible = convertible
        super.init(
            underlyingQueue: underlyingQueue, serializationQueue: serializationQueue,
            eventMonitor: eventMonitor, interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume,
            context: context, delegate: delegate, makesURLRequestOnRequestQueue: makesURLRequestOnRequestQueue,
            kind: kind, makeURLRequest: { try convertible.asURLRequest() })
    }

    /// A data request's kind: its `URLRequest`'s body, its response kept in memory as `data` (which stays `nil` until a
    /// byte arrives, as in Alamofire: an empty body, a 204, is `nil`), over HTTP or from a `file:` URL.
    static let kind = RequestKind(route: .http(loadsLocalFiles: true))
}
