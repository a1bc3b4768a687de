@_spi(OpenAPITransport) import Bluebonnet
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One operation on the wire: waits for the response head that will be delivered (not one a retry will replace), then
/// hands its body over as an `HTTPBody` read from the request's stream.
struct OperationExchange: Sendable {
    let request: DataStreamRequest
    let timeout: Duration?
    let validatesResponses: Bool
    /// Whether a retryable status may be offered to the retrier: the request body can be sent again.
    let retriesStatuses: Bool
    let prediction: RetryPrediction

    /// The response, once its head passed: `method` decides whether a body follows.
    func response(method: HTTPRequest.Method) async throws -> (HTTPResponse, HTTPBody?) {
        let request = self.request
        let channel = ResponseChannel()
        let deadline = timeout.map { OperationDeadline(timeout: $0, request: request) }
        if validatesResponses { request.validate() }
        let prediction = retriesStatuses ? self.prediction : RetryPrediction([])
        // Runs for every response head that would be delivered, after the others; the first that passes is the one.
        // From the head itself: no `HTTPURLResponse` is made (FoundationNetworking's costs 10–15k instructions a field).
        // `unowned`: the request holds the closure and is the only one to call it (a weak reference would cost a side
        // table). The library's own code, cheap and never blocking: it runs where the head arrives.
        request.validate(
            head: { [unowned request] urlRequest, head in
                if !prediction.isEmpty,
                    prediction.willRetry(
                        status: head.statusCode, retryAfter: head.value(for: "Retry-After"),
                        method: urlRequest?.httpMethod, retryCount: request.retryCount)
                {
                    return .failure(RetryableStatus(statusCode: head.statusCode))
                }
                channel.headPassed(head)
                return .success(())
            }, runsInline: true)
        // The body goes straight into the channel, which the end also reaches: a request that never delivers a head
        // (a failure, a cancellation, a status left to retry) ends the wait below.
        request.receiveBody(
            { chunk, taken in channel.receive(chunk, taken: taken) },
            end: { completion in channel.end(head: completion.head, error: completion.error) })
        let reader = ResponseBodyReader(channel: channel, request: request, deadline: deadline)
        _ = request.resume()
        let arrival = await withTaskCancellationHandler {
            await channel.arrival()
        } onCancel: {
            _ = request.cancel()
        }
        switch arrival {
        case let .head(received):
            let head = Self.head(of: received)
            if method == .head || received.statusCode == 204 || received.statusCode == 304 {
                reader.releaseWithoutCancelling()
                return (head, nil)
            }
            let length: HTTPBody.Length =
                if received.value(for: "Content-Encoding") == nil,
                    let declared = received.value(for: "Content-Length").flatMap(Int64.init)
                {
                    .known(declared)
                } else {
                    .unknown
                }
            return (head, HTTPBody(ResponseBodySequence(reader: reader), length: length, iterationBehavior: .single))
        case let .ended(response, error):
            reader.releaseWithoutCancelling()
            deadline?.stop()
            // A status left to the retrier that it declined after all: the response is delivered, without its body.
            if let response, let error, Self.isRetryableStatus(error) {
                return (Self.head(of: response), nil)
            }
            if let error { throw deadline?.mapped(error) ?? error }
            guard let response else { throw AFError.explicitlyCancelled }
            return (Self.head(of: response), nil)
        }
    }

    /// Whether `error` is the validation failure that offered a status to the retrier, or a retry of it that failed.
    static func isRetryableStatus(_ error: AFError) -> Bool {
        if case let .requestRetryFailed(_, original) = error {
            return original.asAFError.map(isRetryableStatus) ?? false
        }
        return error.underlyingError is RetryableStatus
    }

    /// The `HTTPResponse` of the head as received: its status and fields in order; a field name HTTP does not allow is
    /// left out.
    static func head(of received: ResponseHead) -> HTTPResponse {
        var fields = HTTPFields()
        fields.reserveCapacity(received.fields.count)
        for field in received.fields {
            guard let name = HTTPField.Name(field.name) else { continue }
            fields.append(HTTPField(name: name, value: field.value))
        }
        return HTTPResponse(status: .init(code: received.statusCode), headerFields: fields)
    }

}

/// The validation failure that offers a retryable status to the retrier.
struct RetryableStatus: Error, CustomStringConvertible {
    let statusCode: Int

    var description: String { "status \(statusCode), offered to the retrier" }
}

/// An operation's total deadline: once it passes, the request is cancelled and its cancellation reads as a timeout.
final class OperationDeadline: Sendable {
    private let passed = Mutex(false)
    private let timer = Mutex<Task<Void, Never>?>(nil)

    init(timeout: Duration, request: DataStreamRequest) {
        let task = Task { [weak self] in
            do {
                try await Task.sleep(for: timeout)
            } catch {
                return
            }
            guard let self else { return }
            passed.withLock { $0 = true }
            _ = request.cancel()
        }
        timer.withLock { $0 = task }
    }

    /// The operation ended: the timer is no longer needed.
    func stop() {
        timer.withLock { $0 }?.cancel()
    }

    /// `error` as the caller sees it: a cancellation the deadline caused is a timeout.
    func mapped(_ error: AFError) -> AFError {
        guard error.isExplicitlyCancelledError, passed.withLock({ $0 }) else { return error }
        return .sessionTaskFailed(error: URLError(.timedOut))
    }
}
