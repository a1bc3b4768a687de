import AsyncHTTPClient
import Foundation
import NIOCore
import X509

/// `RevocationChecking` over a client of its own: the issuer from the leaf's `caIssuers` URL (64 KiB at most, 5 s,
/// kept for an hour, 64 issuers at most), then swift-certificates' `OCSPVerifierPolicy` asking the leaf's responder
/// (64 KiB, within the policy's 10 s).
final class OCSPRevocationChecker: RevocationChecking {
    static let shared = OCSPRevocationChecker()

    /// The largest issuer certificate or OCSP answer read.
    static let maximumBodySize = 64 * 1024
    /// How long fetching an issuer may take.
    static let issuerTimeout: TimeAmount = .seconds(5)
    static let issuerLifetime: TimeInterval = 3600
    static let maximumIssuers = 64
    /// How swift-certificates' `OCSPVerifierPolicy` begins the reason of a revoked certificate.
    static let revokedPrefix = "revoked through OCSP"

    /// A client of the checker's own: it never shares the pool or the trust decisions of the connections it judges.
    private let client: HTTPClient = {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .follow(max: 3, allowCycles: false),
            timeout: .init(connect: .seconds(5), read: .seconds(5)))
        // A responder that refuses connections is no answer at once, not after retries until a timeout.
        configuration.connectionPool.retryConnectionEstablishment = false
        return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }()
    private let issuers = Protected<[String: (certificate: Certificate, fetched: Date)]>([:])

    func status(of leaf: Certificate, requiringAnswer: Bool) async -> RevocationStatus {
        let access: AuthorityInformationAccess?
        do { access = try leaf.extensions.authorityInformationAccess } catch {
            return .noAnswer("its Authority Information Access cannot be read: \(error)")
        }
        guard let access, access.contains(where: { $0.method == .ocspServer }) else {
            return .noAnswer("the certificate names no OCSP responder")
        }
        let issuerURLs = access.compactMap { description -> String? in
            guard description.method == .issuingCA, case let .uniformResourceIdentifier(uri) = description.location
            else { return nil }
            return uri
        }
        guard let issuerURL = issuerURLs.first else {
            return .noAnswer("the certificate names no issuer to fetch (caIssuers)")
        }
        let issuer: Certificate
        do { issuer = try await self.issuer(at: issuerURL) } catch {
            return .noAnswer("its issuer could not be fetched from \(issuerURL): \(error)")
        }
        let requester = Requester(checker: self, hardFail: requiringAnswer)
        // RFC 5280's policy handles the critical extensions a leaf carries (basic constraints, key usage); the
        // handshake already verified the chain to a trusted root, so the issuer fetched stands as the anchor here.
        var verifier = Verifier(rootCertificates: CertificateStore([issuer])) {
            RFC5280Policy()
            OCSPVerifierPolicy(failureMode: requiringAnswer ? .hard : .soft, requester: requester)
        }
        switch await verifier.validate(leaf: leaf, intermediates: CertificateStore()) {
        case .validCertificate:
            return .good
        case let .couldNotValidate(failures):
            // `PolicyFailureReason` is an opaque text: swift-certificates' OCSP policy says a revocation as
            // "revoked through OCSP, reason: …", and nothing else it or RFC 5280's policy says starts so.
            let reasons = failures.map { String(describing: $0.policyFailureReason) }
            let text = reasons.joined(separator: "; ")
            if reasons.contains(where: { $0.hasPrefix(Self.revokedPrefix) }) { return .revoked(text) }
            return .noAnswer(text.isEmpty ? "the chain did not verify" : text)
        }
    }

    /// The issuer at `url`, DER or PEM, from the cache when fetched within the hour.
    private func issuer(at url: String) async throws -> Certificate {
        if let cached = issuers.write({ $0[url] }), Date().timeIntervalSince(cached.fetched) < Self.issuerLifetime {
            return cached.certificate
        }
        let bytes = try await fetch(url, body: nil, deadline: .now() + Self.issuerTimeout)
        let certificate: Certificate
        if let text = String(bytes: bytes, encoding: .utf8), text.contains("-----BEGIN CERTIFICATE-----") {
            certificate = try Certificate(pemEncoded: text)
        } else {
            certificate = try Certificate(derEncoded: bytes)
        }
        issuers.write { issuers in
            if issuers.count >= Self.maximumIssuers,
                let oldest = issuers.min(by: { $0.value.fetched < $1.value.fetched })?.key
            {
                issuers[oldest] = nil
            }
            issuers[url] = (certificate, Date())
        }
        return certificate
    }

    /// The body of a `GET` (or a `POST` of `body`), refused past `maximumBodySize` or a non-2xx status.
    fileprivate func fetch(_ url: String, body: [UInt8]?, deadline: NIODeadline?) async throws -> [UInt8] {
        var request = HTTPClientRequest(url: url)
        if let body {
            request.method = .POST
            request.headers.add(name: "Content-Type", value: "application/ocsp-request")
            request.body = .bytes(body)
        }
        let response = try await client.execute(request, deadline: deadline ?? .distantFuture)
        guard (200..<300).contains(response.status.code) else {
            throw RevocationError(reason: "the server answered \(response.status.code)")
        }
        let buffer = try await response.body.collect(upTo: Self.maximumBodySize)
        return Array(buffer.readableBytesView)
    }

    /// swift-certificates' requester: the policy cancels it at its own deadline. An answer that cannot be had is a
    /// pass (non-terminal) unless one is required.
    private struct Requester: OCSPRequester {
        let checker: OCSPRevocationChecker
        let hardFail: Bool

        func query(request: [UInt8], uri: String) async -> OCSPRequesterQueryResult {
            do {
                return .response(try await checker.fetch(uri, body: request, deadline: nil))
            } catch {
                return hardFail ? .terminalError(error) : .nonTerminalError(error)
            }
        }
    }
}
