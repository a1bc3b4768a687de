import Dispatch
import Foundation
import NIOCore
import NIOSSL
import SwiftASN1
import X509

/// Judges each new TLS connection to one host with its `ServerTrustEvaluating`, on the connection that will carry
/// the requests: AsyncHTTPClient runs it after the handshake and before the first request, and a failed future fails
/// the connection (and the requests waiting for it) instead of handing it to the pool.
struct ServerTrustEnforcer: Sendable {
    let host: String
    let evaluator: any ServerTrustEvaluating

    /// Whether the handshake verifies the chain (names are ours to check) or leaves everything to the evaluator.
    var certificateVerification: CertificateVerification {
        evaluator.requiresTrustedChain ? .noHostnameVerification : .none
    }

    /// The session's roots with the evaluator's applied on top.
    func trustRoots(over base: TrustRoots) -> TrustRoots {
        base.applying((evaluator as? any TrustRootsProviding)?.trustRoots ?? .system)
    }

    /// The check AsyncHTTPClient runs on each new connection.
    func verify(_ channel: any Channel) -> EventLoopFuture<Void> {
        let promise = channel.eventLoop.makePromise(of: Void.self)
        channel.pipeline.handler(type: NIOSSLHandler.self).whenComplete { [self] result in
            // Only the handler is read on the event loop: parsing the server's certificate and the evaluator run off
            // it. Bluebonnet's own evaluators run as a task, which awaits a chain verification or an OCSP answer
            // without holding a thread; a user's evaluator, which may block (`requiresTrustedChain` included), runs on
            // `Offload`'s bounded queue.
            let peer = try? result.get().peerCertificate
            if let nonBlocking = evaluator as? any NonBlockingTrustEvaluating, nonBlocking.evaluatesWithoutBlocking {
                Task { [self] in
                    let trust = Self.trust(of: peer, chainTrusted: nonBlocking.requiresTrustedChain)
                    let verdict = await Self.verdictWithoutBlocking(of: nonBlocking, trust: trust, host: host)
                    Self.settle(channel, promise, verdict)
                }
                return
            }
            Offload.run { [self] in
                Confinement.assertOffEventLoop("A server trust evaluator")
                let trust = Self.trust(of: peer, chainTrusted: evaluator.requiresTrustedChain)
                Self.settle(channel, promise, Self.verdict(of: evaluator, trust: trust, host: host))
            }
        }
        return promise.futureResult
    }

    /// What the connection showed: its leaf, parsed, with the connection's revocation checker.
    private static func trust(of peer: NIOSSLCertificate?, chainTrusted: Bool) -> ServerTrust {
        let leaf = peer.flatMap { try? Certificate(derEncoded: $0.toDERBytes()) }
        var trust = ServerTrust(certificates: leaf.map { [$0] } ?? [], isChainTrusted: chainTrusted)
        trust.revocationChecker = OCSPRevocationChecker.shared
        return trust
    }

    /// Hands the verdict to the connection, on its event loop.
    private static func settle(_ channel: any Channel, _ promise: EventLoopPromise<Void>, _ verdict: AFError?) {
        channel.eventLoop.execute {
            guard let verdict else { return promise.succeed(()) }
            // Failed first, so the pool forgets the connection before it hears the channel close; the other
            // order leaves the pool a failure for a connection it no longer knows.
            promise.fail(verdict)
            channel.close(promise: nil)
        }
    }

    /// `nil` when `evaluator` trusts `trust`, else the `AFError` that says why not.
    static func verdict(of evaluator: any ServerTrustEvaluating, trust: ServerTrust, host: String) -> AFError? {
        guard !trust.certificates.isEmpty else {
            return .serverTrustEvaluationFailed(reason: .noCertificatesFound)
        }
        do {
            try evaluator.evaluate(trust, forHost: host)
            return nil
        } catch {
            return refusal(error)
        }
    }

    /// `verdict(of:trust:host:)`, awaiting what the evaluator waits for.
    static func verdictWithoutBlocking(
        of evaluator: any NonBlockingTrustEvaluating, trust: ServerTrust, host: String
    ) async -> AFError? {
        guard !trust.certificates.isEmpty else {
            return .serverTrustEvaluationFailed(reason: .noCertificatesFound)
        }
        do {
            try await evaluator.evaluateWithoutBlocking(trust, forHost: host)
            return nil
        } catch {
            return refusal(error)
        }
    }

    /// An evaluator's refusal as an `AFError`.
    private static func refusal(_ error: any Error) -> AFError {
        (error as? AFError) ?? .serverTrustEvaluationFailed(reason: .customEvaluationFailed(error: error))
    }

    /// A handshake that refused the chain, as the trust failure it is.
    func mappedHandshakeError(_ error: any Error) -> AFError? {
        let stack: NIOBoringSSLErrorStack
        switch error {
        case let NIOSSLError.handshakeFailed(.sslError(errors)), let BoringSSLError.sslError(errors): stack = errors
        default: return nil
        }
        guard stack.contains(where: Self.isCertificateVerificationFailure) else { return nil }
        return .serverTrustEvaluationFailed(
            reason: .defaultEvaluationFailed(output: .init(host: host, trust: nil, error: error)))
    }

    /// BoringSSL's packed code for `SSL_R_CERTIFICATE_VERIFY_FAILED` (125 in CNIOBoringSSL_ssl.h):
    /// `ERR_PACK(ERR_LIB_SSL, 125)`.
    static let certificateVerifyFailedCode = (UInt32(16) << 24) | 125

    /// Whether a BoringSSL error is the handshake's refusal of the chain. swift-nio-ssl keeps the packed code
    /// private and shows it only as the description's first field (`Error: <code> ...`), so that field is read as
    /// a number; the message text is never matched.
    static func isCertificateVerificationFailure(_ error: BoringSSLInternalError) -> Bool {
        let fields = error.description.split(separator: " ", maxSplits: 2)
        return fields.count >= 2 && fields[0] == "Error:" && UInt32(fields[1]) == certificateVerifyFailedCode
    }

    static func nioCertificate(_ certificate: Certificate) throws -> NIOSSLCertificate {
        var serializer = DER.Serializer()
        try serializer.serialize(certificate)
        return try NIOSSLCertificate(bytes: serializer.serializedBytes, format: .der)
    }
}

/// The host check of connections no evaluator judges. The handshake verifies the chain and the host name, and
/// swift-nio-ssl matches the host against a certificate's subjectAltNames alone, except that a certificate with no
/// subjectAltName at all is matched by its common name, which RFC 9525 forbids. This refuses such a certificate, so
/// the SAN-only rule holds on every path.
enum SubjectAlternativeNameRequirement {
    /// Thrown on a connection whose certificate names no subjectAltName; the request turns it into
    /// `.hostValidationFailed` for its own host.
    struct Missing: Error {
        let leaf: Certificate?
    }

    /// The check AsyncHTTPClient runs on each new connection; a plain-text connection passes.
    static func verify(_ channel: any Channel) -> EventLoopFuture<Void> {
        let promise = channel.eventLoop.makePromise(of: Void.self)
        channel.pipeline.handler(type: NIOSSLHandler.self).whenComplete { result in
            guard case let .success(handler) = result else { return promise.succeed(()) }
            let peer = handler.peerCertificate
            // Parsing the certificate is not bookkeeping: it runs off the event loop, as the evaluators do.
            Offload.run {
                let leaf = peer.flatMap { try? Certificate(derEncoded: $0.toDERBytes()) }
                let names = ((try? leaf?.extensions.subjectAlternativeNames) ?? nil).map { Array($0) } ?? []
                channel.eventLoop.execute {
                    guard names.isEmpty else { return promise.succeed(()) }
                    promise.fail(Missing(leaf: leaf))
                    channel.close(promise: nil)
                }
            }
        }
        return promise.futureResult
    }

    /// The trust failure `error` is, for a request to `host`; `nil` when it is not `Missing`.
    static func mapped(_ error: any Error, host: String) -> AFError? {
        guard let missing = error as? Missing else { return nil }
        let trust = ServerTrust(certificates: missing.leaf.map { [$0] } ?? [], isChainTrusted: true)
        return .serverTrustEvaluationFailed(
            reason: .hostValidationFailed(output: .init(host: host, trust: trust, error: nil)))
    }
}
