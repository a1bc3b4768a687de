import Foundation
import X509

/// Checks that the server's certificate has not been revoked, by OCSP (RFC 6960), on top of the default validation.
///
/// The connection shows the leaf certificate only, so the issuer OCSP needs comes from the leaf's Authority
/// Information Access `caIssuers` URL (fetched with a bound on size and time, and cached), as browsers fetch it; the
/// leaf's OCSP responder is then asked over a connection of its own, and its signed answer checked by
/// swift-certificates' `OCSPVerifierPolicy` (signature, responder, times, nonce).
///
/// Alamofire's options map where Linux can honour them: `.ocsp` (and `.any`) check by OCSP; `.requirePositiveResponse`
/// fails when no answer can be had (no responder, an unreachable or slow one, an `unknown` status), where by default
/// such a check passes (soft-fail, as browsers do); `.networkAccessDisabled` asks no one, so it passes, or fails
/// with `.requirePositiveResponse`. CRLs are not fetched: `.crl` without `.ocsp` fails every evaluation, clearly. A
/// revoked certificate always fails. Compose it with pinning through `CompositeTrustEvaluator`.
public final class RevocationTrustEvaluator: ServerTrustEvaluating {
    /// How revocation is checked: Alamofire's options (`SecPolicyCreateRevocation`'s flags).
    public struct Options: OptionSet, Sendable {
        /// Check by CRL: not available on Linux.
        public static let crl = Options(rawValue: 1 << 1)
        /// Ask no one over the network.
        public static let networkAccessDisabled = Options(rawValue: 1 << 4)
        /// Check by OCSP.
        public static let ocsp = Options(rawValue: 1 << 0)
        /// Prefer CRLs: not available on Linux; OCSP is used.
        public static let preferCRL = Options(rawValue: 1 << 2)
        /// Fail when no positive answer can be had.
        public static let requirePositiveResponse = Options(rawValue: 1 << 3)
        /// Any method available: OCSP on Linux.
        public static let any: Options = [.crl, .ocsp]

        /// The raw bits.
        public let rawValue: UInt

        /// Creates options from raw bits.
        ///
        /// - Parameter rawValue: The bits.
        public init(rawValue: UInt) {
            self.rawValue = rawValue
        }
    }

    private let performDefaultValidation: Bool
    private let validateHost: Bool
    private let options: Options

    /// Creates an evaluator.
    ///
    /// - Parameters:
    ///   - performDefaultValidation: Whether the chain must verify to a trusted root first. `true` by default.
    ///   - validateHost:             Whether the certificate must name the host. `true` by default.
    ///   - options:                  How revocation is checked. `.any` by default.
    public init(performDefaultValidation: Bool = true, validateHost: Bool = true, options: Options = .any) {
        self.performDefaultValidation = performDefaultValidation
        self.validateHost = validateHost
        self.options = options
    }

    /// Whether the handshake verifies the chain first.
    public var requiresTrustedChain: Bool { performDefaultValidation }

    /// Checks the host, then asks the leaf's OCSP responder.
    ///
    /// - Parameters:
    ///   - trust: What the connection showed.
    ///   - host:  The host.
    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {
        guard let query = try query(for: trust, host: host) else { return }
        try conclude(
            Offload.wait { await query.checker.status(of: query.leaf, requiringAnswer: query.required) }, query)
    }

    /// What the responder is asked, once the checks before it passed; `nil` when none is asked and none is required.
    fileprivate func query(for trust: ServerTrust, host: String) throws -> RevocationQuery? {
        if performDefaultValidation { try trust.requireTrustedChain(forHost: host) }
        if performDefaultValidation, validateHost { try trust.validateHost(host) }
        let required = options.contains(.requirePositiveResponse)
        let failure: @Sendable (String) -> AFError = { [options] reason in
            .serverTrustEvaluationFailed(
                reason: .revocationCheckFailed(
                    output: .init(host: host, trust: trust, error: RevocationError(reason: reason)),
                    options: options))
        }
        guard options.contains(.ocsp) else { throw failure("only OCSP is available on Linux; CRLs are not fetched") }
        guard let leaf = trust.leafCertificate else { throw failure("no certificate to check") }
        guard !options.contains(.networkAccessDisabled) else {
            if required { throw failure("network access is disabled, so no answer can be had") }
            return nil
        }
        guard let checker = trust.revocationChecker else {
            if required { throw failure("this trust came from no connection, so no responder can be asked") }
            return nil
        }
        return RevocationQuery(checker: checker, leaf: leaf, required: required, failure: failure)
    }

    /// The verdict on the responder's answer.
    fileprivate func conclude(_ status: RevocationStatus, _ query: RevocationQuery) throws {
        switch status {
        case .good: return
        case let .revoked(reason): throw query.failure(reason)
        case let .noAnswer(reason): if query.required { throw query.failure(reason) }
        }
    }
}

extension RevocationTrustEvaluator: NonBlockingTrustEvaluating {
    func evaluateWithoutBlocking(_ trust: ServerTrust, forHost host: String) async throws {
        guard let query = try query(for: trust, host: host) else { return }
        try conclude(await query.checker.status(of: query.leaf, requiringAnswer: query.required), query)
    }
}

/// A revocation check to make: whom to ask about which certificate, and how a failure reads.
private struct RevocationQuery: Sendable {
    let checker: any RevocationChecking
    let leaf: Certificate
    let required: Bool
    let failure: @Sendable (String) -> AFError
}

/// Why a revocation check failed.
public struct RevocationError: Error, Sendable, CustomStringConvertible {
    /// In words.
    public let reason: String

    public var description: String { reason }
}

/// Asks whether a certificate was revoked; the connection's transport provides one.
protocol RevocationChecking: Sendable {
    /// The leaf's status, awaited: no thread waits for the responder.
    func status(of leaf: Certificate, requiringAnswer: Bool) async -> RevocationStatus
}

enum RevocationStatus: Sendable {
    case good
    case revoked(String)
    /// No answer could be had: no responder named, none reachable in time, `unknown`, or an answer that does not
    /// verify.
    case noAnswer(String)
}

extension ServerTrustEvaluating where Self == RevocationTrustEvaluator {
    /// A `RevocationTrustEvaluator`.
    ///
    /// - Parameters:
    ///   - performDefaultValidation: Whether the chain must verify first. `true` by default.
    ///   - validateHost:             Whether the certificate must name the host. `true` by default.
    ///   - options:                  How revocation is checked. `.any` by default.
    /// - Returns: The evaluator.
    public static func revocationChecking(
        performDefaultValidation: Bool = true, validateHost: Bool = true,
        options: RevocationTrustEvaluator.Options = .any
    ) -> Self {
        RevocationTrustEvaluator(
            performDefaultValidation: performDefaultValidation, validateHost: validateHost, options: options)
    }
}
