import ArgumentParser
import Bluebonnet
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The connection's options, shared by requests and `bonnet ws`: proxies, the server's verification and a client
/// certificate.
public struct ConnectionOptions: ParsableArguments {
    public init() {}

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A proxy for one scheme, as httpie spells it: http:http://host:port or https:http://user:pass@host:port, "
                + "or all:socks5://host:port for a SOCKS5 proxy. Repeat for each scheme; it wins over the http_proxy, "
                + "https_proxy and all_proxy variables, which are used otherwise. Exceptions come from --no-proxy "
                + "or no_proxy.", valueName: "scheme:url"))
    var proxy: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp("Hosts reached without the proxy, comma-separated (names, .domain, *).", valueName: "hosts"))
    var noProxy: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "yes (the default: the system's roots and the host name), no (check nothing: development servers only), "
                + "or a PEM file of CA certificates trusted in place of the system's.", valueName: "yes|no|file"))
    var verify: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "A PEM client certificate (with its key, or give --cert-key) for servers that ask for one.",
            valueName: "file"))
    var cert: String?

    @Option(
        name: .long,
        help: ArgumentHelp("The PEM private key of --cert, when it is not in the same file.", valueName: "file"))
    var certKey: String?

    @Option(name: .long, help: ArgumentHelp("The passphrase of an encrypted --cert-key.", valueName: "passphrase"))
    var certKeyPass: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The TLS version, as httpie names them: ssl2.3 (the default: the highest both sides speak) is the only "
                + "one bonnet's TLS engine honours; tls1, tls1.1 and tls1.2 (one version only) are refused.",
            valueName: "ssl2.3|tls1|tls1.1|tls1.2"))
    var ssl: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "OpenSSL's cipher list: refused, as bonnet's TLS engine does not let a client choose its cipher suites.",
            valueName: "ciphers"))
    var ciphers: String?

    /// httpie's `--ssl` choices.
    static let sslVersions = ["ssl2.3", "tls1", "tls1.1", "tls1.2"]

    public func validate() throws {
        if certKey != nil, cert == nil {
            throw ValidationError("--cert-key needs --cert, the certificate it belongs to")
        }
        if let ssl {
            guard Self.sslVersions.contains(ssl) else {
                throw ValidationError(
                    "--ssl: '\(ssl)' is not a choice (choose from \(Self.sslVersions.joined(separator: ", ")))")
            }
            // A value that cannot be honoured is refused, never accepted and ignored.
            guard ssl == "ssl2.3" else {
                throw ValidationError(
                    "--ssl=\(ssl) asks for that TLS version only, and bonnet's TLS engine cannot be held to one: it "
                        + "speaks the highest version the server does (TLS 1.0 to 1.3); leave --ssl out or give ssl2.3")
            }
        }
        if ciphers != nil {
            throw ValidationError(
                "--ciphers: bonnet's TLS engine does not let a client choose its cipher suites (it offers its own "
                    + "modern set); leave --ciphers out")
        }
    }

    /// The `connectionProxyDictionary` of the environment's proxy variables (`http_proxy`, `https_proxy`,
    /// `all_proxy`, `no_proxy`, as httpie honours them), with --proxy and --no-proxy in place of the variables they
    /// name; `nil` when no proxy is set.
    func proxyDictionary(environment processEnvironment: [String: String]) throws -> [AnyHashable: Any]? {
        var environment: [String: String] = [:]
        // Only the proxy variables, lowercase: an option replaces a variable whatever its case.
        for name in ["http_proxy", "https_proxy", "all_proxy", "no_proxy"] {
            if let value = processEnvironment[name] ?? processEnvironment[name.uppercased()] {
                environment[name] = value
            }
        }
        var given: Set<String> = []
        for entry in proxy {
            guard let colon = entry.firstIndex(of: ":"),
                ["http", "https", "all"].contains(entry[..<colon].lowercased())
            else {
                throw ValidationError(
                    "--proxy takes SCHEME:URL with SCHEME http, https or all, e.g. --proxy=https:http://127.0.0.1:3128")
            }
            let scheme = entry[..<colon].lowercased()
            let target = String(entry[entry.index(after: colon)...])
            if scheme != "all", target.lowercased().hasPrefix("socks") {
                throw ValidationError(
                    "--proxy: a SOCKS proxy carries every scheme here: give it as --proxy=all:\(target)")
            }
            environment["\(scheme)_proxy"] = target
            given.insert(scheme)
        }
        // --proxy=all: is for every scheme the options do not name: the variables' own proxies give way to it.
        if given.contains("all") {
            for scheme in ["http", "https"] where !given.contains(scheme) { environment["\(scheme)_proxy"] = nil }
        }
        if let noProxy { environment["no_proxy"] = noProxy }
        let dictionary: [AnyHashable: Any]
        do {
            dictionary = try URLSessionConfiguration.af.proxyDictionary(fromEnvironment: environment)
        } catch let ProxyEnvironmentError.unsupportedProxy(variable, value) {
            let source =
                proxy.isEmpty || processEnvironment[variable] == value
                    || processEnvironment[variable.uppercased()] == value
                ? "the \(variable) variable" : "--proxy"
            throw ValidationError(
                "\(source) names a proxy bonnet cannot use: \(Self.withoutPassword(value)) "
                    + "(an http:// proxy, or socks5:// for all schemes)")
        }
        return dictionary.isEmpty ? nil : dictionary
    }

    /// The variables that name a CA bundle in place of the system's when --verify does not, in the order httpie's
    /// requests reads them (`REQUESTS_CA_BUNDLE`, then `CURL_CA_BUNDLE`), then OpenSSL's `SSL_CERT_FILE`.
    static let caBundleVariables = ["REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE"]

    /// What --verify, --cert, --cert-key and --cert-key-pass ask for, their files relative to `console`'s folder.
    func tlsChoices(in console: Console) throws -> (ServerTrustManager?, TLSSettings) {
        func contents(_ path: String) -> Data? { FileManager.default.contents(atPath: console.file(path).path) }
        var tls = TLSSettings()
        var trustManager: ServerTrustManager?
        // Without --verify, a CA bundle named by the environment stands in for the system's roots, as for httpie.
        let fromEnvironment = Self.caBundleVariables.lazy.compactMap { name in
            console.environment[name].flatMap { $0.isEmpty ? nil : (name, $0) }
        }.first
        let bundle: (source: String, path: String)? =
            switch verify?.lowercased() {
            case nil: fromEnvironment.map { ("the \($0.0) variable", $0.1) }
            case "yes", "true", "no", "false": nil
            default: ("--verify", verify ?? "")
            }
        if ["no", "false"].contains(verify?.lowercased()) { trustManager = TrustingEveryHost() }
        if let bundle {
            guard let data = contents(bundle.path) else {
                throw ValidationError("\(bundle.source): \(Self.unreadable(bundle.path, in: console))")
            }
            let roots = CertificateFiles.certificates(in: data)
            guard !roots.isEmpty else {
                throw ValidationError("\(bundle.source): no PEM certificate in \(bundle.path)")
            }
            tls.trustRoots = .replacing(roots)
        }
        if let cert {
            guard let chain = contents(cert) else {
                throw ValidationError("--cert: \(Self.unreadable(cert, in: console))")
            }
            let keyPath = certKey ?? cert
            guard let key = contents(keyPath) else {
                throw ValidationError("--cert-key: \(Self.unreadable(keyPath, in: console))")
            }
            do {
                tls.clientCertificate = try ClientCertificate(
                    pemCertificateChain: chain, privateKey: key, passphrase: certKeyPass)
            } catch ClientCertificate.LoadingError.invalidPrivateKey where Self.isEncryptedKey(key) {
                throw ValidationError(
                    certKeyPass == nil
                        ? "--cert-key: \(keyPath) is encrypted: give its passphrase with --cert-key-pass"
                        : "--cert-key-pass does not decrypt \(keyPath)")
            } catch ClientCertificate.LoadingError.invalidPrivateKey {
                throw ValidationError("--cert-key: \(keyPath) holds no private key bonnet can read (PEM)")
            } catch ClientCertificate.LoadingError.invalidCertificateChain {
                throw ValidationError("--cert: \(cert) holds no PEM certificate")
            } catch {
                throw ValidationError("--cert: \(error)")
            }
        }
        return (trustManager, tls)
    }

    /// Why the file at `path` could not be read, in a person's words: it is missing, a folder, or unreadable.
    static func unreadable(_ path: String, in console: Console) -> String {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: console.file(path).path, isDirectory: &isFolder) else {
            return "cannot read \(path): there is no such file"
        }
        return isFolder.boolValue ? "cannot read \(path): it is a folder, not a file" : "cannot read \(path)"
    }

    /// `proxy` with any password in it replaced by `***`, for an error's text.
    static func withoutPassword(_ proxy: String) -> String {
        guard var components = URLComponents(string: proxy), components.password != nil else { return proxy }
        components.password = "***"
        return components.string ?? "a proxy URL with credentials"
    }

    /// Whether `key` is a PEM private key protected by a passphrase (PKCS#8 `ENCRYPTED PRIVATE KEY`, or OpenSSL's
    /// traditional `Proc-Type: 4,ENCRYPTED`).
    static func isEncryptedKey(_ key: Data) -> Bool {
        guard let text = String(data: key, encoding: .utf8) else { return false }
        return text.contains("-----BEGIN ENCRYPTED PRIVATE KEY-----") || text.contains("Proc-Type: 4,ENCRYPTED")
    }
}
