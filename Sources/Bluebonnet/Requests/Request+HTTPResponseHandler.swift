import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Request {
    /// Sets the handler told of each final response head before its body is read; the last one set wins.
    func setHTTPResponseHandler(
        on queue: DispatchQueue,
        _ handler: @escaping @Sendable (HTTPURLResponse, @escaping @Sendable (ResponseDisposition) -> Void) -> Void
    ) {
        mutableState.write {
            $0.headStep = HTTPResponseHandlerStep(handler: HTTPResponseHandler(queue: queue, handler: handler))
        }
    }

    /// Runs `handler` in a task and answers with the disposition it returns.
    static func asyncDisposition(
        _ handler: @escaping @Sendable (HTTPURLResponse) async -> ResponseDisposition
    ) -> @Sendable (HTTPURLResponse, @escaping @Sendable (ResponseDisposition) -> Void) -> Void {
        { response, completionHandler in
            Task { completionHandler(await handler(response)) }
        }
    }
}

/// A request that can show its response head to a handler before any of the body is read: `DataRequest` (and so
/// `UploadRequest`) and `DataStreamRequest`, as in Alamofire.
public protocol HTTPResponseHandling: Request {}

extension DataRequest: HTTPResponseHandling {}

extension HTTPResponseHandling {
    /// Sets a closure called with the response head before any of its body is read (or streamed); the body is read
    /// only once `completionHandler` is called with `.allow`, and `.cancel` cancels the request. Redirects and
    /// challenges the request follows itself are not shown.
    ///
    /// - Parameters:
    ///   - queue:   `DispatchQueue` on which the closure is called. `.main` by default.
    ///   - handler: Closure called with the response and a completion handler that must be called once.
    /// - Returns: The instance.
    @_disfavoredOverload
    @discardableResult
    public func onHTTPResponse(
        on queue: DispatchQueue = .main,
        perform handler:
            @escaping @Sendable (
                _ response: HTTPURLResponse,
                _ completionHandler: @escaping @Sendable (Request.ResponseDisposition) -> Void
            ) -> Void
    ) -> Self {
        setHTTPResponseHandler(on: queue, handler)
        return self
    }

    /// Sets a closure called with the response head when it arrives; the body is read once it returns.
    ///
    /// - Parameters:
    ///   - queue:   `DispatchQueue` on which the closure is called. `.main` by default.
    ///   - handler: Closure called with the response.
    /// - Returns: The instance.
    @discardableResult
    public func onHTTPResponse(
        on queue: DispatchQueue = .main, perform handler: @escaping @Sendable (HTTPURLResponse) -> Void
    ) -> Self {
        onHTTPResponse(on: queue) { response, completionHandler in
            handler(response)
            completionHandler(.allow)
        }
    }

    /// Sets an async closure that decides, from the response head, whether the request goes on.
    ///
    /// - Parameter handler: Closure returning `.allow` to read the body or `.cancel` to cancel the request.
    /// - Returns: The instance.
    @_disfavoredOverload
    @discardableResult
    public func onHTTPResponse(
        perform handler: @escaping @Sendable (_ response: HTTPURLResponse) async -> Request.ResponseDisposition
    ) -> Self {
        onHTTPResponse(on: underlyingQueue, perform: Self.asyncDisposition(handler))
    }

    /// Sets an async closure called with the response head; the body is read once it returns.
    ///
    /// - Parameter handler: Closure called with the response.
    /// - Returns: The instance.
    @discardableResult
    public func onHTTPResponse(perform handler: @escaping @Sendable (_ response: HTTPURLResponse) async -> Void) -> Self
    {
        onHTTPResponse { response async -> Request.ResponseDisposition in
            await handler(response)
            return .allow
        }
    }

    /// The request's final response heads (one per attempt) as an `AsyncSequence`, ending when the request finishes.
    ///
    /// - Parameter bufferingPolicy: What is kept when the consumer falls behind. `.unbounded` by default.
    /// - Returns: The stream.
    public func httpResponses(bufferingPolicy: StreamOf<HTTPURLResponse>.BufferingPolicy = .unbounded) -> StreamOf<
        HTTPURLResponse
    > {
        eventStream(bufferingPolicy: bufferingPolicy) { [self] yield in
            onHTTPResponse(on: underlyingQueue) { yield($0) }
        }
    }
}
