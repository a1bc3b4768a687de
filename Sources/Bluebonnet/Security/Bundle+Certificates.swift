import Foundation
import X509

extension AlamofireExtension where ExtendedType: Bundle {
    /// The certificates in the bundle's resources: files ending `.cer`, `.crt`, `.der` (DER) or `.pem` (PEM, every
    /// certificate in it). Files that do not parse are skipped.
    public var certificates: [Certificate] {
        paths(forResourcesOfTypes: [".cer", ".CER", ".crt", ".CRT", ".der", ".DER", ".pem", ".PEM"]).flatMap { path in
            guard let data = FileManager.default.contents(atPath: path) else { return [Certificate]() }
            return CertificateFiles.certificates(in: data)
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
        Array(
            Set(
                types.flatMap {
                    type.paths(forResourcesOfType: $0.hasPrefix(".") ? String($0.dropFirst()) : $0, inDirectory: nil)
                }))
    }
}

extension Bundle: AlamofireExtended {}
