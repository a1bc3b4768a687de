import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Request {
    /// How a `DataRequest` or `DataStreamRequest` goes on after an `onHTTPResponse` handler saw its response head.
    public enum ResponseDisposition: Sendable {
        /// Read the body and finish normally.
        case allow
        /// Cancel the request, as `cancel()` does: none of the body is read.
        case cancel
    }
}

/// An `onHTTPResponse` handler and the queue it runs on.
struct HTTPResponseHandler: Sendable {
    let queue: DispatchQueue
    let handler: @Sendable (HTTPURLResponse, @escaping @Sendable (Request.ResponseDisposition) -> Void) -> Void
}
