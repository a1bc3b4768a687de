import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `Result` whose failure is always `AFError`.
public typealias AFResult<Success> = Result<Success, AFError>
/// A `DataResponse` whose failure is always `AFError`.
public typealias AFDataResponse<Success> = DataResponse<Success, AFError>
/// Alamofire 4's unserialized response (`DefaultDataResponse`): the request, response, data, error and timeline,
/// with nothing parsed.
public typealias DefaultDataResponse = DataResponse<Data?, AFError>

/// Everything known about a finished `DataRequest`, with its serialized result.
public struct DataResponse<Success, Failure: Error> {
    /// The URL request sent to the server (the last hop).
    public let request: URLRequest?
    /// The server's response to the URL request.
    public var response: HTTPURLResponse? { source?.response }
    /// Where `response` comes from: a head the engine received (made into an `HTTPURLResponse` only when read), or the
    /// response the caller gave.
    let source: ResponseSource?
    /// The data returned by the server.
    public let data: Data?
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

    /// Creates a `DataResponse` instance with the specified parameters derived from the response serialization.
    ///
    /// - Parameters:
    ///   - request:               The `URLRequest` sent to the server.
    ///   - response:              The `HTTPURLResponse` from the server.
    ///   - data:                  The `Data` returned by the server.
    ///   - metrics:               URLSession's metrics, if you have them.
    ///   - serializationDuration: The duration taken by serialization.
    ///   - result:                The `Result` of response serialization.
    ///   - timeline:              The times of the request's life. `Request.Timeline()` by default.
    ///   - taskMetrics:           What Bluebonnet measured of the request's last attempt. `nil` by default.
    public init(
        request: URLRequest?,
        response: HTTPURLResponse?,
        data: Data?,
        metrics: URLSessionTaskMetrics?,
        serializationDuration: TimeInterval,
        result: Result<Success, Failure>,
        timeline: Request.Timeline = Request.Timeline(),
        taskMetrics: RequestTaskMetrics? = nil
    ) {
        self.init(
            request: request, source: response.map(ResponseSource.response), data: data, metrics: metrics,
            taskMetrics: taskMetrics,
            serializationDuration: serializationDuration, result: result, timeline: timeline)
    }

    /// Creates a `DataResponse` of a response head, whose `HTTPURLResponse` is made when first read.
    init(
        request: URLRequest?,
        source: ResponseSource?,
        data: Data?,
        metrics: URLSessionTaskMetrics? = nil,
        taskMetrics: RequestTaskMetrics?,
        serializationDuration: TimeInterval,
        result: Result<Success, Failure>,
        timeline: Request.Timeline
    ) {
        self.request = request
        self.source = source
        self.data = data
        self.metrics = metrics
        self.taskMetrics = taskMetrics
        self.serializationDuration = serializationDuration
        self.result = result
        self.timeline = timeline
    }

    /// Creates a `DataResponse` without metrics.
    ///
    /// - Parameters:
    ///   - request:               The `URLRequest` sent to the server.
    ///   - response:              The `HTTPURLResponse` from the server.
    ///   - data:                  The `Data` returned by the server.
    ///   - serializationDuration: The duration taken by serialization.
    ///   - result:                The `Result` of response serialization.
    ///   - timeline:              The times of the request's life. `Request.Timeline()` by default.
    public init(
        request: URLRequest?,
        response: HTTPURLResponse?,
        data: Data?,
        serializationDuration: TimeInterval,
        result: Result<Success, Failure>,
        timeline: Request.Timeline = Request.Timeline()
    ) {
        self.init(
            request: request, response: response, data: data, metrics: nil,
            serializationDuration: serializationDuration,
            result: result, timeline: timeline)
    }
}

extension DataResponse: Sendable where Success: Sendable {}

extension DataResponse {
    /// Evaluates the specified closure when the result of this `DataResponse` is a success, passing the unwrapped
    /// result value as a parameter.
    ///
    /// - Parameter transform: A closure that takes the success value of the `result` instance.
    /// - Returns: A `DataResponse` instance wrapping the result of the transform.
    public func map<NewSuccess>(_ transform: (Success) -> NewSuccess) -> DataResponse<NewSuccess, Failure> {
        DataResponse<NewSuccess, Failure>(
            request: request, source: source, data: data, metrics: metrics, taskMetrics: taskMetrics,
            serializationDuration: serializationDuration, result: result.map(transform),
            timeline: timeline)
    }

    /// Evaluates the given closure when the result of this `DataResponse` is a success, passing the unwrapped result
    /// value as a parameter; an error it throws becomes the failure.
    ///
    /// - Parameter transform: A throwing closure that takes the success value of the `result` instance.
    /// - Returns: A success or failure `DataResponse` depending on the result of the transform.
    public func tryMap<NewSuccess>(_ transform: (Success) throws -> NewSuccess) -> DataResponse<NewSuccess, any Error> {
        let mapped: Result<NewSuccess, any Error>
        switch result {
        case let .success(value):
            do { mapped = .success(try transform(value)) } catch { mapped = .failure(error) }
        case let .failure(error):
            mapped = .failure(error)
        }
        return DataResponse<NewSuccess, any Error>(
            request: request, source: source, data: data, metrics: metrics, taskMetrics: taskMetrics,
            serializationDuration: serializationDuration, result: mapped,
            timeline: timeline)
    }

    /// Evaluates the specified closure when the result is a success, using the `Result` it returns.
    ///
    /// - Parameter transform: A closure that takes the success value and returns a new `Result`.
    /// - Returns: A `DataResponse` with the returned `Result`.
    public func flatMap<NewSuccess>(_ transform: (Success) -> Result<NewSuccess, Failure>) -> DataResponse<
        NewSuccess, Failure
    > {
        DataResponse<NewSuccess, Failure>(
            request: request, source: source, data: data, metrics: metrics, taskMetrics: taskMetrics,
            serializationDuration: serializationDuration, result: result.flatMap(transform),
            timeline: timeline)
    }

    /// Evaluates the specified closure when the `DataResponse` is a failure, passing the unwrapped error as a parameter.
    ///
    /// - Parameter transform: A closure that takes the error of the instance.
    /// - Returns: A `DataResponse` instance containing the result of the transform.
    public func mapError<NewFailure: Error>(_ transform: (Failure) -> NewFailure) -> DataResponse<Success, NewFailure> {
        DataResponse<Success, NewFailure>(
            request: request, source: source, data: data, metrics: metrics, taskMetrics: taskMetrics,
            serializationDuration: serializationDuration, result: result.mapError(transform),
            timeline: timeline)
    }

    /// Evaluates the specified closure when the `DataResponse` is a failure; an error it throws becomes the failure.
    ///
    /// - Parameter transform: A throwing closure that takes the error of the instance.
    /// - Returns: A `DataResponse` instance containing the result of the transform.
    public func tryMapError<NewFailure: Error>(_ transform: (Failure) throws -> NewFailure) -> DataResponse<
        Success, any Error
    > {
        let mapped: Result<Success, any Error>
        switch result {
        case let .success(value):
            mapped = .success(value)
        case let .failure(error):
            do { mapped = .failure(try transform(error)) } catch { mapped = .failure(error) }
        }
        return DataResponse<Success, any Error>(
            request: request, source: source, data: data, metrics: metrics, taskMetrics: taskMetrics,
            serializationDuration: serializationDuration, result: mapped,
            timeline: timeline)
    }
}

extension DataResponse: CustomStringConvertible, CustomDebugStringConvertible {
    /// The textual representation used when written to an output stream, which includes whether the result was a
    /// success or failure.
    public var description: String {
        "\(result)"
    }

    /// Alamofire's layout: `[Request]:`, `[Response]:` with status and headers, `[Data]: N bytes`, `[Result]:` and
    /// `[Timeline]:`. URLs are shown without their user and password.
    public var debugDescription: String {
        var output: [String] = []
        if let request, let url = request.url {
            output.append("[Request]: \(request.httpMethod ?? "GET") \(url.absoluteStringWithoutUserInfo)")
        } else {
            output.append("[Request]: nil")
        }
        if let response {
            output.append("[Response]: \(response.statusCode) \(response.url?.absoluteStringWithoutUserInfo ?? "")")
            for header in response.headers.sorted() {
                output.append("    \(header.name): \(header.value)")
            }
        } else {
            output.append("[Response]: nil")
        }
        output.append("[Data]: \(data?.count ?? 0) bytes")
        output.append("[Result]: \(result)")
        output.append("[Timeline]: \(timeline.debugDescription)")
        return output.joined(separator: "\n")
    }
}
