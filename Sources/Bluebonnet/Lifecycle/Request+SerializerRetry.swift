import Foundation

// Alamofire's serializer retry: a response handler whose serializer fails shows the failure to the request's retrier
// before it delivers. If the retrier retries, the request is sent again and the handler (and those queued after it)
// serialize the new response; if not, the handler delivers its failure, with the retrier's error when it gave one.
// As in Alamofire, this holds for a serializer that only passes on the request's own error too: the retrier is asked
// about that error a second time (a `RetryPolicy` counts retries, so it answers as before; a retrier that counts its
// calls sees both), and a second `.doNotRetryWithError` nests the first answer's `requestRetryFailed` in its own.

extension Request {
    /// A response handler that serializes, and may be run again after a retry: it queues itself back through the
    /// machine when its serializer fails and a retrier is there to ask.
    final class SerializingHandler<Response>: @unchecked Sendable {
        // @unchecked: immutable; each response it makes is handed over once (the value may be JSON's `Any`).
        private weak var request: Request?
        private let inlineSafe: Bool
        private let serialize: @Sendable () -> Response
        private let failure: @Sendable (Response) -> AFError?
        private let replacingError: @Sendable (Response, AFError) -> Response
        private let deliver: @Sendable (Response) -> Void

        init(
            request: Request, inlineSafe: Bool, serialize: @escaping @Sendable () -> Response,
            failure: @escaping @Sendable (Response) -> AFError?,
            replacingError: @escaping @Sendable (Response, AFError) -> Response,
            deliver: @escaping @Sendable (Response) -> Void
        ) {
            self.request = request
            self.inlineSafe = inlineSafe
            self.serialize = serialize
            self.failure = failure
            self.replacingError = replacingError
            self.deliver = deliver
        }

        var handler: RequestStateMachine.ResponseHandler {
            RequestStateMachine.ResponseHandler(inlineSafe: inlineSafe) { [self] in run() }
        }

        private func run() {
            let response = UncheckedBox(serialize())
            guard let error = failure(response.value), let request,
                request.mutableState.write({ $0.machine.handlerFailed(rerun: handler) })
            else {
                deliver(response.value)
                return
            }
            request.askRetrier(aboutHandlerFailure: error) { [self] result in
                switch result {
                case .retry, .retryWithDelay:
                    break
                case .doNotRetry:
                    deliver(response.value)
                case let .doNotRetryWithError(retryError):
                    deliver(
                        replacingError(
                            response.value,
                            .requestRetryFailed(retryError: retryError, originalError: error)))
                }
            }
        }
    }

    /// Asks the retrier, off the event loop, about a response handler's failure; `settled` delivers the handler's
    /// response (when not retrying) before the queue goes on or the request is sent again.
    fileprivate func askRetrier(
        aboutHandlerFailure error: AFError, settled: @escaping @Sendable (RetryResult) -> Void
    ) {
        underlyingQueue.async { [self] in
            Confinement.assertOffEventLoop("A request retrier")
            guard let retrier, let session else {
                decideHandlerRetry(.doNotRetry, settled: settled)
                return
            }
            retrier.retry(self, for: session, dueTo: error) { [self] result in
                decideHandlerRetry(result, settled: settled)
            }
        }
    }

    private func decideHandlerRetry(_ result: RetryResult, settled: @escaping @Sendable (RetryResult) -> Void) {
        let retries: Bool
        switch result {
        case .retry, .retryWithDelay: retries = true
        case .doNotRetry, .doNotRetryWithError: retries = false
        }
        // Delivered before the handlers after it run, in their order.
        if !retries { settled(result) }
        let action = mutableState.write { state -> RequestStateMachine.Action in
            let action = state.machine.didDecideHandlerRetry(result)
            if case .retry = action { state.forgetAttempt() }
            return action
        }
        guard action.isTaken else { return }
        if case .retry = action { lifecycleDelegate?.requestDidRestart(self) }
        perform(action)
    }
}
