import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Receives the events of every `Request` a `Session` makes. Every method has an empty default, so a monitor
/// implements only what it needs. Events are delivered on `queue`.
public protocol EventMonitor: Sendable {
    /// The queue events are delivered on. `.main` by default.
    var queue: DispatchQueue { get }

    /// The request's initial `URLRequest` was made.
    func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest)
    /// Making the `URLRequest` failed.
    func request(_ request: Request, didFailToCreateURLRequestWithError error: AFError)
    /// The interceptor adapted the initial `URLRequest`.
    func request(_ request: Request, didAdaptInitialRequest initialRequest: URLRequest, to adaptedRequest: URLRequest)
    /// The interceptor failed to adapt the `URLRequest`.
    func request(_ request: Request, didFailToAdaptURLRequest initialRequest: URLRequest, withError error: AFError)
    /// The `URLRequest` of a hop is about to be sent (after adaptation; one per redirect).
    func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest)
    /// The retrier decided to retry; a new attempt begins.
    func requestIsRetrying(_ request: Request)
    /// `resume()` was called.
    func requestDidResume(_ request: Request)
    /// `suspend()` was called.
    func requestDidSuspend(_ request: Request)
    /// `cancel()` was called.
    func requestDidCancel(_ request: Request)
    /// The request completed; validators ran.
    func requestDidFinish(_ request: Request)
    /// A validator ran.
    func request(_ request: DataRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, data: Data?, withResult result: Request.ValidationResult)
    /// The unserialized response was produced.
    func request(_ request: DataRequest, didParseResponse response: DataResponse<Data?, AFError>)
    /// A serialized response was produced.
    func request<Value>(_ request: DataRequest, didParseResponse response: DataResponse<Value, AFError>)
    /// An upload's body was made.
    func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable)
    /// An upload's body could not be made; the request fails with `error`.
    func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: AFError)
}

extension EventMonitor {
    /// `.main`, as in Alamofire.
    public var queue: DispatchQueue { .main }
    /// Does nothing.
    public func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest) {}
    /// Does nothing.
    public func request(_ request: Request, didFailToCreateURLRequestWithError error: AFError) {}
    /// Does nothing.
    public func request(_ request: Request, didAdaptInitialRequest initialRequest: URLRequest, to adaptedRequest: URLRequest) {}
    /// Does nothing.
    public func request(_ request: Request, didFailToAdaptURLRequest initialRequest: URLRequest, withError error: AFError) {}
    /// Does nothing.
    public func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest) {}
    /// Does nothing.
    public func requestIsRetrying(_ request: Request) {}
    /// Does nothing.
    public func requestDidResume(_ request: Request) {}
    /// Does nothing.
    public func requestDidSuspend(_ request: Request) {}
    /// Does nothing.
    public func requestDidCancel(_ request: Request) {}
    /// Does nothing.
    public func requestDidFinish(_ request: Request) {}
    /// Does nothing.
    public func request(_ request: DataRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, data: Data?, withResult result: Request.ValidationResult) {}
    /// Does nothing.
    public func request(_ request: DataRequest, didParseResponse response: DataResponse<Data?, AFError>) {}
    /// Does nothing.
    public func request<Value>(_ request: DataRequest, didParseResponse response: DataResponse<Value, AFError>) {}
    /// Does nothing.
    public func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable) {}
    /// Does nothing.
    public func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: AFError) {}
}

/// Forwards each event to several monitors, each on its own queue.
public final class CompositeEventMonitor: EventMonitor {
    /// The queue the composite itself reports on (it forwards without waiting).
    public let queue = DispatchQueue(label: "org.bluebonnet.compositeEventMonitor")
    /// The monitors, in order.
    public let monitors: [any EventMonitor]

    /// Creates a composite.
    ///
    /// - Parameter monitors: The monitors, in order.
    public init(monitors: [any EventMonitor]) {
        self.monitors = monitors
    }

    func performEvent(_ event: @escaping @Sendable (any EventMonitor) -> Void) {
        for monitor in monitors {
            monitor.queue.async { event(monitor) }
        }
    }

    /// Forwards.
    public func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest) {
        performEvent { $0.request(request, didCreateInitialURLRequest: urlRequest) }
    }

    /// Forwards.
    public func request(_ request: Request, didFailToCreateURLRequestWithError error: AFError) {
        performEvent { $0.request(request, didFailToCreateURLRequestWithError: error) }
    }

    /// Forwards.
    public func request(_ request: Request, didAdaptInitialRequest initialRequest: URLRequest, to adaptedRequest: URLRequest) {
        performEvent { $0.request(request, didAdaptInitialRequest: initialRequest, to: adaptedRequest) }
    }

    /// Forwards.
    public func request(_ request: Request, didFailToAdaptURLRequest initialRequest: URLRequest, withError error: AFError) {
        performEvent { $0.request(request, didFailToAdaptURLRequest: initialRequest, withError: error) }
    }

    /// Forwards.
    public func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest) {
        performEvent { $0.request(request, didCreateURLRequest: urlRequest) }
    }

    /// Forwards.
    public func requestIsRetrying(_ request: Request) { performEvent { $0.requestIsRetrying(request) } }
    /// Forwards.
    public func requestDidResume(_ request: Request) { performEvent { $0.requestDidResume(request) } }
    /// Forwards.
    public func requestDidSuspend(_ request: Request) { performEvent { $0.requestDidSuspend(request) } }
    /// Forwards.
    public func requestDidCancel(_ request: Request) { performEvent { $0.requestDidCancel(request) } }
    /// Forwards.
    public func requestDidFinish(_ request: Request) { performEvent { $0.requestDidFinish(request) } }

    /// Forwards.
    public func request(_ request: DataRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, data: Data?, withResult result: Request.ValidationResult) {
        performEvent { $0.request(request, didValidateRequest: urlRequest, response: response, data: data, withResult: result) }
    }

    /// Forwards.
    public func request(_ request: DataRequest, didParseResponse response: DataResponse<Data?, AFError>) {
        performEvent { $0.request(request, didParseResponse: response) }
    }

    /// Forwards.
    public func request<Value>(_ request: DataRequest, didParseResponse response: DataResponse<Value, AFError>) {
        let boxed = UncheckedBox(response)
        performEvent { $0.request(request, didParseResponse: boxed.value) }
    }

    /// Forwards.
    public func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable) {
        performEvent { $0.request(request, didCreateUploadable: uploadable) }
    }

    /// Forwards.
    public func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: AFError) {
        performEvent { $0.request(request, didFailToCreateUploadableWithError: error) }
    }
}

/// Carries a value whose type the compiler cannot prove `Sendable` (a generic response) across one dispatch;
/// the value is never mutated after it is boxed.
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

/// An `EventMonitor` made of optional closures.
public final class ClosureEventMonitor: EventMonitor {
    private struct Closures {
        var requestDidResume: (@Sendable (Request) -> Void)?
        var requestDidSuspend: (@Sendable (Request) -> Void)?
        var requestDidCancel: (@Sendable (Request) -> Void)?
        var requestDidFinish: (@Sendable (Request) -> Void)?
        var requestDidCreateInitialURLRequest: (@Sendable (Request, URLRequest) -> Void)?
        var requestDidFailToCreateURLRequestWithError: (@Sendable (Request, AFError) -> Void)?
        var requestDidAdaptInitialRequestToAdaptedRequest: (@Sendable (Request, URLRequest, URLRequest) -> Void)?
        var requestDidFailToAdaptURLRequestWithError: (@Sendable (Request, URLRequest, AFError) -> Void)?
        var requestDidCreateURLRequest: (@Sendable (Request, URLRequest) -> Void)?
        var requestIsRetrying: (@Sendable (Request) -> Void)?
        var requestDidValidateRequestResponseDataWithResult: (@Sendable (DataRequest, URLRequest?, HTTPURLResponse, Data?, Request.ValidationResult) -> Void)?
        var requestDidParseResponse: (@Sendable (DataRequest, DataResponse<Data?, AFError>) -> Void)?
        var uploadRequestDidCreateUploadable: (@Sendable (UploadRequest, UploadRequest.Uploadable) -> Void)?
        var uploadRequestDidFailToCreateUploadableWithError: (@Sendable (UploadRequest, AFError) -> Void)?
    }

    // Alamofire lets these be set after the monitor is handed to a session, so they sit behind the lock.
    private let closures = Protected(Closures())

    /// Called for `requestDidResume`.
    public var requestDidResume: (@Sendable (Request) -> Void)? {
        get { closures.read().requestDidResume }
        set { closures.write { $0.requestDidResume = newValue } }
    }
    /// Called for `requestDidSuspend`.
    public var requestDidSuspend: (@Sendable (Request) -> Void)? {
        get { closures.read().requestDidSuspend }
        set { closures.write { $0.requestDidSuspend = newValue } }
    }
    /// Called for `requestDidCancel`.
    public var requestDidCancel: (@Sendable (Request) -> Void)? {
        get { closures.read().requestDidCancel }
        set { closures.write { $0.requestDidCancel = newValue } }
    }
    /// Called for `requestDidFinish`.
    public var requestDidFinish: (@Sendable (Request) -> Void)? {
        get { closures.read().requestDidFinish }
        set { closures.write { $0.requestDidFinish = newValue } }
    }
    /// Called for `request(_:didCreateInitialURLRequest:)`.
    public var requestDidCreateInitialURLRequest: (@Sendable (Request, URLRequest) -> Void)? {
        get { closures.read().requestDidCreateInitialURLRequest }
        set { closures.write { $0.requestDidCreateInitialURLRequest = newValue } }
    }
    /// Called for `request(_:didFailToCreateURLRequestWithError:)`.
    public var requestDidFailToCreateURLRequestWithError: (@Sendable (Request, AFError) -> Void)? {
        get { closures.read().requestDidFailToCreateURLRequestWithError }
        set { closures.write { $0.requestDidFailToCreateURLRequestWithError = newValue } }
    }
    /// Called for `request(_:didAdaptInitialRequest:to:)`.
    public var requestDidAdaptInitialRequestToAdaptedRequest: (@Sendable (Request, URLRequest, URLRequest) -> Void)? {
        get { closures.read().requestDidAdaptInitialRequestToAdaptedRequest }
        set { closures.write { $0.requestDidAdaptInitialRequestToAdaptedRequest = newValue } }
    }
    /// Called for `request(_:didFailToAdaptURLRequest:withError:)`.
    public var requestDidFailToAdaptURLRequestWithError: (@Sendable (Request, URLRequest, AFError) -> Void)? {
        get { closures.read().requestDidFailToAdaptURLRequestWithError }
        set { closures.write { $0.requestDidFailToAdaptURLRequestWithError = newValue } }
    }
    /// Called for `request(_:didCreateURLRequest:)`.
    public var requestDidCreateURLRequest: (@Sendable (Request, URLRequest) -> Void)? {
        get { closures.read().requestDidCreateURLRequest }
        set { closures.write { $0.requestDidCreateURLRequest = newValue } }
    }
    /// Called for `requestIsRetrying(_:)`.
    public var requestIsRetrying: (@Sendable (Request) -> Void)? {
        get { closures.read().requestIsRetrying }
        set { closures.write { $0.requestIsRetrying = newValue } }
    }
    /// Called for `request(_:didValidateRequest:response:data:withResult:)`.
    public var requestDidValidateRequestResponseDataWithResult: (@Sendable (DataRequest, URLRequest?, HTTPURLResponse, Data?, Request.ValidationResult) -> Void)? {
        get { closures.read().requestDidValidateRequestResponseDataWithResult }
        set { closures.write { $0.requestDidValidateRequestResponseDataWithResult = newValue } }
    }
    /// Called for the unserialized `request(_:didParseResponse:)`.
    public var requestDidParseResponse: (@Sendable (DataRequest, DataResponse<Data?, AFError>) -> Void)? {
        get { closures.read().requestDidParseResponse }
        set { closures.write { $0.requestDidParseResponse = newValue } }
    }
    /// Called for `request(_:didCreateUploadable:)`.
    public var uploadRequestDidCreateUploadable: (@Sendable (UploadRequest, UploadRequest.Uploadable) -> Void)? {
        get { closures.read().uploadRequestDidCreateUploadable }
        set { closures.write { $0.uploadRequestDidCreateUploadable = newValue } }
    }
    /// Called for `request(_:didFailToCreateUploadableWithError:)`.
    public var uploadRequestDidFailToCreateUploadableWithError: (@Sendable (UploadRequest, AFError) -> Void)? {
        get { closures.read().uploadRequestDidFailToCreateUploadableWithError }
        set { closures.write { $0.uploadRequestDidFailToCreateUploadableWithError = newValue } }
    }

    /// The queue events are delivered on.
    public let queue: DispatchQueue

    /// Creates a monitor.
    ///
    /// - Parameter queue: The queue events are delivered on. `.main` by default.
    public init(queue: DispatchQueue = .main) {
        self.queue = queue
    }

    /// Calls the closure.
    public func requestDidResume(_ request: Request) { requestDidResume?(request) }
    /// Calls the closure.
    public func requestDidSuspend(_ request: Request) { requestDidSuspend?(request) }
    /// Calls the closure.
    public func requestDidCancel(_ request: Request) { requestDidCancel?(request) }
    /// Calls the closure.
    public func requestDidFinish(_ request: Request) { requestDidFinish?(request) }
    /// Calls the closure.
    public func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest) {
        requestDidCreateInitialURLRequest?(request, urlRequest)
    }
    /// Calls the closure.
    public func request(_ request: Request, didFailToCreateURLRequestWithError error: AFError) {
        requestDidFailToCreateURLRequestWithError?(request, error)
    }
    /// Calls the closure.
    public func request(_ request: Request, didAdaptInitialRequest initialRequest: URLRequest, to adaptedRequest: URLRequest) {
        requestDidAdaptInitialRequestToAdaptedRequest?(request, initialRequest, adaptedRequest)
    }
    /// Calls the closure.
    public func request(_ request: Request, didFailToAdaptURLRequest initialRequest: URLRequest, withError error: AFError) {
        requestDidFailToAdaptURLRequestWithError?(request, initialRequest, error)
    }
    /// Calls the closure.
    public func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest) {
        requestDidCreateURLRequest?(request, urlRequest)
    }
    /// Calls the closure.
    public func requestIsRetrying(_ request: Request) { requestIsRetrying?(request) }
    /// Calls the closure.
    public func request(_ request: DataRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, data: Data?, withResult result: Request.ValidationResult) {
        requestDidValidateRequestResponseDataWithResult?(request, urlRequest, response, data, result)
    }
    /// Calls the closure.
    public func request(_ request: DataRequest, didParseResponse response: DataResponse<Data?, AFError>) {
        requestDidParseResponse?(request, response)
    }
    /// Calls the closure.
    public func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable) {
        uploadRequestDidCreateUploadable?(request, uploadable)
    }
    /// Calls the closure.
    public func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: AFError) {
        uploadRequestDidFailToCreateUploadableWithError?(request, error)
    }
}
