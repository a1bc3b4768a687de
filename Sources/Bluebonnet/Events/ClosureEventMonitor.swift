import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An `EventMonitor` made of optional closures.
public final class ClosureEventMonitor: EventMonitor {
    private struct Closures {
        var sessionDidBecomeInvalidWithError: (@Sendable (URLSession, (any Error)?) -> Void)?
        var taskDidReceiveChallenge: (@Sendable (URLSession, URLSessionTask, URLAuthenticationChallenge) -> Void)?
        var taskDidSendBodyData: (@Sendable (URLSession, URLSessionTask, Int64, Int64, Int64) -> Void)?
        var taskNeedNewBodyStream: (@Sendable (URLSession, URLSessionTask) -> Void)?
        var taskWillPerformHTTPRedirection:
            (@Sendable (URLSession, URLSessionTask, HTTPURLResponse, URLRequest) -> Void)?
        var taskDidFinishCollectingMetrics: (@Sendable (URLSession, URLSessionTask, URLSessionTaskMetrics) -> Void)?
        var taskDidComplete: (@Sendable (URLSession, URLSessionTask, (any Error)?) -> Void)?
        var taskIsWaitingForConnectivity: (@Sendable (URLSession, URLSessionTask) -> Void)?
        var dataTaskDidReceiveResponse: (@Sendable (URLSession, URLSessionDataTask, URLResponse) -> Void)?
        var dataTaskDidReceiveData: (@Sendable (URLSession, URLSessionDataTask, Data) -> Void)?
        var dataTaskWillCacheResponse: (@Sendable (URLSession, URLSessionDataTask, CachedURLResponse) -> Void)?
        var downloadTaskDidResumeAtOffset: (@Sendable (URLSession, URLSessionDownloadTask, Int64, Int64) -> Void)?
        var downloadTaskDidWriteData: (@Sendable (URLSession, URLSessionDownloadTask, Int64, Int64, Int64) -> Void)?
        var downloadTaskDidFinishDownloadingToURL: (@Sendable (URLSession, URLSessionDownloadTask, URL) -> Void)?
        var requestDidCreateInitialURLRequest: (@Sendable (Request, URLRequest) -> Void)?
        var requestDidFailToCreateURLRequestWithError: (@Sendable (Request, AFError) -> Void)?
        var requestDidAdaptInitialRequestToAdaptedRequest: (@Sendable (Request, URLRequest, URLRequest) -> Void)?
        var requestDidFailToAdaptURLRequestWithError: (@Sendable (Request, URLRequest, AFError) -> Void)?
        var requestDidCreateURLRequest: (@Sendable (Request, URLRequest) -> Void)?
        var requestDidCreateTask: (@Sendable (Request, URLSessionTask) -> Void)?
        var requestDidGatherMetrics: (@Sendable (Request, URLSessionTaskMetrics) -> Void)?
        var requestDidFailTaskEarlyWithError: (@Sendable (Request, URLSessionTask, AFError) -> Void)?
        var requestDidCompleteTaskWithError: (@Sendable (Request, URLSessionTask, AFError?) -> Void)?
        var requestIsRetrying: (@Sendable (Request) -> Void)?
        var requestDidFinish: (@Sendable (Request) -> Void)?
        var requestDidResume: (@Sendable (Request) -> Void)?
        var requestDidResumeTask: (@Sendable (Request, URLSessionTask) -> Void)?
        var requestDidSuspend: (@Sendable (Request) -> Void)?
        var requestDidSuspendTask: (@Sendable (Request, URLSessionTask) -> Void)?
        var requestDidCancel: (@Sendable (Request) -> Void)?
        var requestDidCancelTask: (@Sendable (Request, URLSessionTask) -> Void)?
        var requestDidValidateRequestResponseDataWithResult:
            (@Sendable (DataRequest, URLRequest?, HTTPURLResponse, Data?, Request.ValidationResult) -> Void)?
        var requestDidParseResponse: (@Sendable (DataRequest, DataResponse<Data?, AFError>) -> Void)?
        var requestDidValidateRequestResponseWithResult:
            (@Sendable (DataStreamRequest, URLRequest?, HTTPURLResponse, Request.ValidationResult) -> Void)?
        var requestDidCreateUploadable: (@Sendable (UploadRequest, UploadRequest.Uploadable) -> Void)?
        var requestDidFailToCreateUploadableWithError: (@Sendable (UploadRequest, AFError) -> Void)?
        var requestDidProvideInputStream: (@Sendable (UploadRequest, InputStream) -> Void)?
        var requestDidFinishDownloadingUsingTaskWithResult:
            (@Sendable (DownloadRequest, URLSessionTask, Result<URL, AFError>) -> Void)?
        var requestDidCreateDestinationURL: (@Sendable (DownloadRequest, URL) -> Void)?
        var requestDidValidateRequestResponseFileURLWithResult:
            (@Sendable (DownloadRequest, URLRequest?, HTTPURLResponse, URL?, Request.ValidationResult) -> Void)?
        var requestDidParseDownloadResponse: (@Sendable (DownloadRequest, DownloadResponse<URL?, AFError>) -> Void)?
        var requestDidGatherTaskMetrics: (@Sendable (Request, RequestTaskMetrics) -> Void)?
    }

    // Alamofire lets these be set after the monitor is handed to a session, so they sit behind the lock.
    private let closures = Protected(Closures())

    /// Called for `urlSession(_:didBecomeInvalidWithError:)`.
    public var sessionDidBecomeInvalidWithError: (@Sendable (URLSession, (any Error)?) -> Void)? {
        get { closures.read().sessionDidBecomeInvalidWithError }
        set { closures.write { $0.sessionDidBecomeInvalidWithError = newValue } }
    }
    /// Called for `urlSession(_:task:didReceive:)`.
    public var taskDidReceiveChallenge: (@Sendable (URLSession, URLSessionTask, URLAuthenticationChallenge) -> Void)? {
        get { closures.read().taskDidReceiveChallenge }
        set { closures.write { $0.taskDidReceiveChallenge = newValue } }
    }
    /// Called for `urlSession(_:task:didSendBodyData:totalBytesSent:totalBytesExpectedToSend:)`.
    public var taskDidSendBodyData: (@Sendable (URLSession, URLSessionTask, Int64, Int64, Int64) -> Void)? {
        get { closures.read().taskDidSendBodyData }
        set { closures.write { $0.taskDidSendBodyData = newValue } }
    }
    /// Called for `urlSession(_:taskNeedsNewBodyStream:)`.
    public var taskNeedNewBodyStream: (@Sendable (URLSession, URLSessionTask) -> Void)? {
        get { closures.read().taskNeedNewBodyStream }
        set { closures.write { $0.taskNeedNewBodyStream = newValue } }
    }
    /// Called for `urlSession(_:task:willPerformHTTPRedirection:newRequest:)`.
    public var taskWillPerformHTTPRedirection:
        (@Sendable (URLSession, URLSessionTask, HTTPURLResponse, URLRequest) -> Void)?
    {
        get { closures.read().taskWillPerformHTTPRedirection }
        set { closures.write { $0.taskWillPerformHTTPRedirection = newValue } }
    }
    /// Called for `urlSession(_:task:didFinishCollecting:)`.
    public var taskDidFinishCollectingMetrics: (@Sendable (URLSession, URLSessionTask, URLSessionTaskMetrics) -> Void)?
    {
        get { closures.read().taskDidFinishCollectingMetrics }
        set { closures.write { $0.taskDidFinishCollectingMetrics = newValue } }
    }
    /// Called for `urlSession(_:task:didCompleteWithError:)`.
    public var taskDidComplete: (@Sendable (URLSession, URLSessionTask, (any Error)?) -> Void)? {
        get { closures.read().taskDidComplete }
        set { closures.write { $0.taskDidComplete = newValue } }
    }
    /// Called for `urlSession(_:taskIsWaitingForConnectivity:)`.
    public var taskIsWaitingForConnectivity: (@Sendable (URLSession, URLSessionTask) -> Void)? {
        get { closures.read().taskIsWaitingForConnectivity }
        set { closures.write { $0.taskIsWaitingForConnectivity = newValue } }
    }
    /// Called for `urlSession(_:dataTask:didReceive:)`.
    public var dataTaskDidReceiveResponse: (@Sendable (URLSession, URLSessionDataTask, URLResponse) -> Void)? {
        get { closures.read().dataTaskDidReceiveResponse }
        set { closures.write { $0.dataTaskDidReceiveResponse = newValue } }
    }
    /// Called for `urlSession(_:dataTask:didReceive:)`.
    public var dataTaskDidReceiveData: (@Sendable (URLSession, URLSessionDataTask, Data) -> Void)? {
        get { closures.read().dataTaskDidReceiveData }
        set { closures.write { $0.dataTaskDidReceiveData = newValue } }
    }
    /// Called for `urlSession(_:dataTask:willCacheResponse:)`.
    public var dataTaskWillCacheResponse: (@Sendable (URLSession, URLSessionDataTask, CachedURLResponse) -> Void)? {
        get { closures.read().dataTaskWillCacheResponse }
        set { closures.write { $0.dataTaskWillCacheResponse = newValue } }
    }
    /// Called for `urlSession(_:downloadTask:didResumeAtOffset:expectedTotalBytes:)`.
    public var downloadTaskDidResumeAtOffset: (@Sendable (URLSession, URLSessionDownloadTask, Int64, Int64) -> Void)? {
        get { closures.read().downloadTaskDidResumeAtOffset }
        set { closures.write { $0.downloadTaskDidResumeAtOffset = newValue } }
    }
    /// Called for `urlSession(_:downloadTask:didWriteData:totalBytesWritten:totalBytesExpectedToWrite:)`.
    public var downloadTaskDidWriteData: (@Sendable (URLSession, URLSessionDownloadTask, Int64, Int64, Int64) -> Void)?
    {
        get { closures.read().downloadTaskDidWriteData }
        set { closures.write { $0.downloadTaskDidWriteData = newValue } }
    }
    /// Called for `urlSession(_:downloadTask:didFinishDownloadingTo:)`.
    public var downloadTaskDidFinishDownloadingToURL: (@Sendable (URLSession, URLSessionDownloadTask, URL) -> Void)? {
        get { closures.read().downloadTaskDidFinishDownloadingToURL }
        set { closures.write { $0.downloadTaskDidFinishDownloadingToURL = newValue } }
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
    /// Called for `request(_:didCreateTask:)`.
    public var requestDidCreateTask: (@Sendable (Request, URLSessionTask) -> Void)? {
        get { closures.read().requestDidCreateTask }
        set { closures.write { $0.requestDidCreateTask = newValue } }
    }
    /// Called for `request(_:didGatherMetrics:)`.
    public var requestDidGatherMetrics: (@Sendable (Request, URLSessionTaskMetrics) -> Void)? {
        get { closures.read().requestDidGatherMetrics }
        set { closures.write { $0.requestDidGatherMetrics = newValue } }
    }
    /// Called for `request(_:didFailTask:earlyWithError:)`.
    public var requestDidFailTaskEarlyWithError: (@Sendable (Request, URLSessionTask, AFError) -> Void)? {
        get { closures.read().requestDidFailTaskEarlyWithError }
        set { closures.write { $0.requestDidFailTaskEarlyWithError = newValue } }
    }
    /// Called for `request(_:didCompleteTask:with:)`.
    public var requestDidCompleteTaskWithError: (@Sendable (Request, URLSessionTask, AFError?) -> Void)? {
        get { closures.read().requestDidCompleteTaskWithError }
        set { closures.write { $0.requestDidCompleteTaskWithError = newValue } }
    }
    /// Called for `requestIsRetrying`.
    public var requestIsRetrying: (@Sendable (Request) -> Void)? {
        get { closures.read().requestIsRetrying }
        set { closures.write { $0.requestIsRetrying = newValue } }
    }
    /// Called for `requestDidFinish`.
    public var requestDidFinish: (@Sendable (Request) -> Void)? {
        get { closures.read().requestDidFinish }
        set { closures.write { $0.requestDidFinish = newValue } }
    }
    /// Called for `requestDidResume`.
    public var requestDidResume: (@Sendable (Request) -> Void)? {
        get { closures.read().requestDidResume }
        set { closures.write { $0.requestDidResume = newValue } }
    }
    /// Called for `request(_:didResumeTask:)`.
    public var requestDidResumeTask: (@Sendable (Request, URLSessionTask) -> Void)? {
        get { closures.read().requestDidResumeTask }
        set { closures.write { $0.requestDidResumeTask = newValue } }
    }
    /// Called for `requestDidSuspend`.
    public var requestDidSuspend: (@Sendable (Request) -> Void)? {
        get { closures.read().requestDidSuspend }
        set { closures.write { $0.requestDidSuspend = newValue } }
    }
    /// Called for `request(_:didSuspendTask:)`.
    public var requestDidSuspendTask: (@Sendable (Request, URLSessionTask) -> Void)? {
        get { closures.read().requestDidSuspendTask }
        set { closures.write { $0.requestDidSuspendTask = newValue } }
    }
    /// Called for `requestDidCancel`.
    public var requestDidCancel: (@Sendable (Request) -> Void)? {
        get { closures.read().requestDidCancel }
        set { closures.write { $0.requestDidCancel = newValue } }
    }
    /// Called for `request(_:didCancelTask:)`.
    public var requestDidCancelTask: (@Sendable (Request, URLSessionTask) -> Void)? {
        get { closures.read().requestDidCancelTask }
        set { closures.write { $0.requestDidCancelTask = newValue } }
    }
    /// Called for `request(_:didValidateRequest:response:data:withResult:)`.
    public var requestDidValidateRequestResponseDataWithResult:
        (@Sendable (DataRequest, URLRequest?, HTTPURLResponse, Data?, Request.ValidationResult) -> Void)?
    {
        get { closures.read().requestDidValidateRequestResponseDataWithResult }
        set { closures.write { $0.requestDidValidateRequestResponseDataWithResult = newValue } }
    }
    /// Called for `request(_:didParseResponse:)`.
    public var requestDidParseResponse: (@Sendable (DataRequest, DataResponse<Data?, AFError>) -> Void)? {
        get { closures.read().requestDidParseResponse }
        set { closures.write { $0.requestDidParseResponse = newValue } }
    }
    /// Called for `request(_:didValidateRequest:response:withResult:)`.
    public var requestDidValidateRequestResponseWithResult:
        (@Sendable (DataStreamRequest, URLRequest?, HTTPURLResponse, Request.ValidationResult) -> Void)?
    {
        get { closures.read().requestDidValidateRequestResponseWithResult }
        set { closures.write { $0.requestDidValidateRequestResponseWithResult = newValue } }
    }
    /// Called for `request(_:didCreateUploadable:)`.
    public var requestDidCreateUploadable: (@Sendable (UploadRequest, UploadRequest.Uploadable) -> Void)? {
        get { closures.read().requestDidCreateUploadable }
        set { closures.write { $0.requestDidCreateUploadable = newValue } }
    }
    /// Called for `request(_:didFailToCreateUploadableWithError:)`.
    public var requestDidFailToCreateUploadableWithError: (@Sendable (UploadRequest, AFError) -> Void)? {
        get { closures.read().requestDidFailToCreateUploadableWithError }
        set { closures.write { $0.requestDidFailToCreateUploadableWithError = newValue } }
    }
    /// Called for `request(_:didProvideInputStream:)`.
    public var requestDidProvideInputStream: (@Sendable (UploadRequest, InputStream) -> Void)? {
        get { closures.read().requestDidProvideInputStream }
        set { closures.write { $0.requestDidProvideInputStream = newValue } }
    }
    /// Called for `request(_:didFinishDownloadingUsing:with:)`.
    public var requestDidFinishDownloadingUsingTaskWithResult:
        (@Sendable (DownloadRequest, URLSessionTask, Result<URL, AFError>) -> Void)?
    {
        get { closures.read().requestDidFinishDownloadingUsingTaskWithResult }
        set { closures.write { $0.requestDidFinishDownloadingUsingTaskWithResult = newValue } }
    }
    /// Called for `request(_:didCreateDestinationURL:)`.
    public var requestDidCreateDestinationURL: (@Sendable (DownloadRequest, URL) -> Void)? {
        get { closures.read().requestDidCreateDestinationURL }
        set { closures.write { $0.requestDidCreateDestinationURL = newValue } }
    }
    /// Called for `request(_:didValidateRequest:response:fileURL:withResult:)`.
    public var requestDidValidateRequestResponseFileURLWithResult:
        (@Sendable (DownloadRequest, URLRequest?, HTTPURLResponse, URL?, Request.ValidationResult) -> Void)?
    {
        get { closures.read().requestDidValidateRequestResponseFileURLWithResult }
        set { closures.write { $0.requestDidValidateRequestResponseFileURLWithResult = newValue } }
    }
    /// Called for `request(_:didParseResponse:)`.
    public var requestDidParseDownloadResponse: (@Sendable (DownloadRequest, DownloadResponse<URL?, AFError>) -> Void)?
    {
        get { closures.read().requestDidParseDownloadResponse }
        set { closures.write { $0.requestDidParseDownloadResponse = newValue } }
    }
    /// Called for `request(_:didGatherTaskMetrics:)`.
    public var requestDidGatherTaskMetrics: (@Sendable (Request, RequestTaskMetrics) -> Void)? {
        get { closures.read().requestDidGatherTaskMetrics }
        set { closures.write { $0.requestDidGatherTaskMetrics = newValue } }
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
    public func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
        sessionDidBecomeInvalidWithError?(session, error)
    }
    /// Calls the closure.
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge
    ) { taskDidReceiveChallenge?(session, task, challenge) }
    /// Calls the closure.
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) { taskDidSendBodyData?(session, task, bytesSent, totalBytesSent, totalBytesExpectedToSend) }
    /// Calls the closure.
    public func urlSession(_ session: URLSession, taskNeedsNewBodyStream task: URLSessionTask) {
        taskNeedNewBodyStream?(session, task)
    }
    /// Calls the closure.
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest
    ) { taskWillPerformHTTPRedirection?(session, task, response, request) }
    /// Calls the closure.
    public func urlSession(
        _ session: URLSession, task: URLSessionTask, didFinishCollecting metrics: URLSessionTaskMetrics
    ) { taskDidFinishCollectingMetrics?(session, task, metrics) }
    /// Calls the closure.
    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        taskDidComplete?(session, task, error)
    }
    /// Calls the closure.
    public func urlSession(_ session: URLSession, taskIsWaitingForConnectivity task: URLSessionTask) {
        taskIsWaitingForConnectivity?(session, task)
    }
    /// Calls the closure.
    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse) {
        dataTaskDidReceiveResponse?(session, dataTask, response)
    }
    /// Calls the closure.
    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        dataTaskDidReceiveData?(session, dataTask, data)
    }
    /// Calls the closure.
    public func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse
    ) { dataTaskWillCacheResponse?(session, dataTask, proposedResponse) }
    /// Calls the closure.
    public func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didResumeAtOffset fileOffset: Int64,
        expectedTotalBytes: Int64
    ) { downloadTaskDidResumeAtOffset?(session, downloadTask, fileOffset, expectedTotalBytes) }
    /// Calls the closure.
    public func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64, totalBytesExpectedToWrite: Int64
    ) { downloadTaskDidWriteData?(session, downloadTask, bytesWritten, totalBytesWritten, totalBytesExpectedToWrite) }
    /// Calls the closure.
    public func urlSession(
        _ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL
    ) { downloadTaskDidFinishDownloadingToURL?(session, downloadTask, location) }
    /// Calls the closure.
    public func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest) {
        requestDidCreateInitialURLRequest?(request, urlRequest)
    }
    /// Calls the closure.
    public func request(_ request: Request, didFailToCreateURLRequestWithError error: AFError) {
        requestDidFailToCreateURLRequestWithError?(request, error)
    }
    /// Calls the closure.
    public func request(
        _ request: Request, didAdaptInitialRequest initialRequest: URLRequest, to adaptedRequest: URLRequest
    ) { requestDidAdaptInitialRequestToAdaptedRequest?(request, initialRequest, adaptedRequest) }
    /// Calls the closure.
    public func request(
        _ request: Request, didFailToAdaptURLRequest initialRequest: URLRequest, withError error: AFError
    ) { requestDidFailToAdaptURLRequestWithError?(request, initialRequest, error) }
    /// Calls the closure.
    public func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest) {
        requestDidCreateURLRequest?(request, urlRequest)
    }
    /// Calls the closure.
    public func request(_ request: Request, didCreateTask task: URLSessionTask) { requestDidCreateTask?(request, task) }
    /// Calls the closure.
    public func request(_ request: Request, didGatherMetrics metrics: URLSessionTaskMetrics) {
        requestDidGatherMetrics?(request, metrics)
    }
    /// Calls the closure.
    public func request(_ request: Request, didFailTask task: URLSessionTask, earlyWithError error: AFError) {
        requestDidFailTaskEarlyWithError?(request, task, error)
    }
    /// Calls the closure.
    public func request(_ request: Request, didCompleteTask task: URLSessionTask, with error: AFError?) {
        requestDidCompleteTaskWithError?(request, task, error)
    }
    /// Calls the closure.
    public func requestIsRetrying(_ request: Request) { requestIsRetrying?(request) }
    /// Calls the closure.
    public func requestDidFinish(_ request: Request) { requestDidFinish?(request) }
    /// Calls the closure.
    public func requestDidResume(_ request: Request) { requestDidResume?(request) }
    /// Calls the closure.
    public func request(_ request: Request, didResumeTask task: URLSessionTask) { requestDidResumeTask?(request, task) }
    /// Calls the closure.
    public func requestDidSuspend(_ request: Request) { requestDidSuspend?(request) }
    /// Calls the closure.
    public func request(_ request: Request, didSuspendTask task: URLSessionTask) {
        requestDidSuspendTask?(request, task)
    }
    /// Calls the closure.
    public func requestDidCancel(_ request: Request) { requestDidCancel?(request) }
    /// Calls the closure.
    public func request(_ request: Request, didCancelTask task: URLSessionTask) { requestDidCancelTask?(request, task) }
    /// Calls the closure.
    public func request(
        _ request: DataRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, data: Data?,
        withResult result: Request.ValidationResult
    ) { requestDidValidateRequestResponseDataWithResult?(request, urlRequest, response, data, result) }
    /// Calls the closure.
    public func request(_ request: DataRequest, didParseResponse response: DataResponse<Data?, AFError>) {
        requestDidParseResponse?(request, response)
    }
    /// Calls the closure.
    public func request(
        _ request: DataStreamRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse,
        withResult result: Request.ValidationResult
    ) { requestDidValidateRequestResponseWithResult?(request, urlRequest, response, result) }
    /// Calls the closure.
    public func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable) {
        requestDidCreateUploadable?(request, uploadable)
    }
    /// Calls the closure.
    public func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: AFError) {
        requestDidFailToCreateUploadableWithError?(request, error)
    }
    /// Calls the closure.
    public func request(_ request: UploadRequest, didProvideInputStream stream: InputStream) {
        requestDidProvideInputStream?(request, stream)
    }
    /// Calls the closure.
    public func request(
        _ request: DownloadRequest, didFinishDownloadingUsing task: URLSessionTask, with result: Result<URL, AFError>
    ) { requestDidFinishDownloadingUsingTaskWithResult?(request, task, result) }
    /// Calls the closure.
    public func request(_ request: DownloadRequest, didCreateDestinationURL url: URL) {
        requestDidCreateDestinationURL?(request, url)
    }
    /// Calls the closure.
    public func request(
        _ request: DownloadRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse,
        fileURL: URL?, withResult result: Request.ValidationResult
    ) { requestDidValidateRequestResponseFileURLWithResult?(request, urlRequest, response, fileURL, result) }
    /// Calls the closure.
    public func request(_ request: DownloadRequest, didParseResponse response: DownloadResponse<URL?, AFError>) {
        requestDidParseDownloadResponse?(request, response)
    }
    /// Calls the closure.
    public func request(_ request: Request, didGatherTaskMetrics metrics: RequestTaskMetrics) {
        requestDidGatherTaskMetrics?(request, metrics)
    }
}
