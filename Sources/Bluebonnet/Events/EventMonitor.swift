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
    /// An attempt went to the engine: its task is made. Bluebonnet follows redirects itself, and one task spans the
    /// attempt's hops, as a `URLSessionTask` does.
    func request(_ request: Request, didCreateTask task: RequestTask)
    /// The attempt's task runs: once it is made, and again after `suspend()`.
    func request(_ request: Request, didResumeTask task: RequestTask)
    /// The attempt's task stopped reading and sending because the request was suspended.
    func request(_ request: Request, didSuspendTask task: RequestTask)
    /// The attempt's task was stopped because the request was cancelled.
    func request(_ request: Request, didCancelTask task: RequestTask)
    /// What was measured of the attempt, just before it completes.
    func request(_ request: Request, didGatherMetrics metrics: RequestTaskMetrics)
    /// Alamofire's `URLSessionTaskDelegate` event, just before `request(_:didGatherMetrics:)`: the session's
    /// `URLSession` (`Session.session`), the attempt's task and its metrics, in Bluebonnet's types.
    func urlSession(_ session: URLSession, task: RequestTask, didFinishCollecting metrics: RequestTaskMetrics)
    /// The attempt ended, with the error that ended it.
    func request(_ request: Request, didCompleteTask task: RequestTask, with error: AFError?)
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
    func request(
        _ request: DataRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, data: Data?,
        withResult result: Request.ValidationResult)
    /// The unserialized response was produced.
    func request(_ request: DataRequest, didParseResponse response: DataResponse<Data?, AFError>)
    /// A serialized response was produced.
    func request<Value>(_ request: DataRequest, didParseResponse response: DataResponse<Value, AFError>)
    /// An upload's body was made.
    func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable)
    /// An upload's body could not be made; the request fails with `error`.
    func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: AFError)
    /// A stream's validator ran on the response head.
    func request(
        _ request: DataStreamRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse,
        withResult result: Request.ValidationResult)
    /// A stream handler's serializer made a value of a chunk, or failed.
    func request<Value>(_ request: DataStreamRequest, didParseStream result: Result<Value, AFError>)
    /// A download's file was moved to its destination.
    func request(_ request: DownloadRequest, didCreateDestinationURL url: URL)
    /// Alamofire's `URLSessionDelegate` event: the `Session` went away (`session` is its `Session.session`), and with
    /// it every request waiting to start, which finished with `sessionDeinitialized`.
    func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?)
    /// Alamofire's `URLSessionDownloadDelegate` event: a chunk of a download's body was written to its file
    /// (`totalBytesExpectedToWrite` is -1 when the length is unknown), in Bluebonnet's types.
    func urlSession(
        _ session: URLSession, downloadTask: RequestTask, didWriteData bytesWritten: Int64, totalBytesWritten: Int64,
        totalBytesExpectedToWrite: Int64)
    /// Alamofire's `URLSessionDownloadDelegate` event: a download's body is complete in its temporary file, which is
    /// moved to the destination next.
    func urlSession(_ session: URLSession, downloadTask: RequestTask, didFinishDownloadingTo location: URL)
    /// A download's file was moved to its destination, or could not be.
    func request(
        _ request: DownloadRequest, didFinishDownloadingUsing task: RequestTask, with result: Result<URL, AFError>)
    /// A download's validator ran.
    func request(
        _ request: DownloadRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse,
        fileURL: URL?, withResult result: Request.ValidationResult)
    /// A download's unserialized response was produced.
    func request(_ request: DownloadRequest, didParseResponse response: DownloadResponse<URL?, AFError>)
    /// A download's serialized response was produced.
    func request<Value>(_ request: DownloadRequest, didParseResponse response: DownloadResponse<Value, AFError>)
}

extension EventMonitor {
    /// `.main`, as in Alamofire.
    public var queue: DispatchQueue { .main }
    /// Does nothing.
    public func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest) {}
    /// Does nothing.
    public func request(_ request: Request, didFailToCreateURLRequestWithError error: AFError) {}
    /// Does nothing.
    public func request(
        _ request: Request, didAdaptInitialRequest initialRequest: URLRequest, to adaptedRequest: URLRequest
    ) {}
    /// Does nothing.
    public func request(
        _ request: Request, didFailToAdaptURLRequest initialRequest: URLRequest, withError error: AFError
    ) {}
    /// Does nothing.
    public func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest) {}
    /// Does nothing.
    public func request(_ request: Request, didCreateTask task: RequestTask) {}
    /// Does nothing.
    public func request(_ request: Request, didResumeTask task: RequestTask) {}
    /// Does nothing.
    public func request(_ request: Request, didSuspendTask task: RequestTask) {}
    /// Does nothing.
    public func request(_ request: Request, didCancelTask task: RequestTask) {}
    /// Does nothing.
    public func request(_ request: Request, didGatherMetrics metrics: RequestTaskMetrics) {}
    /// Does nothing.
    public func urlSession(_ session: URLSession, task: RequestTask, didFinishCollecting metrics: RequestTaskMetrics) {}
    /// Does nothing.
    public func request(_ request: Request, didCompleteTask task: RequestTask, with error: AFError?) {}
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
    public func request(
        _ request: DataRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, data: Data?,
        withResult result: Request.ValidationResult
    ) {}
    /// Does nothing.
    public func request(_ request: DataRequest, didParseResponse response: DataResponse<Data?, AFError>) {}
    /// Does nothing.
    public func request<Value>(_ request: DataRequest, didParseResponse response: DataResponse<Value, AFError>) {}
    /// Does nothing.
    public func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable) {}
    /// Does nothing.
    public func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: AFError) {}
    /// Does nothing.
    public func request(
        _ request: DataStreamRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse,
        withResult result: Request.ValidationResult
    ) {}
    /// Does nothing.
    public func request<Value>(_ request: DataStreamRequest, didParseStream result: Result<Value, AFError>) {}
    /// Does nothing.
    public func request(_ request: DownloadRequest, didCreateDestinationURL url: URL) {}
    /// Does nothing.
    public func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {}
    /// Does nothing.
    public func urlSession(
        _ session: URLSession, downloadTask: RequestTask, didWriteData bytesWritten: Int64, totalBytesWritten: Int64,
        totalBytesExpectedToWrite: Int64
    ) {}
    /// Does nothing.
    public func urlSession(_ session: URLSession, downloadTask: RequestTask, didFinishDownloadingTo location: URL) {}
    /// Does nothing.
    public func request(
        _ request: DownloadRequest, didFinishDownloadingUsing task: RequestTask, with result: Result<URL, AFError>
    ) {}
    /// Does nothing.
    public func request(
        _ request: DownloadRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse,
        fileURL: URL?, withResult result: Request.ValidationResult
    ) {}
    /// Does nothing.
    public func request(_ request: DownloadRequest, didParseResponse response: DownloadResponse<URL?, AFError>) {}
    /// Does nothing.
    public func request<Value>(_ request: DownloadRequest, didParseResponse response: DownloadResponse<Value, AFError>)
    {}
}
