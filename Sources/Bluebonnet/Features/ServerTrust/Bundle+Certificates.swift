import Foundation
import X509

extension AlamofireExtension where ExtendedType: Bundle {
    /// The certificates in the bundle's resources: files ending `.cer`, `.crt`, `.der` (DER) or `.pem` (PEM, every
    /// certificate in it). Files that do not parse are skipped.
    public var certificates: [Certificate] {
        paths(forResourcesOfTypes: [".cer", ".CER", ".crt", ".CRT", ".der", ".DER", ".pem", ".PEM"]).flatMap { path in
            guard let data = FileManager.default.contents(atPath: path) else { return [Certificate]() }
            return CertificateLoader.certificates(in: data)
        }
    }

    /// The public keys of `certificates`.
    public var publicKeys: [Certificate.PublicKey] {
        certificates.map(\.publicKey)
    }

    /// The paths of the bundle's resources with any of `types` as their extension.
    ///
    /// - Parameter types: The extensions, with or without the leading dot.
    /// - Returns: The paths.
    public func paths(forResourcesOfTypes types: [String]) -> [String] {
        Array(Set(types.flatMap { type.paths(forResourcesOfType: $0.hasPrefix(".") ? String($0.dropFirst()) : $0, inDirectory: nil) }))
    }
}

/// Reads certificates from PEM or DER bytes.
enum CertificateLoader {
    /// Every certificate in `data`: each PEM block, or the data as one DER certificate.
    static func certificates(in data: Data) -> [Certificate] {
        if let text = String(data: data, encoding: .utf8), text.contains("-----BEGIN CERTIFICATE-----") {
            let blocks = text.components(separatedBy: "-----END CERTIFICATE-----").compactMap { part -> String? in
                guard let start = part.range(of: "-----BEGIN CERTIFICATE-----") else { return nil }
                return String(part[start.lowerBound...]) + "-----END CERTIFICATE-----"
            }
            return blocks.compactMap { try? Certificate(pemEncoded: $0) }
        }
        return (try? Certificate(derEncoded: Array(data))).map { [$0] } ?? []
    }
}
extension Bundle: AlamofireExtended {}
