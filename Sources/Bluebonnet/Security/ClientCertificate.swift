import Foundation
import NIOSSL

/// A client's identity for mutual TLS: its certificate chain and private key, presented when a server asks.
public struct ClientCertificate: Sendable {
    let chain: [NIOSSLCertificate]
    let privateKey: NIOSSLPrivateKey

    /// Why an identity could not be read.
    public enum LoadingError: Error, Sendable {
        /// The PEM data holds no certificate, or one that does not parse; the TLS layer's error is attached.
        case invalidCertificateChain(underlying: (any Error)?)
        /// The private key does not parse, or the passphrase does not decrypt it; the TLS layer's error is attached.
        case invalidPrivateKey(underlying: any Error)
        /// The PKCS#12 archive does not parse, or the passphrase does not open it; the TLS layer's error is attached.
        case invalidPKCS12(underlying: any Error)
    }

    /// An identity from PEM: the certificate chain (the client's certificate first) and its private key.
    ///
    /// - Parameters:
    ///   - certificateChain: PEM certificates, the client's first, then any intermediates.
    ///   - privateKey:       The PEM private key (PKCS#8, SEC1 or PKCS#1), encrypted or not.
    ///   - passphrase:       The key's passphrase, if it is encrypted. Never asked for on the terminal.
    /// - Throws: `ClientCertificate.LoadingError`.
    public init(pemCertificateChain certificateChain: Data, privateKey: Data, passphrase: String? = nil) throws {
        do {
            chain = try NIOSSLCertificate.fromPEMBytes(Array(certificateChain))
        } catch {
            throw LoadingError.invalidCertificateChain(underlying: error)
        }
        guard !chain.isEmpty else { throw LoadingError.invalidCertificateChain(underlying: nil) }
        do {
            // A callback is always given: without one, BoringSSL would prompt for the passphrase on standard input.
            let secret = Array((passphrase ?? "").utf8)
            self.privateKey = try NIOSSLPrivateKey(bytes: Array(privateKey), format: .pem) { setter in setter(secret) }
        } catch {
            throw LoadingError.invalidPrivateKey(underlying: error)
        }
    }

    /// An identity from a PKCS#12 (`.p12`, `.pfx`) archive.
    ///
    /// - Parameters:
    ///   - pkcs12:     The archive's bytes.
    ///   - passphrase: Its passphrase.
    /// - Throws: `ClientCertificate.LoadingError.invalidPKCS12(underlying:)`.
    public init(pkcs12: Data, passphrase: String) throws {
        do {
            let bundle = try NIOSSLPKCS12Bundle(buffer: Array(pkcs12), passphrase: Array(passphrase.utf8))
            chain = bundle.certificateChain
            privateKey = bundle.privateKey
        } catch {
            throw LoadingError.invalidPKCS12(underlying: error)
        }
        guard !chain.isEmpty else { throw LoadingError.invalidCertificateChain(underlying: nil) }
    }
}
