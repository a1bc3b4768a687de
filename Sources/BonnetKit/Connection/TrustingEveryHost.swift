import Bluebonnet

/// `--verify=no`: every host's certificate is accepted unchecked, as httpie's `--verify=no` does.
final class TrustingEveryHost: ServerTrustManager, @unchecked Sendable {
    init() {
        super.init(allHostsMustBeEvaluated: false, evaluators: [:])
    }

    override func serverTrustEvaluator(forHost host: String) throws -> (any ServerTrustEvaluating)? {
        DisabledTrustEvaluator()
    }
}
