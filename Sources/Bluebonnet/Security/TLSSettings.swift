import Foundation

/// How a `Session` speaks TLS beyond server trust: the roots it trusts, the identity it presents, and whether it
/// offers HTTP/2.
public struct TLSSettings: Sendable {
    /// The roots every host's chain is verified against (an evaluator may narrow them for its host).
    public var trustRoots: TrustRoots
    /// The identity presented to any server that asks for one.
    public var clientCertificate: ClientCertificate?
    /// Identities presented to particular hosts, in place of `clientCertificate`; keys are exact hosts.
    public var clientCertificatesByHost: [String: ClientCertificate]
    /// Whether HTTP/2 is offered through ALPN (used when the server picks it); `false` speaks HTTP/1.1 only.
    public var allowsHTTP2: Bool

    /// Creates settings.
    ///
    /// - Parameters:
    ///   - trustRoots:               The roots trusted. `.system` by default.
    ///   - clientCertificate:        The identity presented to any host. None by default.
    ///   - clientCertificatesByHost: Identities for particular hosts. None by default.
    ///   - allowsHTTP2:              Whether HTTP/2 is offered. `true` by default.
    public init(
        trustRoots: TrustRoots = .system, clientCertificate: ClientCertificate? = nil,
        clientCertificatesByHost: [String: ClientCertificate] = [:], allowsHTTP2: Bool = true
    ) {
        self.trustRoots = trustRoots
        self.clientCertificate = clientCertificate
        self.clientCertificatesByHost = clientCertificatesByHost
        self.allowsHTTP2 = allowsHTTP2
    }

    /// The system's roots, no client identity, HTTP/2 offered.
    public static let `default` = TLSSettings()
}
