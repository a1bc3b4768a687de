extension Request {
    /// The lifecycle of a `Request`, with the transitions Alamofire allows.
    public enum State: Sendable {
        /// Initial state of the `Request`.
        case initialized
        /// `resume()` has been called; the request runs or will run once its `URLRequest` is made.
        case resumed
        /// `suspend()` has been called; body reading is paused.
        case suspended
        /// `cancel()` has been called. Terminal.
        case cancelled
        /// All response handlers have run. Terminal until another handler is added.
        case finished

        /// Whether a change from `self` to `state` is allowed.
        ///
        /// - Parameter state: The proposed next state.
        /// - Returns: `true` when the transition is valid.
        func canTransitionTo(_ state: State) -> Bool {
            switch (self, state) {
            case (.initialized, _):
                return true
            case (_, .initialized), (.cancelled, _), (.finished, _):
                return false
            case (.resumed, .cancelled), (.suspended, .cancelled), (.resumed, .suspended), (.suspended, .resumed):
                return true
            case (.suspended, .suspended), (.resumed, .resumed):
                return false
            case (_, .finished):
                return true
            }
        }
    }
}
