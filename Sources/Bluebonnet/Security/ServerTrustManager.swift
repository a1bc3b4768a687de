import Foundation

/// Chooses the `ServerTrustEvaluating` for each host a `Session` connects to over TLS.
open class ServerTrustManager: @unchecked Sendable {
    // @unchecked: both stored properties are immutable after `init`; subclasses keep the same rule.

    /// Whether every host must have an evaluator: a host without one fails with `.noRequiredEvaluator(host:)`.
    public let allHostsMustBeEvaluated: Bool

    /// The evaluators, keyed by host (an exact host, no wildcards).
    public let evaluators: [String: any ServerTrustEvaluating]

    /// Creates a manager.
    ///
    /// - Parameters:
    ///   - allHostsMustBeEvaluated: Whether a host without an evaluator fails. `true` by default.
    ///   - evaluators:              The evaluators, keyed by host.
    public init(allHostsMustBeEvaluated: Bool = true, evaluators: [String: any ServerTrustEvaluating]) {
        self.allHostsMustBeEvaluated = allHostsMustBeEvaluated
        self.evaluators = evaluators
    }

    /// The evaluator for `host`, if any.
    ///
    /// - Parameter host: The host.
    /// - Returns: Its evaluator, or `nil` when there is none and none is required.
    /// - Throws: `AFError.serverTrustEvaluationFailed(reason: .noRequiredEvaluator(host:))` when every host must have
    ///   one and `host` has none.
    open func serverTrustEvaluator(forHost host: String) throws -> (any ServerTrustEvaluating)? {
        if let evaluator = evaluators[host] ?? evaluators[host.lowercased()] { return evaluator }
        if allHostsMustBeEvaluated {
            throw AFError.serverTrustEvaluationFailed(reason: .noRequiredEvaluator(host: host))
        }
        return nil
    }
}
