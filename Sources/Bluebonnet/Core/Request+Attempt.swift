import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

// An attempt: make the `URLRequest`, adapt it, send each hop, follow redirects, and ask the retrier about failures.
// Engine callbacks arrive on NIO event loops; they only update the state machine, and anything that runs user code
// (redirect handlers, adapters, retriers, validators before a retry decision) hops to `underlyingQueue` first.

extension Request {
    // MARK: - Making the URLRequest

    /// Makes the `URLRequest` on `requestQueue`, unless the first resume already did.
    func createURLRequestOnRequestQueue() {
        context.requestQueue.async { [self] in
            if mutableState.write({ $0.machine.claimCreation() }) { createURLRequest() }
        }
    }

    /// Makes the `URLRequest` from the request's convertible, then starts it if it is resumed. The caller has moved
    /// the machine to `creatingURLRequest`.
    func createURLRequest() {
        do {
            let urlRequest = try makeURLRequest()
            try urlRequest.validate()
            didCreateInitialURLRequest(urlRequest)
        } catch {
            didFailToCreateURLRequest(with: error.asAFError(or: .createURLRequestFailed(error: error)))
        }
    }

    /// Called when the `URLRequest` could not be made.
    func didFailToCreateURLRequest(with error: AFError) {
        eventMonitor?.request(self, didFailToCreateURLRequestWithError: error)
        failBeforeExecuting(with: error)
    }

    /// The `URLRequest` (or the upload's body) could not be made, or the adapter failed: the retrier decides when
    /// there is one, else the request ends.
    func failBeforeExecuting(with error: AFError) {
        let hasRetrier = retrier != nil
        let action = mutableState.write { state -> RequestStateMachine.FailureAction in
            let action = state.machine.didFailBeforeExecuting(with: error, hasRetrier: hasRetrier)
            if case .ignore = action { return action }
            state.error = error
            return action
        }
        switch action {
        case .ignore: return
        case .complete: didReceiveBody(nil); finish(error: error)
        // An adapter may call back from any thread, an event loop included, so the retrier is reached by a hop.
        case .askRetrier: underlyingQueue.async { [self] in askRetrier(about: error) }
        }
    }

    func notify(
        _ urlRequest: URLRequest,
        urlHandlers: [(queue: DispatchQueue, handler: @Sendable (URLRequest) -> Void)],
        cURLHandlers: [(queue: DispatchQueue, handler: @Sendable (String) -> Void)]
    ) {
        for (queue, handler) in urlHandlers { queue.async { handler(urlRequest) } }
        guard !cURLHandlers.isEmpty else { return }
        let curl = cURLDescription()
        for (queue, handler) in cURLHandlers { queue.async { handler(curl) } }
    }

    // MARK: - Adapting

    /// Starts an attempt whose `URLRequest` is made: through the adapter when there is one.
    func beginAttempt(_ start: RequestStateMachine.AttemptStart, with urlRequest: URLRequest) {
        switch start {
        case .execute: execute(urlRequest)
        case .adapt: adapt(urlRequest)
        }
    }

    private func adapt(_ urlRequest: URLRequest) {
        guard let adapter, let session else {
            failBeforeExecuting(with: .sessionDeinitialized)
            return
        }
        let state = RequestAdapterState(requestID: id, session: session)
        adapter.adapt(urlRequest, using: state) { [self] result in
            let adapted: URLRequest
            do {
                adapted = try result.get()
                try adapted.validate()
            } catch {
                let failure = AFError.requestAdaptationFailed(error: error)
                eventMonitor?.request(self, didFailToAdaptURLRequest: urlRequest, withError: failure)
                failBeforeExecuting(with: failure)
                return
            }
            let proceed = mutableState.write { state -> Bool in
                guard state.machine.didAdapt() else { return false }
                state.requests.append(adapted)
                return true
            }
            guard proceed else { return }
            eventMonitor?.request(self, didAdaptInitialRequest: urlRequest, to: adapted)
            execute(adapted)
        }
    }

    // MARK: - Sending a hop

    /// Sends one hop. The machine is in `executing` with no task yet.
    func execute(_ urlRequest: URLRequest) {
        let now = Timeline.now()
        let (deadline, hop, firstURL, ownLimit) = mutableState.write { state -> (Date?, Int, URL?, Int64??) in
            if state.startTime == nil {
                state.startTime = now
                if let resource = context.resourceTimeout { state.deadline = Date(timeIntervalSinceReferenceDate: now + resource) }
            }
            return (state.deadline, state.redirectCount, state.requests.first?.url, state.maximumResponseSize)
        }
        eventMonitor?.request(self, didCreateURLRequest: urlRequest)
        var prepared: TransportRequest
        do {
            // The session's credentials were set for the origin the request starts on; a redirect elsewhere
            // goes without them, as the redirect rules already stripped the request's own.
            var sameOrigin = hop == 0
            if !sameOrigin, let firstURL, let url = urlRequest.url { sameOrigin = RedirectRules.sameOrigin(firstURL, url) }
            prepared = try context.transportRequest(for: urlRequest, deadline: deadline, sendsSessionCredentials: sameOrigin,
                                                    maximumBodySize: ownLimit ?? context.maximumResponseSize)
            prepared.body = try uploadBody(for: urlRequest, hop: hop)
            if let body = prepared.body { didStartSendingBody(length: body.length) }
        } catch {
            hopDidComplete(.failure(error.asAFError(or: .createURLRequestFailed(error: error))), body: nil)
            return
        }
        let task = context.transport.execute(prepared, sink: self)
        switch mutableState.write({ $0.machine.didCreateTask(task) }) {
        case .none: break
        case let .cancel(task): task.cancel()
        case let .suspend(task): task.suspend()
        }
    }

    // MARK: - A hop ended

    /// Weighs a finished hop. Runs on whatever thread the engine completes on: bookkeeping only, user code hops.
    func hopDidComplete(_ outcome: HopResult, body: Data?) {
        let hasRetrier = retrier != nil
        let machineOutcome: RequestStateMachine.HopOutcome
        switch outcome {
        case .success: machineOutcome = .success
        case .redirect: machineOutcome = .redirect
        case let .failure(error): machineOutcome = .failure(error)
        }
        let action = mutableState.write { state -> RequestStateMachine.HopAction in
            let action = state.machine.hopDidComplete(machineOutcome, hasRetrier: hasRetrier)
            switch action {
            case .askRetrier, .fail: if case let .failure(error) = outcome { state.error = error }
            default: break
            }
            return action
        }
        switch action {
        case let .complete(wasCancelled):
            didReceiveBody(wasCancelled ? nil : body)
            finish(error: wasCancelled ? .explicitlyCancelled : nil)
        case .fail:
            guard case let .failure(error) = outcome else { return }
            didReceiveBody(nil)
            finish(error: error)
        case .decideRedirect:
            guard case let .redirect(next, response, handler) = outcome else { return }
            underlyingQueue.async { [self] in decideRedirect(to: next, for: response, using: handler, body: body) }
        case .validateThenMaybeRetry:
            didReceiveBody(body)
            underlyingQueue.async { [self] in validateThenMaybeRetry() }
        case .askRetrier:
            guard case let .failure(error) = outcome else { return }
            didReceiveBody(nil)
            underlyingQueue.async { [self] in askRetrier(about: error) }
        }
    }

    /// What a finished hop produced.
    enum HopResult {
        case success
        /// A redirect to follow, once `handler` agrees.
        case redirect(URLRequest, HTTPURLResponse, any RedirectHandler)
        case failure(AFError)
    }

    private func decideRedirect(to newRequest: URLRequest, for response: HTTPURLResponse, using handler: any RedirectHandler, body: Data?) {
        handler.request(self, willBeRedirectedTo: newRequest, for: response) { [self] decision in
            let (action, urlHandlers) = mutableState.write { state -> (RequestStateMachine.DecisionAction, [(queue: DispatchQueue, handler: @Sendable (URLRequest) -> Void)]) in
                let action = state.machine.didDecideRedirect(follow: decision != nil)
                guard case .follow = action, let decision else { return (action, []) }
                state.redirectCount += 1
                state.requests.append(decision)
                state.response = nil
                return (action, state.urlRequestHandlers)
            }
            switch action {
            case .ignore:
                return
            case .complete:
                didReceiveBody(body)
                finish(error: nil)
            case .follow:
                guard let decision else { return }
                notify(decision, urlHandlers: urlHandlers, cURLHandlers: [])
                execute(decision)
            }
        }
    }

    // MARK: - Retrying

    /// Runs the validators of a successful hop on `underlyingQueue`, then lets the retrier judge a failure.
    private func validateThenMaybeRetry() {
        runValidators()
        let error = mutableState.write { $0.error }
        switch mutableState.write({ $0.machine.didValidate(error: error) }) {
        case .ignore: return
        case .complete: finish(error: nil, validated: true)
        case .askRetrier: if let error { askRetrier(about: error) }
        }
    }

    /// Asks the retrier about `error`; runs on `underlyingQueue` (or the thread that made the `URLRequest`).
    func askRetrier(about error: AFError) {
        guard let retrier, let session else {
            settleRetry(.doNotRetry)
            return
        }
        retrier.retry(self, for: session, dueTo: error) { [self] result in settleRetry(result) }
    }

    private func settleRetry(_ result: RetryResult) {
        let action = mutableState.write { state -> RequestStateMachine.RetryAction in
            let action = state.machine.didDecideRetry(result)
            switch action {
            case .retryNow, .retryAfter:
                // A new attempt: what the last one left is forgotten, as in Alamofire's `prepareForRetry`.
                state.error = nil
                state.response = nil
                state.redirectCount = 0
            case let .complete(error):
                state.error = error
            case .ignore:
                break
            }
            return action
        }
        switch action {
        case .ignore:
            return
        case let .complete(error):
            finish(error: error, validated: true)
        case .retryNow:
            didReceiveBody(nil)
            eventMonitor?.requestIsRetrying(self)
            underlyingQueue.async { [self] in createURLRequest() }
        case let .retryAfter(delay):
            didReceiveBody(nil)
            eventMonitor?.requestIsRetrying(self)
            // A timer, not a blocked thread: cancelling meanwhile completes the request at once, and this finds the
            // machine moved on.
            underlyingQueue.asyncAfter(deadline: .now() + max(0, delay)) { [self] in
                if mutableState.write({ $0.machine.retryDelayDidElapse() }) { createURLRequest() }
            }
        }
    }
}

// MARK: - Transport events

extension Request: TransportSink {
    func transportDidReceiveResponse(_ response: HTTPURLResponse, expectedBodyLength expected: Int64) {
        let now = Timeline.now()
        mutableState.write { state in
            state.response = response
            state.initialResponseTime = now
            state.progress.download.completed = 0
            state.progress.download.total = expected
        }
    }

    func transportDidSendBodyBytes(_ count: Int) {
        updateProgress(.upload) { $0.completed += Int64(count) }
    }

    func transportDidSendBody() {
        updateProgress(.upload) { track in
            if track.total < 0 { track.total = track.completed }
        }
    }

    func transportDidReceiveBodyBytes(_ count: Int) {
        updateProgress(.download) { $0.completed += Int64(count) }
    }

    func transportDidComplete(body: Data, error: AFError?) {
        if let error {
            let sessionGone = delegate == nil
            hopDidComplete(.failure(sessionGone ? .sessionDeinitialized : error), body: nil)
            return
        }
        let (lastRequest, response, handler, count) = mutableState.write { state in
            (state.requests.last, state.response, state.redirectHandler ?? context.redirectHandler, state.redirectCount)
        }
        guard let lastRequest, let response,
              let redirected = RedirectRules.redirectedRequest(from: lastRequest, response: response) else {
            hopDidComplete(.success, body: body)
            return
        }
        switch redirected {
        case let .failure(error):
            hopDidComplete(.failure(error), body: nil)
        case .success where count >= handler.maximumRedirects:
            hopDidComplete(.failure(.redirectFailed(reason: .tooManyRedirects(limit: handler.maximumRedirects))), body: nil)
        case let .success(next):
            hopDidComplete(.redirect(next, response, handler), body: body)
        }
    }
}
