import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request whose response body is handed to stream handlers chunk by chunk as it arrives, with back-pressure: when
/// handlers fall behind by more than `highWater` bytes, the connection stops being read until they catch up.
public final class DataStreamRequest: Request, @unchecked Sendable {
    // @unchecked: the stream's own state is behind `Protected`; the rest is immutable.

    /// Closure type executed when new stream events are received; an error it throws is captured as the request's
    /// error and, with `automaticallyCancelOnStreamError`, cancels the request.
    public typealias Handler<Success, Failure: Error> = @Sendable (Stream<Success, Failure>) throws -> Void

    /// A stream event, with a token to cancel the request from inside the handler.
    public struct Stream<Success, Failure: Error> {
        /// The event.
        public let event: Event<Success, Failure>
        /// Cancels the request.
        public let token: CancellationToken

        /// Cancels the request that produced this event.
        public func cancel() {
            token.cancel()
        }

        /// The chunk's result, when the event is one (`Event.stream`).
        public var result: Result<Success, Failure>? {
            if case let .stream(result) = event { return result }
            return nil
        }

        /// The chunk's value, when the event is a chunk that serialized.
        public var value: Success? {
            if case let .success(value)? = result { return value }
            return nil
        }

        /// The chunk's error, when the event is a chunk that failed to serialize.
        public var error: Failure? {
            if case let .failure(error)? = result { return error }
            return nil
        }

        /// How the request ended, when the event is the last one (`Event.complete`).
        public var completion: Completion? {
            if case let .complete(completion) = event { return completion }
            return nil
        }
    }

    /// What a stream handler is told: a chunk's result, or the end.
    public enum Event<Success, Failure: Error> {
        /// A chunk, serialized.
        case stream(Result<Success, Failure>)
        /// The request ended; always the last event.
        case complete(Completion)
    }

    /// How the request ended.
    public struct Completion {
        /// The last `URLRequest` sent.
        public let request: URLRequest?
        /// The response, if one arrived; made from the head the first time something reads it.
        public var response: HTTPURLResponse? { head?.httpResponse }
        /// URLSession's metrics of the last attempt: always `nil` on Linux, as with Alamofire there. Bluebonnet's
        /// measurements are `taskMetrics`.
        public let metrics: URLSessionTaskMetrics?
        /// What Bluebonnet measured of the last attempt.
        public let taskMetrics: RequestTaskMetrics?
        /// The error that ended the request, if any.
        public let error: AFError?
        /// The head the response is made from.
        @_spi(OpenAPITransport) public let head: ResponseHead?

        init(request: URLRequest?, head: ResponseHead?, taskMetrics: RequestTaskMetrics?, error: AFError?) {
            self.request = request
            self.head = head
            metrics = nil
            self.taskMetrics = taskMetrics
            self.error = error
        }
    }

    /// Cancels a `DataStreamRequest` from a stream handler, without keeping it alive.
    public struct CancellationToken: Sendable {
        weak var request: DataStreamRequest?

        init(_ request: DataStreamRequest) {
            self.request = request
        }

        /// Cancels the request; its handlers' completion says `explicitlyCancelled` even when the response had
        /// already ended, since they had not been told so, as in Alamofire.
        public func cancel() {
            request?.cancelFromHandler()
        }
    }

    /// A closure used to validate the response head before any of the body is handed to handlers. It runs on the
    /// request's `underlyingQueue`.
    public typealias Validation = @Sendable (_ request: URLRequest?, _ response: HTTPURLResponse) -> ValidationResult

    /// A validation of the response head itself, which makes no `HTTPURLResponse` unless it reads one.
    @_spi(OpenAPITransport) public typealias HeadValidation =
        @Sendable (_ request: URLRequest?, _ head: ResponseHead) -> ValidationResult

    /// Bytes handed to handlers and not yet handled before the connection stops being read.
    static let highWater = 1024 * 1024
    /// Bytes not yet handled below which reading resumes.
    static let lowWater = 256 * 1024

    /// The `URLRequestConvertible` the request is made from.
    public let convertible: any URLRequestConvertible
    /// Whether a chunk that fails to serialize cancels the request (its handlers then complete with
    /// `explicitlyCancelled`). A handler that throws always cancels it, with the error it threw, as in Alamofire.
    public let automaticallyCancelOnStreamError: Bool

    /// One registered handler: where it runs and what it does with a chunk; `done` is called once the chunk has been
    /// dealt with, which is what lets the connection be read again. With no queue, `deliver` runs where the chunk
    /// arrives (an event loop included), so it may only do bookkeeping: the library's own buffers, never user code.
    struct Consumer: Sendable {
        let queue: DispatchQueue?
        let deliver: @Sendable (_ chunk: Data, _ done: @escaping @Sendable () -> Void) -> Void
        let finish: @Sendable () -> Void
    }

    private enum Phase {
        /// No body yet, or a body whose head passed validation.
        case open
        /// Validators are running: chunks and the end wait.
        case validating(held: [(Data, TransportReadiness)], end: (AFError?, @Sendable (AFError?) -> Void)?)
        /// The head failed validation: every chunk is refused.
        case refused(AFError)
    }

    private struct StreamState {
        var consumers: [Consumer] = []
        var validators: [HeadValidation] = []
        /// Whether every validator is the library's own, cheap and never blocking: then they run where the head
        /// arrives, with no hop to `underlyingQueue` and no chunk held meanwhile.
        var validatorsRunInline = true
        var phase = Phase.open
        var outstandingBytes = 0
        var waiting: [TransportReadiness] = []
        /// The first error a handler threw: it outlives the cancellation it causes.
        var thrownError: AFError?
        /// Whether a handler (or its token) cancelled the request: its completion then says so, even when the response
        /// had ended before.
        var cancelledByHandler = false
    }

    private let streamState = Protected(StreamState())

    init(
        convertible: any URLRequestConvertible,
        upload: StreamUpload? = nil,
        automaticallyCancelOnStreamError: Bool,
        underlyingQueue: DispatchQueue,
        serializationQueue: DispatchQueue,
        eventMonitor: (any EventMonitor)?,
        interceptor: (any RequestInterceptor)?,
        shouldAutomaticallyResume: Bool?,
        context: SessionContext,
        delegate: any RequestLifecycleDelegate
    ) {
        self.convertible = convertible
        self.automaticallyCancelOnStreamError = automaticallyCancelOnStreamError
        // The body streamed up with the request (`Session.streamRequest(_:uploading:interceptor:)`), if any, a fresh
        // stream for each send; the response streams to the request's handlers as it arrives.
        let body: RequestKind.Body =
            upload.map {
                .supplied(.fresh(length: $0.length, isReplayable: $0.isReplayable, makeStream: $0.makeStream))
            } ?? .inURLRequest
        super.init(
            underlyingQueue: underlyingQueue, serializationQueue: serializationQueue, eventMonitor: eventMonitor,
            interceptor: interceptor, shouldAutomaticallyResume: shouldAutomaticallyResume, context: context,
            delegate: delegate, kind: RequestKind(body: body, consumer: .streamed),
            makeURLRequest: { try convertible.asURLRequest() })
    }

    /// Validates the response head with `validation` before any of the body reaches a handler; a failure ends the
    /// request with that error (and asks the retrier, if any).
    ///
    /// - Parameter validation: `Validation` closure used to validate the response.
    /// - Returns: The instance.
    @discardableResult
    public func validate(_ validation: @escaping Validation) -> Self {
        validate(head: { request, head in validation(request, head.httpResponse) })
    }

    /// Validates the response head with `validation`, which reads the head's status and fields: no `HTTPURLResponse`
    /// is made for it. As `validate(_:)` otherwise.
    ///
    /// - Parameter validation: The check.
    /// - Returns: The instance.
    @_spi(OpenAPITransport) @discardableResult
    public func validate(head validation: @escaping HeadValidation) -> Self {
        validate(head: validation, runsInline: false)
    }

    /// Validates the response head with `validation`; `runsInline` says it is library code that only reads the head
    /// (no user code, no blocking), which may run where the head arrives, an event loop included.
    @_spi(OpenAPITransport) @discardableResult
    public func validate(head validation: @escaping HeadValidation, runsInline: Bool) -> Self {
        streamState.write {
            $0.validators.append(validation)
            if !runsInline { $0.validatorsRunInline = false }
        }
        return self
    }

    /// Validates that the response has a status code in the specified sequence.
    ///
    /// - Parameter acceptableStatusCodes: `Sequence` of acceptable response status codes.
    /// - Returns: The instance.
    @discardableResult
    public func validate<S: Sequence & Sendable>(statusCode acceptableStatusCodes: S) -> Self
    where S.Iterator.Element == Int {
        validate(head: { _, head in
            ResponseValidator.validate(statusCode: head.statusCode, acceptable: acceptableStatusCodes)
        })
    }

    /// Validates that the response has a content type in the specified sequence.
    ///
    /// - Parameter acceptableContentTypes: The acceptable content types, which may specify wildcard types and/or subtypes.
    /// - Returns: The instance.
    @discardableResult
    public func validate<S: Sequence & Sendable>(
        contentType acceptableContentTypes: @escaping @Sendable @autoclosure () -> S
    ) -> Self where S.Iterator.Element == String {
        // A stream's body is yet to come, so the head is checked as if a body will follow.
        validate(head: { _, head in
            ResponseValidator.validate(
                contentType: Array(acceptableContentTypes()), header: head.value(for: "Content-Type"), data: Data([0]))
        })
    }

    /// Validates that the response has a status code in `200..<300` and a content type matching the request's
    /// `Accept` header (any type when there is none).
    ///
    /// - Returns: The instance.
    @discardableResult
    public func validate() -> Self {
        // Two validators, as Alamofire's: a monitor hears of the status check and, when it passed, the content type's.
        validate(
            head: { _, head in ResponseValidator.validate(statusCode: head.statusCode, acceptable: 200..<300) },
            runsInline: true
        )
        .validate(
            head: { request, head in
                ResponseValidator.validate(
                    contentType: ResponseValidator.acceptableContentTypes(for: request),
                    header: head.value(for: "Content-Type"), data: Data([0]))
            }, runsInline: true)
    }

    /// Registers a consumer of chunks and of the end; the end comes once the request finished, after every chunk.
    func addConsumer(_ consumer: Consumer) {
        streamState.write { $0.consumers.append(consumer) }
        // The end is queued as a response handler: it runs once the request finished, and the first one resumes a
        // request that starts immediately.
        appendResponseSerializer(inlineSafe: true) { consumer.finish() }
    }

    /// A handler threw: its error is the request's, and the request is cancelled, as in Alamofire.
    func handlerDidThrow(_ error: AFError) {
        streamState.write { state in
            if state.thrownError == nil { state.thrownError = error }
        }
        recordValidationError(error)
        cancelFromHandler()
    }

    /// A chunk failed to serialize (its handler was given the failure): the request is cancelled when it says so.
    func serializationDidFail() {
        if automaticallyCancelOnStreamError { cancelFromHandler() }
    }

    /// Cancels for a handler, which has not yet been told how the request ended.
    func cancelFromHandler() {
        streamState.write { $0.cancelledByHandler = true }
        cancel()
    }

    /// The request's end, as handlers are told it: a handler's error rather than the cancellation it caused, and a
    /// handler's cancellation even when the response ended before it, as in Alamofire.
    func completion() -> Completion {
        let state = mutableState.read()
        let (thrown, cancelledByHandler) = streamState.write { ($0.thrownError, $0.cancelledByHandler) }
        var error = state.error
        if let thrown, error == nil || error?.isExplicitlyCancelledError == true {
            error = thrown
        } else if error == nil, cancelledByHandler {
            error = .explicitlyCancelled
        }
        return Completion(
            request: state.requests.last, head: state.head, taskMetrics: state.metrics.last, error: error)
    }

    // MARK: - The body

    /// The body of a final response that was held in memory because it might have been followed (a `401` a
    /// credential might answer, a redirect the handler declined): validated and handed to the handlers as a streamed
    /// body is, so they see every response the request delivers. It runs where the follower decided, off the event
    /// loops, before the request is validated and finished: a failure is the request's error, which the retrier is
    /// asked about, and the body reaches the handlers' queues ahead of the end.
    func responseBodyWasHeld(_ body: Data?) {
        guard let body, let head = mutableState.read({ $0.error == nil ? $0.head : nil }) else { return }
        let validators = streamState.write { state -> [HeadValidation] in
            state.phase = .open
            return state.validators
        }
        if let failure = validate(head, with: validators) {
            streamState.write { $0.phase = .refused(failure) }
            recordValidationError(failure)
            return
        }
        if !body.isEmpty { deliver(body, readiness: TransportReadiness(settle: { _ in })) }
    }

    private func deliver(_ chunk: Data, readiness: TransportReadiness) {
        tellDidReceiveData(chunk)
        let (consumers, blocked) = streamState.write { state -> ([Consumer], Bool) in
            state.outstandingBytes += chunk.count * state.consumers.count
            let blocked = state.outstandingBytes > Self.highWater
            if blocked { state.waiting.append(readiness) }
            return (state.consumers, blocked)
        }
        for consumer in consumers {
            if let queue = consumer.queue {
                queue.async { [self] in
                    consumer.deliver(chunk) { [self] in didHandle(chunk.count) }
                }
            } else {
                consumer.deliver(chunk) { [self] in didHandle(chunk.count) }
            }
        }
        // A blocked chunk is released by `didHandle` once the handlers catch up.
        if !blocked { readiness.ready() }
    }

    private func didHandle(_ count: Int) {
        let released = streamState.write { state -> [TransportReadiness] in
            state.outstandingBytes -= count
            guard state.outstandingBytes <= Self.lowWater else { return [] }
            defer { state.waiting = [] }
            return state.waiting
        }
        for readiness in released { readiness.ready() }
    }

    /// Runs `validators` on `head` in order, telling the monitor of each: the first failure, or `nil`. The
    /// `HTTPURLResponse` is made only for a validator or a monitor that is handed one.
    private func validate(_ head: ResponseHead, with validators: [HeadValidation], inline: Bool = false) -> AFError? {
        if !inline { Confinement.assertOffEventLoop("A stream request's validator") }
        for validator in validators {
            let result = validator(lastRequest, head)
            tellMonitor(.other) {
                $0.request(self, didValidateRequest: lastRequest, response: head.httpResponse, withResult: result)
            }
            if case let .failure(error) = result {
                return error.asAFError(or: .responseValidationFailed(reason: .customValidationFailed(error: error)))
            }
        }
        return nil
    }

    /// Runs the validators on `underlyingQueue`, then lets held chunks through or refuses them.
    private func runStreamValidators(_ validators: [HeadValidation], head: ResponseHead) {
        underlyingQueue.async { [self] in
            let failure = validate(head, with: validators)
            let (held, end) = streamState.write {
                state -> ([(Data, TransportReadiness)], (AFError?, @Sendable (AFError?) -> Void)?) in
                guard case let .validating(held, end) = state.phase else { return ([], nil) }
                state.phase = failure.map { .refused($0) } ?? .open
                return (held, end)
            }
            for (chunk, readiness) in held {
                if let failure { readiness.fail(failure) } else { deliver(chunk, readiness: readiness) }
            }
            if let (error, completion) = end { completion(error == nil ? failure : nil) }
        }
    }
}

extension DataStreamRequest: ResponseBodyConsumer {
    func responseBodyWillBegin(_ head: ResponseHead) {
        let (validators, inline) = streamState.write { state -> ([HeadValidation], Bool) in
            let inline = state.validatorsRunInline
            state.phase = state.validators.isEmpty || inline ? .open : .validating(held: [], end: nil)
            return (state.validators, inline)
        }
        if validators.isEmpty { return }
        if inline {
            // Before any chunk: the engine hands the body over only after this returns.
            if let failure = validate(head, with: validators, inline: true) {
                streamState.write { $0.phase = .refused(failure) }
            }
        } else {
            runStreamValidators(validators, head: head)
        }
    }

    func consume(_ chunk: Data, readiness: TransportReadiness) {
        let refusal = streamState.write { state -> (AFError?, Bool) in
            switch state.phase {
            case .open: return (nil, false)
            case let .refused(error): return (error, false)
            case .validating(var held, let end):
                held.append((chunk, readiness))
                state.phase = .validating(held: held, end: end)
                return (nil, true)
            }
        }
        if let error = refusal.0 { readiness.fail(error); return }
        if refusal.1 { return }
        deliver(chunk, readiness: readiness)
    }

    func responseBodyDidEnd(error: AFError?, completion: @escaping @Sendable (AFError?) -> Void) {
        let outcome = streamState.write { state -> AFError?? in
            switch state.phase {
            case .open: return .some(nil)
            case let .refused(refusal): return .some(error == nil ? refusal : nil)
            case let .validating(held, _):
                state.phase = .validating(held: held, end: (error, completion))
                return .none
            }
        }
        if let outcome { completion(outcome) }
    }
}

/// A stream shows its response head to `onHTTPResponse` before any of its body streams, as in Alamofire.
extension DataStreamRequest: HTTPResponseHandling {}
