import Foundation
import X509

/// Trusts a server only if every one of its evaluators does, asked in order.
public final class CompositeTrustEvaluator: ServerTrustEvaluating, TrustRootsProviding {
    private let evaluators: [any ServerTrustEvaluating]

    /// Creates an evaluator.
    ///
    /// - Parameter evaluators: The evaluators, in the order they are asked.
    public init(evaluators: [any ServerTrustEvaluating]) {
        self.evaluators = evaluators
    }

    /// Whether the chain is verified first: when any evaluator asks for it.
    public var requiresTrustedChain: Bool { evaluators.contains { $0.requiresTrustedChain } }

    var trustRoots: TrustRoots {
        var added: [Certificate] = []
        var replaced: [Certificate]?
        for case let provider as any TrustRootsProviding in evaluators {
            switch provider.trustRoots {
            case .system: break
            case let .adding(roots): added += roots
            case let .replacing(roots): replaced = (replaced ?? []) + roots
            }
        }
        // An evaluator that narrowed the roots keeps them narrow; the others' additions join them.
        if let replaced { return .replacing(replaced + added) }
        return added.isEmpty ? .system : .adding(added)
    }

    /// Asks each evaluator in turn; the first refusal is the verdict.
    ///
    /// - Parameters:
    ///   - trust: What the connection showed.
    ///   - host:  The host.
    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {
        for evaluator in evaluators { try evaluator.evaluate(trust, forHost: host) }
    }
}

extension CompositeTrustEvaluator: NonBlockingTrustEvaluating {
    /// Whether every evaluator it asks is one of Bluebonnet's, which never block.
    var evaluatesWithoutBlocking: Bool {
        evaluators.allSatisfy { ($0 as? any NonBlockingTrustEvaluating)?.evaluatesWithoutBlocking ?? false }
    }

    func evaluateWithoutBlocking(_ trust: ServerTrust, forHost host: String) async throws {
        for evaluator in evaluators {
            if let nonBlocking = evaluator as? any NonBlockingTrustEvaluating {
                try await nonBlocking.evaluateWithoutBlocking(trust, forHost: host)
            } else {
                try evaluator.evaluate(trust, forHost: host)
            }
        }
    }
}
