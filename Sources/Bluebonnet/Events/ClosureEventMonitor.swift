import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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
        var requestDidCreateTask: (@Sendable (Request, RequestTask) -> Void)?
        var requestDidResumeTask: (@Sendable (Request, RequestTask) -> Void)?
        var requestDidSuspendTask: (@Sendable (Request, RequestTask) -> Void)?
        var requestDidCancelTask: (@Sendable (Request, RequestTask) -> Void)?
        var requestDidGatherMetrics: (@Sendable (Request, RequestTaskMetrics) -> Void)?
        var taskDidFinishCollectingMetrics: (@Sendable (URLSession, RequestTask, RequestTaskMetrics) -> Void)?
        var requestDidCompleteTaskWithError: (@Sendable (Request, RequestTask, AFError?) -> Void)?
        var requestDidValidateRequestResponseDataWithResult:
            (@Sendable (DataRequest, URLRequest?, HTTPURLResponse, Data?, Request.ValidationResult) -> Void)?
        var requestDidParseResponse: (@Sendable (DataRequest, DataResponse<Data?, AFError>) -> Void)?
        var requestDidCreateUploadable: (@Sendable (UploadRequest, UploadRequest.Uploadable) -> Void)?
        var requestDidFailToCreateUploadableWithError: (@Sendable (UploadRequest, AFError) -> Void)?
        var requestDidValidateRequestResponseWithResult:
            (@Sendable (DataStreamRequest, URLRequest?, HTTPURLResponse, Request.ValidationResult) -> Void)?
        var requestDidCreateDestinationURL: (@Sendable (DownloadRequest, URL) -> Void)?
        var sessionDidBecomeInvalidWithError: (@Sendable (URLSession, (any Error)?) -> Void)?
        var downloadTaskDidWriteData: (@Sendable (URLSession, RequestTask, Int64, Int64, Int64) -> Void)?
        var downloadTaskDidFinishDownloadingToURL: (@Sendable (URLSession, RequestTask, URL) -> Void)?
        var requestDidFinishDownloadingUsingTaskWithResult:
            (@Sendable (DownloadRequest, RequestTask, Result<URL, AFError>) -> Void)?
        var requestDidValidateRequestResponseFileURLWithResult:
            (@Sendable (DownloadRequest, URLRequest?, HTTPURLResponse, URL?, Request.ValidationResult) -> Void)?
        var requestDidParseDownloadResponse: (@Sendable (DownloadRequest, DownloadResponse<URL?, AFError>) -> Void)?
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
    /// Called for `request(_:didCreateTask:)`.
    public var requestDidCreateTask: (@Sendable (Request, RequestTask) -> Void)? {
        get { closures.read().requestDidCreateTask }
        set { closures.write { $0.requestDidCreateTask = newValue } }
    }
    /// Called for `request(_:didResumeTask:)`.
    public var requestDidResumeTask: (@Sendable (Request, RequestTask) -> Void)? {
        get { closures.read().requestDidResumeTask }
        set { closures.write { $0.requestDidResumeTask = newValue } }
    }
    /// Called for `request(_:didSuspendTask:)`.
    public var requestDidSuspendTask: (@Sendable (Request, RequestTask) -> Void)? {
        get { closures.read().requestDidSuspendTask }
        set { closures.write { $0.requestDidSuspendTask = newValue } }
    }
    /// Called for `request(_:didCancelTask:)`.
    public var requestDidCancelTask: (@Sendable (Request, RequestTask) -> Void)? {
        get { closures.read().requestDidCancelTask }
        set { closures.write { $0.requestDidCancelTask = newValue } }
    }
    /// Called for `urlSession(_:task:didFinishCollecting:)`, with Bluebonnet's task and metrics.
    public var taskDidFinishCollectingMetrics: (@Sendable (URLSession, RequestTask, RequestTaskMetrics) -> Void)? {
        get { closures.read().taskDidFinishCollectingMetrics }
        set { closures.write { $0.taskDidFinishCollectingMetrics = newValue } }
    }
    /// Called for `request(_:didGatherMetrics:)`.
    public var requestDidGatherMetrics: (@Sendable (Request, RequestTaskMetrics) -> Void)? {
        get { closures.read().requestDidGatherMetrics }
        set { closures.write { $0.requestDidGatherMetrics = newValue } }
    }
    /// Called for `request(_:didCompleteTask:with:)`.
    public var requestDidCompleteTaskWithError: (@Sendable (Request, RequestTask, AFError?) -> Void)? {
        get { closures.read().requestDidCompleteTaskWithError }
        set { closures.write { $0.requestDidCompleteTaskWithError = newValue } }
    }
    /// Called for `request(_:didValidateRequest:response:data:withResult:)`.
    public var requestDidValidateRequestResponseDataWithResult:
        (@Sendable (DataRequest, URLRequest?, HTTPURLResponse, Data?, Request.ValidationResult) -> Void)?
    {
        get { closures.read().requestDidValidateRequestResponseDataWithResult }
        set { closures.write { $0.requestDidValidateRequestResponseDataWithResult = newValue } }
    }
    /// Called for the unserialized `request(_:didParseResponse:)`.
    public var requestDidParseResponse: (@Sendable (DataRequest, DataResponse<Data?, AFError>) -> Void)? {
        get { closures.read().requestDidParseResponse }
        set { closures.write { $0.requestDidParseResponse = newValue } }
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
    /// Called for `request(_:didValidateRequest:response:withResult:)` of a stream.
    public var requestDidValidateRequestResponseWithResult:
        (@Sendable (DataStreamRequest, URLRequest?, HTTPURLResponse, Request.ValidationResult) -> Void)?
    {
        get { closures.read().requestDidValidateRequestResponseWithResult }
        set { closures.write { $0.requestDidValidateRequestResponseWithResult = newValue } }
    }
    /// Called for `urlSession(_:didBecomeInvalidWithError:)`.
    public var sessionDidBecomeInvalidWithError: (@Sendable (URLSession, (any Error)?) -> Void)? {
        get { closures.read().sessionDidBecomeInvalidWithError }
        set { closures.write { $0.sessionDidBecomeInvalidWithError = newValue } }
    }
    /// Called for `urlSession(_:downloadTask:didWriteData:totalBytesWritten:totalBytesExpectedToWrite:)`.
    public var downloadTaskDidWriteData: (@Sendable (URLSession, RequestTask, Int64, Int64, Int64) -> Void)? {
        get { closures.read().downloadTaskDidWriteData }
        set { closures.write { $0.downloadTaskDidWriteData = newValue } }
    }
    /// Called for `urlSession(_:downloadTask:didFinishDownloadingTo:)`.
    public var downloadTaskDidFinishDownloadingToURL: (@Sendable (URLSession, RequestTask, URL) -> Void)? {
        get { closures.read().downloadTaskDidFinishDownloadingToURL }
        set { closures.write { $0.downloadTaskDidFinishDownloadingToURL = newValue } }
    }
    /// Called for `request(_:didFinishDownloadingUsing:with:)`.
    public var requestDidFinishDownloadingUsingTaskWithResult:
        (@Sendable (DownloadRequest, RequestTask, Result<URL, AFError>) -> Void)?
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
    /// Called for the unserialized `request(_:didParseResponse:)` of a download.
    public var requestDidParseDownloadResponse: (@Sendable (DownloadRequest, DownloadResponse<URL?, AFError>) -> Void)?
    {
        get { closures.read().requestDidParseDownloadResponse }
        set { closures.write { $0.requestDidParseDownloadResponse = newValue } }
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
    public func request(
        _ request: Request, didAdaptInitialRequest initialRequest: URLRequest, to adaptedRequest: URLRequest
    ) {
        requestDidAdaptInitialRequestToAdaptedRequest?(request, initialRequest, adaptedRequest)
    }
    /// Calls the closure.
    public func request(
        _ request: Request, didFailToAdaptURLRequest initialRequest: URLRequest, withError error: AFError
    ) {
        requestDidFailToAdaptURLRequestWithError?(request, initialRequest, error)
    }
    /// Calls the closure.
    public func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest) {
        requestDidCreateURLRequest?(request, urlRequest)
    }
    /// Calls the closure.
    public func requestIsRetrying(_ request: Request) { requestIsRetrying?(request) }
    /// Calls the closure.
    public func request(_ request: Request, didCreateTask task: RequestTask) { requestDidCreateTask?(request, task) }
    /// Calls the closure.
    public func request(_ request: Request, didResumeTask task: RequestTask) { requestDidResumeTask?(request, task) }
    /// Calls the closure.
    public func request(_ request: Request, didSuspendTask task: RequestTask) { requestDidSuspendTask?(request, task) }
    /// Calls the closure.
    public func request(_ request: Request, didCancelTask task: RequestTask) { requestDidCancelTask?(request, task) }
    /// Calls the closure.
    public func request(_ request: Request, didGatherMetrics metrics: RequestTaskMetrics) {
        requestDidGatherMetrics?(request, metrics)
    }
    /// Calls the closure.
    public func urlSession(_ session: URLSession, task: RequestTask, didFinishCollecting metrics: RequestTaskMetrics) {
        taskDidFinishCollectingMetrics?(session, task, metrics)
    }
    /// Calls the closure.
    public func request(_ request: Request, didCompleteTask task: RequestTask, with error: AFError?) {
        requestDidCompleteTaskWithError?(request, task, error)
    }
    /// Calls the closure.
    public func request(
        _ request: DataRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, data: Data?,
        withResult result: Request.ValidationResult
    ) {
        requestDidValidateRequestResponseDataWithResult?(request, urlRequest, response, data, result)
    }
    /// Calls the closure.
    public func request(_ request: DataRequest, didParseResponse response: DataResponse<Data?, AFError>) {
        requestDidParseResponse?(request, response)
    }
    /// Calls the closure.
    public func request(_ request: UploadRequest, didCreateUploadable uploadable: UploadRequest.Uploadable) {
        requestDidCreateUploadable?(request, uploadable)
    }
    /// Calls the closure.
    public func request(_ request: UploadRequest, didFailToCreateUploadableWithError error: AFError) {
        requestDidFailToCreateUploadableWithError?(request, error)
    }
    /// Calls the closure.
    public func request(
        _ request: DataStreamRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse,
        withResult result: Request.ValidationResult
    ) {
        requestDidValidateRequestResponseWithResult?(request, urlRequest, response, result)
    }
    /// Calls the closure.
    public func request(_ request: DownloadRequest, didCreateDestinationURL url: URL) {
        requestDidCreateDestinationURL?(request, url)
    }
    /// Calls the closure.
    public func urlSession(
        _ session: URLSession, downloadTask: RequestTask, didWriteData bytesWritten: Int64, totalBytesWritten: Int64,
        totalBytesExpectedToWrite: Int64
    ) {
        downloadTaskDidWriteData?(session, downloadTask, bytesWritten, totalBytesWritten, totalBytesExpectedToWrite)
    }
    /// Calls the closure.
    public func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
        sessionDidBecomeInvalidWithError?(session, error)
    }
    /// Calls the closure.
    public func urlSession(_ session: URLSession, downloadTask: RequestTask, didFinishDownloadingTo location: URL) {
        downloadTaskDidFinishDownloadingToURL?(session, downloadTask, location)
    }
    /// Calls the closure.
    public func request(
        _ request: DownloadRequest, didFinishDownloadingUsing task: RequestTask, with result: Result<URL, AFError>
    ) {
        requestDidFinishDownloadingUsingTaskWithResult?(request, task, result)
    }
    /// Calls the closure.
    public func request(
        _ request: DownloadRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse,
        fileURL: URL?, withResult result: Request.ValidationResult
    ) {
        requestDidValidateRequestResponseFileURLWithResult?(request, urlRequest, response, fileURL, result)
    }
    /// Calls the closure.
    public func request(_ request: DownloadRequest, didParseResponse response: DownloadResponse<URL?, AFError>) {
        requestDidParseDownloadResponse?(request, response)
    }
}
