import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `DownloadResponse` whose failure is always `AFError`.
public typealias AFDownloadResponse<Success> = DownloadResponse<Success, AFError>
/// Alamofire 4's unserialized download response (`DefaultDownloadResponse`): the request, response, file, resume
/// data, error and timeline.
public typealias DefaultDownloadResponse = DownloadResponse<URL?, AFError>

/// Everything known about a finished `DownloadRequest`, with its serialized result.
public struct DownloadResponse<Success, Failure: Error> {
    /// The URL request sent to the server (the last hop).
    public let request: URLRequest?
    /// The server's response to the URL request.
    public let response: HTTPURLResponse?
    /// Where the downloaded file was moved.
    public let fileURL: URL?
    /// What `Session.download(resumingWith:)` needs to continue a download that stopped.
    public let resumeData: Data?
    /// URLSession's metrics of the request's last attempt: always `nil` on Linux, as with Alamofire there
    /// (FoundationNetworking never reports them). Bluebonnet's measurements are `taskMetrics`.
    public let metrics: URLSessionTaskMetrics?
    /// What Bluebonnet measured of the request's last attempt: one transaction per hop, with the times and byte counts
    /// the engine saw.
    public let taskMetrics: RequestTaskMetrics?
    /// The time taken to serialize the response.
    public let serializationDuration: TimeInterval
    /// The result of response serialization.
    public let result: Result<Success, Failure>
    /// The times of the request's life.
    public let timeline: Request.Timeline

    /// Returns the associated value of the result if it is a success, `nil` otherwise.
    public var value: Success? {
        guard case let .success(value) = result else { return nil }
        return value
    }

    /// Returns the associated error value if the result if it is a failure, `nil` otherwise.
    public var error: Failure? {
        guard case let .failure(error) = result else { return nil }
        return error
    }

    /// Creates a `DownloadResponse` instance with the specified parameters derived from response serialization.
    ///
    /// - Parameters:
    ///   - request:               The `URLRequest` sent to the server.
    ///   - response:              The `HTTPURLResponse` from the server.
    ///   - fileURL:               The final destination URL of the data returned from the server.
    ///   - resumeData:            The resume `Data` generated if the request was cancelled.
    ///   - metrics:               URLSession's metrics, if you have them.
    ///   - serializationDuration: The duration taken by serialization.
    ///   - result:                The `Result` of response serialization.
    ///   - timeline:              The times of the request's life. `Request.Timeline()` by default.
    ///   - taskMetrics:           What Bluebonnet measured of the request's last attempt. `nil` by default.
    public init(
        request: URLRequest?,
        response: HTTPURLResponse?,
        fileURL: URL?,
        resumeData: Data?,
        metrics: URLSessionTaskMetrics?,
        serializationDuration: TimeInterval,
        result: Result<Success, Failure>,
        timeline: Request.Timeline = Request.Timeline(),
        taskMetrics: RequestTaskMetrics? = nil
    ) {
        self.request = request
        self.response = response
        self.fileURL = fileURL
        self.resumeData = resumeData
        self.metrics = metrics
        self.taskMetrics = taskMetrics
        self.serializationDuration = serializationDuration
        self.result = result
        self.timeline = timeline
    }

    /// The same response with another result.
    private func with<NewSuccess, NewFailure>(_ result: Result<NewSuccess, NewFailure>) -> DownloadResponse<
        NewSuccess, NewFailure
    > {
        DownloadResponse<NewSuccess, NewFailure>(
            request: request, response: response, fileURL: fileURL, resumeData: resumeData,
            metrics: metrics, serializationDuration: serializationDuration, result: result, timeline: timeline,
            taskMetrics: taskMetrics)
    }

    /// Evaluates `transform` with the success value.
    ///
    /// - Parameter transform: A closure that takes the success value of the `result` instance.
    /// - Returns: A `DownloadResponse` instance wrapping the result of the transform.
    public func map<NewSuccess>(_ transform: (Success) -> NewSuccess) -> DownloadResponse<NewSuccess, Failure> {
        with(result.map(transform))
    }

    /// Evaluates `transform` with the success value; an error it throws becomes the failure.
    ///
    /// - Parameter transform: A throwing closure that takes the success value of the `result` instance.
    /// - Returns: A success or failure `DownloadResponse` depending on the result of the transform.
    public func tryMap<NewSuccess>(_ transform: (Success) throws -> NewSuccess) -> DownloadResponse<
        NewSuccess, any Error
    > {
        with(result.mapError { $0 as any Error }.flatMap { value in Result { try transform(value) } })
    }

    /// Evaluates `transform` with the success value, using the `Result` it returns.
    ///
    /// - Parameter transform: A closure that takes the success value and returns a new `Result`.
    /// - Returns: A `DownloadResponse` with the returned `Result`.
    public func flatMap<NewSuccess>(_ transform: (Success) -> Result<NewSuccess, Failure>) -> DownloadResponse<
        NewSuccess, Failure
    > {
        with(result.flatMap(transform))
    }

    /// Evaluates `transform` with the error.
    ///
    /// - Parameter transform: A closure that takes the error of the instance.
    /// - Returns: A `DownloadResponse` instance containing the result of the transform.
    public func mapError<NewFailure: Error>(_ transform: (Failure) -> NewFailure) -> DownloadResponse<
        Success, NewFailure
    > {
        with(result.mapError(transform))
    }

    /// Evaluates `transform` with the error; an error it throws becomes the failure.
    ///
    /// - Parameter transform: A throwing closure that takes the error of the instance.
    /// - Returns: A `DownloadResponse` instance containing the result of the transform.
    public func tryMapError<NewFailure: Error>(_ transform: (Failure) throws -> NewFailure) -> DownloadResponse<
        Success, any Error
    > {
        with(
            result.flatMapError { error -> Result<Success, any Error> in
                do { return .failure(try transform(error)) } catch { return .failure(error) }
            })
    }
}

extension DownloadResponse: Sendable where Success: Sendable {}

extension DownloadResponse: CustomStringConvertible, CustomDebugStringConvertible {
    /// The result, as `success(...)` or `failure(...)`.
    public var description: String {
        "\(result)"
    }

    /// Alamofire's layout: `[Request]:`, `[Response]:` with status and headers, `[File URL]:`, `[Resume Data]:`,
    /// `[Result]:` and `[Timeline]:`. URLs are shown without their user and password.
    public var debugDescription: String {
        var output: [String] = []
        output.append(
            request?.url.map { "[Request]: \(request?.httpMethod ?? "GET") \($0.absoluteStringWithoutUserInfo)" }
                ?? "[Request]: nil")
        if let response {
            output.append("[Response]: \(response.statusCode) \(response.url?.absoluteStringWithoutUserInfo ?? "")")
            for header in response.headers.sorted() {
                output.append("    \(header.name): \(header.value)")
            }
        } else {
            output.append("[Response]: nil")
        }
        output.append("[File URL]: \(fileURL?.path ?? "nil")")
        output.append("[Resume Data]: \(resumeData.map { "\($0.count) bytes" } ?? "nil")")
        output.append("[Result]: \(result)")
        output.append("[Timeline]: \(timeline.debugDescription)")
        return output.joined(separator: "\n")
    }
}
