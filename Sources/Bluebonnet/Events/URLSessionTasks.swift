import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// The three classes below are FoundationNetworking's task classes, standing for one attempt of a Bluebonnet request:
// every property URLSession sets is read from the request, and `cancel()`, `suspend()` and `resume()` act on the
// request (FoundationNetworking's own would trap, having no URLSession behind them). They differ only in their
// superclass, which code written for Alamofire tests with `as?`, so each states the same overrides.
// @unchecked Sendable: the only stored property is a `Sendable` value; the superclass's state is its own concern and
// is declared `@unchecked Sendable` by FoundationNetworking.

/// The `URLSessionDataTask` of an attempt of a `DataRequest`, `DataStreamRequest` or `WebSocketRequest`.
final class BluebonnetDataTask: URLSessionDataTask, @unchecked Sendable {
    let source: AttemptTaskSource
    init(_ source: AttemptTaskSource) {
        self.source = source
        super.init()
    }
    override var taskIdentifier: Int { source.task.taskIdentifier }
    override var originalRequest: URLRequest? { source.task.originalRequest }
    override var currentRequest: URLRequest? { source.read().currentRequest }
    override var response: URLResponse? { source.read().head?.httpResponse }
    override var state: URLSessionTask.State { source.read().state }
    override var error: (any Error)? { source.read().error }
    override var countOfBytesReceived: Int64 { source.read().received }
    override var countOfBytesSent: Int64 { source.read().sent }
    override var countOfBytesExpectedToReceive: Int64 { source.read().expectedToReceive }
    override var countOfBytesExpectedToSend: Int64 { source.read().expectedToSend }
    override func cancel() { source.request?.cancel() }
    override func suspend() { source.request?.suspend() }
    override func resume() { source.request?.resume() }
}

/// The `URLSessionUploadTask` of an attempt of an `UploadRequest`.
final class BluebonnetUploadTask: URLSessionUploadTask, @unchecked Sendable {
    let source: AttemptTaskSource
    init(_ source: AttemptTaskSource) {
        self.source = source
        super.init()
    }
    override var taskIdentifier: Int { source.task.taskIdentifier }
    override var originalRequest: URLRequest? { source.task.originalRequest }
    override var currentRequest: URLRequest? { source.read().currentRequest }
    override var response: URLResponse? { source.read().head?.httpResponse }
    override var state: URLSessionTask.State { source.read().state }
    override var error: (any Error)? { source.read().error }
    override var countOfBytesReceived: Int64 { source.read().received }
    override var countOfBytesSent: Int64 { source.read().sent }
    override var countOfBytesExpectedToReceive: Int64 { source.read().expectedToReceive }
    override var countOfBytesExpectedToSend: Int64 { source.read().expectedToSend }
    override func cancel() { source.request?.cancel() }
    override func suspend() { source.request?.suspend() }
    override func resume() { source.request?.resume() }
}

/// The `URLSessionDownloadTask` of an attempt of a `DownloadRequest`; `cancel(byProducingResumeData:)` is the
/// request's.
final class BluebonnetDownloadTask: URLSessionDownloadTask, @unchecked Sendable {
    let source: AttemptTaskSource
    init(_ source: AttemptTaskSource) {
        self.source = source
        super.init()
    }
    override var taskIdentifier: Int { source.task.taskIdentifier }
    override var originalRequest: URLRequest? { source.task.originalRequest }
    override var currentRequest: URLRequest? { source.read().currentRequest }
    override var response: URLResponse? { source.read().head?.httpResponse }
    override var state: URLSessionTask.State { source.read().state }
    override var error: (any Error)? { source.read().error }
    override var countOfBytesReceived: Int64 { source.read().received }
    override var countOfBytesSent: Int64 { source.read().sent }
    override var countOfBytesExpectedToReceive: Int64 { source.read().expectedToReceive }
    override var countOfBytesExpectedToSend: Int64 { source.read().expectedToSend }
    override func cancel() { source.request?.cancel() }
    override func suspend() { source.request?.suspend() }
    override func resume() { source.request?.resume() }
    override func cancel(byProducingResumeData completionHandler: @escaping (Data?) -> Void) {
        guard let download = source.request as? DownloadRequest else { return completionHandler(nil) }
        let handler = UncheckedBox(completionHandler)
        download.cancel(byProducingResumeData: { handler.value($0) })
    }
}
