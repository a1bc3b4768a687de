import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Receives the events of every `Request` a `Session` makes: Alamofire's 44 events, with Alamofire's types, and
/// Bluebonnet's measured metrics. Every method has an empty default, so a monitor implements only what it needs. Events
/// are delivered on `queue`.
///
/// The events that name a `URLSessionTask` are handed the attempt's task (`Request.task`), made for the monitor the
/// first time one is handed it. Three are never called, as on Linux with Alamofire: the two that carry a
/// `URLSessionTaskMetrics` (FoundationNetworking's can only be made empty; Bluebonnet's own are
/// `request(_:didGatherTaskMetrics:)`) and `urlSession(_:taskIsWaitingForConnectivity:)`.
public protocol EventMonitor: Sendable {
    /// The queue events are delivered on. `.main` by default.
    var queue: DispatchQueue { get }

    /// Alamofire's `URLSessionDelegate` event: the `Session` went away (`session` is its `Session.session`),
    /// and with it every request waiting to start, which finished with `sessionDeinitialized`.
    func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?)
    /// A response asked for credentials (`401`, `407`): told before the session's credential, or the request's
    /// `authenticate(...)`, answers it.
    func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge)
    /// A piece of the request's body was sent (`totalBytesExpectedToSend` is -1 while the length is unknown).
    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64)
    /// An `InputStream` body would have to be sent again to answer an authentication challenge, and cannot be:
    /// Bluebonnet never rewinds a stream, so the response that asked for credentials is delivered instead.
    func urlSession(_ session: URLSession, taskNeedsNewBodyStream task: URLSessionTask)
    /// A redirect is about to be followed: `request` is what the redirect rules propose, before the request's
    /// or the session's `RedirectHandler` decides.
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest)
    /// Never called on Linux, as in Alamofire there: FoundationNetworking's `URLSessionTaskMetrics` can be made
    /// only empty, with values nobody outside FoundationNetworking can set. Bluebonnet's measured metrics come
    /// with `request(_:didGatherTaskMetrics:)`.
    func urlSession(_ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics)
    /// An attempt's task ended, with the error URLSession would report (the `AFError`'s underlying error); told
    /// just before `request(_:didCompleteTask:with:)`.
    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?)
    /// Never called: Bluebonnet's requests never wait for connectivity (`waitsForConnectivity` is not honoured
    /// on Linux, by FoundationNetworking either); a request without a route fails at once, and `OfflineRetrier`
    /// retries it when the network is back.
    func urlSession(_ session: URLSession, taskIsWaitingForConnectivity task: URLSessionTask)
    /// The head of the response the request delivers arrived (a followed redirect's or challenge's is not told,
    /// as URLSession does not tell it).
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse)
    /// Body bytes of the delivered response arrived, decoded: each piece as it is read for a
    /// `DataStreamRequest`, the whole body once it is complete for a `DataRequest` (which holds it in memory).
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data)
    /// The response may be stored in the configuration's cache: told before the `CachedResponseHandler`
    /// decides.
    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse)
    /// A download made from resume data goes on from `fileOffset`: the server answered with the rest of the
    /// file.
    func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64,
        expectedTotalBytes: Int64)
    /// A piece of a download's body was written to its file (`totalBytesExpectedToWrite` is -1 when the length
    /// is unknown).
    func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64)
    /// A download's body is complete in its temporary file, which is moved to the destination next.
    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL)
    /// The request's initial `URLRequest` was made.
    func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest)
    /// Making the `URLRequest` failed.
    func request(_ request: Request, didFailToCreateURLRequestWithError error: AFError)
    /// The interceptor adapted the initial `URLRequest`.
    func request(_ request: Request, didAdaptInitialRequest initialRequest: URLRequest, to adaptedRequest: URLRequest)
    /// The interceptor failed to adapt the `URLRequest`.
    func request(_ request: Request, didFailToAdaptURLRequest initialRequest: URLRequest, withError error: AFError)
    /// The `URLRequest` of an attempt is about to be sent (after adaptation).
    func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest)
    /// An attempt began: its task is made. One task spans the attempt's redirects, as a `URLSessionTask` does.
    func request(_ request: Request, didCreateTask task: URLSessionTask)
    /// Never called on Linux, as in Alamofire there (see `urlSession(_:task:didFinishCollecting:)`):
    /// Bluebonnet's measured metrics come with `request(_:didGatherTaskMetrics:)`.
    func request(_ request: Request, didGatherMetrics metrics: URLSessionTaskMetrics)
    /// The attempt's task failed before a response: the server's identity was refused
    /// (`AFError.serverTrustEvaluationFailed`); its completion follows.
    func request(_ request: Request, didFailTask task: URLSessionTask, earlyWithError error: AFError)
    /// The attempt ended, with the error that ended it.
    func request(_ request: Request, didCompleteTask task: URLSessionTask, with error: AFError?)
    /// The retrier decided to retry; a new attempt begins.
    func requestIsRetrying(_ request: Request)
    /// The request completed; validators ran.
    func requestDidFinish(_ request: Request)
    /// `resume()` was called.
    func requestDidResume(_ request: Request)
    /// The attempt's task runs: once it is made, and again after `suspend()`.
    func request(_ request: Request, didResumeTask task: URLSessionTask)
    /// `suspend()` was called.
    func requestDidSuspend(_ request: Request)
    /// The attempt's task stopped reading and sending because the request was suspended.
    func request(_ request: Request, didSuspendTask task: URLSessionTask)
    /// `cancel()` was called.
    func requestDidCancel(_ request: Request)
    /// The attempt's task was stopped because the request was cancelled.
    func request(_ request: Request, didCancelTask task: URLSessionTask)
    /// A validator ran.
    func request(
        _ request: DataRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, data: Data?,
        withResult result: Request.ValidationResult)
    /// The unserialized response was produced.
    func request(_ request: DataRequest, didParseResponse response: DataResponse<Data?, AFError>)
    /// A serialized response was produced.
    func request<Value>(_ request: DataRequest, didParseResponse response: DataResponse<Value, AFError>)
    /// A stream's validator ran on the response head.
    func request(
        _ request: DataStreamRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse,
        withResult result: Request.ValidationResult)
    /// A stream handler's serializer made a value of a chunk, or failed.
    func request<Value>(_ request: DataStreamRequest, didParseStream result: Result<Value, AFError>)
    /// An upload's body was made.
    func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable)
    /// An upload's body could not be made; the request fails with `error`.
    func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: AFError)
    /// An upload whose body is an `InputStream` began reading it.
    func request(_ request: UploadRequest, didProvideInputStream stream: InputStream)
    /// A download's file was moved to its destination, or could not be.
    func request(
        _ request: DownloadRequest, didFinishDownloadingUsing task: URLSessionTask, with result: Result<URL, AFError>)
    /// A download's file was moved to its destination.
    func request(_ request: DownloadRequest, didCreateDestinationURL url: URL)
    /// A download's validator ran.
    func request(
        _ request: DownloadRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse,
        fileURL: URL?, withResult result: Request.ValidationResult)
    /// A download's unserialized response was produced.
    func request(_ request: DownloadRequest, didParseResponse response: DownloadResponse<URL?, AFError>)
    /// A download's serialized response was produced.
    func request<Value>(_ request: DownloadRequest, didParseResponse response: DownloadResponse<Value, AFError>)
    /// Bluebonnet's own: what was measured of an attempt, just before its task completes
    /// (`Request.allTaskMetrics`).
    func request(_ request: Request, didGatherTaskMetrics metrics: RequestTaskMetrics)
}

extension EventMonitor {
    /// `.main`, as in Alamofire.
    public var queue: DispatchQueue { .main }
    /// Does nothing.
    public func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {}
    /// Does nothing.
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge
    ) {}
    /// Does nothing.
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {}
    /// Does nothing.
    public func urlSession(_ session: URLSession, taskNeedsNewBodyStream task: URLSessionTask) {}
    /// Does nothing.
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest
    ) {}
    /// Does nothing.
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics
    ) {}
    /// Does nothing.
    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {}
    /// Does nothing.
    public func urlSession(_ session: URLSession, taskIsWaitingForConnectivity task: URLSessionTask) {}
    /// Does nothing.
    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse) {}
    /// Does nothing.
    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {}
    /// Does nothing.
    public func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse
    ) {}
    /// Does nothing.
    public func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64,
        expectedTotalBytes: Int64
    ) {}
    /// Does nothing.
    public func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
    ) {}
    /// Does nothing.
    public func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL
    ) {}
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
    public func request(_ request: Request, didCreateTask task: URLSessionTask) {}
    /// Does nothing.
    public func request(_ request: Request, didGatherMetrics metrics: URLSessionTaskMetrics) {}
    /// Does nothing.
    public func request(_ request: Request, didFailTask task: URLSessionTask, earlyWithError error: AFError) {}
    /// Does nothing.
    public func request(_ request: Request, didCompleteTask task: URLSessionTask, with error: AFError?) {}
    /// Does nothing.
    public func requestIsRetrying(_ request: Request) {}
    /// Does nothing.
    public func requestDidFinish(_ request: Request) {}
    /// Does nothing.
    public func requestDidResume(_ request: Request) {}
    /// Does nothing.
    public func request(_ request: Request, didResumeTask task: URLSessionTask) {}
    /// Does nothing.
    public func requestDidSuspend(_ request: Request) {}
    /// Does nothing.
    public func request(_ request: Request, didSuspendTask task: URLSessionTask) {}
    /// Does nothing.
    public func requestDidCancel(_ request: Request) {}
    /// Does nothing.
    public func request(_ request: Request, didCancelTask task: URLSessionTask) {}
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
    public func request(
        _ request: DataStreamRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse,
        withResult result: Request.ValidationResult
    ) {}
    /// Does nothing.
    public func request<Value>(_ request: DataStreamRequest, didParseStream result: Result<Value, AFError>) {}
    /// Does nothing.
    public func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable) {}
    /// Does nothing.
    public func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: AFError) {}
    /// Does nothing.
    public func request(_ request: UploadRequest, didProvideInputStream stream: InputStream) {}
    /// Does nothing.
    public func request(
        _ request: DownloadRequest, didFinishDownloadingUsing task: URLSessionTask, with result: Result<URL, AFError>
    ) {}
    /// Does nothing.
    public func request(_ request: DownloadRequest, didCreateDestinationURL url: URL) {}
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
    /// Does nothing.
    public func request(_ request: Request, didGatherTaskMetrics metrics: RequestTaskMetrics) {}
}
