import Foundation
import SwiftASN1
import X509

// Alamofire's shorthands for its evaluators (`.pinnedCertificates()`, `.publicKeys`, `.composite(evaluators:)`), so
// that a `ServerTrustManager`'s table reads as Alamofire code writes it.

extension ServerTrustEvaluating where Self == RevocationTrustEvaluator {
    /// A `RevocationTrustEvaluator` with its defaults.
    public static var revocationChecking: RevocationTrustEvaluator { RevocationTrustEvaluator() }
}

extension ServerTrustEvaluating where Self == PinnedCertificatesTrustEvaluator {
    /// A `PinnedCertificatesTrustEvaluator` with its defaults: the certificates in `Bundle.main`.
    public static var pinnedCertificates: PinnedCertificatesTrustEvaluator { PinnedCertificatesTrustEvaluator() }

    /// A `PinnedCertificatesTrustEvaluator`.
    ///
    /// - Parameters:
    ///   - certificates:                 The pinned certificates. Those in `Bundle.main` by default.
    ///   - acceptSelfSignedCertificates: Whether the pinned certificates are also trust roots for the chain check.
    ///                                   `false` by default.
    ///   - performDefaultValidation:     Whether the chain must verify to a trusted root. `true` by default.
    ///   - validateHost:                 Whether the certificate must name the host. `true` by default.
    /// - Returns: The evaluator.
    public static func pinnedCertificates(
        certificates: [Certificate] = Bundle.main.af.certificates,
        acceptSelfSignedCertificates: Bool = false,
        performDefaultValidation: Bool = true,
        validateHost: Bool = true
    ) -> PinnedCertificatesTrustEvaluator {
        PinnedCertificatesTrustEvaluator(
            certificates: certificates, acceptSelfSignedCertificates: acceptSelfSignedCertificates,
            performDefaultValidation: performDefaultValidation, validateHost: validateHost)
    }
}

extension ServerTrustEvaluating where Self == PublicKeysTrustEvaluator {
    /// A `PublicKeysTrustEvaluator` with its defaults: the keys of the certificates in `Bundle.main`.
    public static var publicKeys: PublicKeysTrustEvaluator { PublicKeysTrustEvaluator() }

    /// A `PublicKeysTrustEvaluator`.
    ///
    /// - Parameters:
    ///   - keys:                     The pinned keys. Those of the certificates in `Bundle.main` by default.
    ///   - performDefaultValidation: Whether the chain must verify to a trusted root. `true` by default.
    ///   - validateHost:             Whether the certificate must name the host. `true` by default.
    /// - Returns: The evaluator.
    public static func publicKeys(
        keys: [Certificate.PublicKey] = Bundle.main.af.publicKeys,
        performDefaultValidation: Bool = true,
        validateHost: Bool = true
    ) -> PublicKeysTrustEvaluator {
        PublicKeysTrustEvaluator(
            keys: keys, performDefaultValidation: performDefaultValidation, validateHost: validateHost)
    }
}

extension ServerTrustEvaluating where Self == CompositeTrustEvaluator {
    /// A `CompositeTrustEvaluator`: the trust passes when every one of `evaluators` passes it.
    ///
    /// - Parameter evaluators: The evaluators, in order.
    /// - Returns: The evaluator.
    public static func composite(evaluators: [any ServerTrustEvaluating]) -> CompositeTrustEvaluator {
        CompositeTrustEvaluator(evaluators: evaluators)
    }
}

extension Array: AlamofireExtended {}

extension AlamofireExtension where ExtendedType == [Certificate] {
    /// Each certificate's DER encoding, as Alamofire's `[SecCertificate].af.data`. A certificate that cannot be
    /// encoded (none that was parsed) is left out.
    public var data: [Data] {
        type.compactMap { certificate in
            var serializer = DER.Serializer()
            guard (try? serializer.serialize(certificate)) != nil else { return nil }
            return Data(serializer.serializedBytes)
        }
    }

    /// Each certificate's public key, in order.
    public var publicKeys: [Certificate.PublicKey] {
        type.map(\.publicKey)
    }
}

extension Certificate: AlamofireExtended {}

extension AlamofireExtension where ExtendedType == Certificate {
    /// The certificate's public key, as Alamofire's `SecCertificate.af.publicKey` (never `nil` here: a certificate
    /// swift-certificates parsed has a key it understands).
    public var publicKey: Certificate.PublicKey? { type.publicKey }
}
