import Foundation
import X509

/// Reads certificates from the bytes of a certificate file, for pins and trust roots.
public enum CertificateFiles {
    /// Every certificate in `data`: each PEM block that parses (a CA bundle holds many), or the data as one DER
    /// certificate.
    ///
    /// - Parameter data: The file's bytes.
    /// - Returns: The certificates; empty when none parses.
    public static func certificates(in data: Data) -> [Certificate] {
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
