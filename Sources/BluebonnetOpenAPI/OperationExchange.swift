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
        let gate = HeadGate()
        let deadline = timeout.map { OperationDeadline(timeout: $0, request: request) }
        if validatesResponses { request.validate() }
        let prediction = retriesStatuses ? self.prediction : RetryPrediction([])
        // Runs for every response head that would be delivered, after the others; the first that passes is the one.
        // From the head itself: no `HTTPURLResponse` is made (FoundationNetworking's costs 10–15k instructions a field).
        request.validate(head: { [weak request] urlRequest, head in
            if !prediction.isEmpty, let request,
                prediction.willRetry(
                    status: head.statusCode, retryAfter: head.value(for: "Retry-After"), method: urlRequest?.httpMethod,
                    retryCount: request.retryCount)
            {
                return .failure(RetryableStatus(statusCode: head.statusCode))
            }
            gate.resolve(.head(head))
            return .success(())
        })
        // The body's reader is the first handler, which starts the request: no chunk can come before it.
        let reader = ResponseBodyReader(
            request: request,
            iterator: request.streamTask().streamingData(automaticallyCancelling: false).makeAsyncIterator(),
            deadline: deadline)
        // The end, for a request that never delivers a head (a failure, a cancellation, a status left to retry).
        _ = request.responseStream(on: .global()) { stream in
            if let completion = stream.completion {
                gate.resolve(.ended(completion.head, completion.error))
            }
        }
        _ = request.resume()
        let outcome = await withTaskCancellationHandler {
            await gate.wait()
        } onCancel: {
            _ = request.cancel()
        }
        switch outcome {
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

/// Where an operation stands before its response is handed over: waiting, or resolved by the first head that passes
/// or by the request's end.
final class HeadGate: Sendable {
    enum Outcome: Sendable {
        case head(ResponseHead)
        case ended(ResponseHead?, AFError?)
    }

    private enum State {
        case waiting(CheckedContinuation<Outcome, Never>?)
        case resolved(Outcome)
    }

    private let state = Mutex(State.waiting(nil))

    /// Resolves the gate; only the first outcome counts.
    func resolve(_ outcome: Outcome) {
        let waiter = state.withLock { state -> CheckedContinuation<Outcome, Never>?? in
            guard case let .waiting(waiter) = state else { return nil }
            state = .resolved(outcome)
            return .some(waiter)
        }
        if case let .some(waiter?) = waiter { waiter.resume(returning: outcome) }
    }

    func wait() async -> Outcome {
        await withCheckedContinuation { continuation in
            let resolved = state.withLock { state -> Outcome? in
                switch state {
                case let .resolved(outcome): return outcome
                case .waiting:
                    state = .waiting(continuation)
                    return nil
                }
            }
            if let resolved { continuation.resume(returning: resolved) }
        }
    }
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
