import BluebonnetTestServer
import Foundation
import XCTest

/// `bonnet --verify`, `--cert`, `--cert-key` and `--cert-key-pass` against HTTPS test servers, as httpie spells them.
extension BonnetCommandTests {
    /// An HTTPS server on a hierarchy made for the test, and a folder holding its root and a client identity as PEM.
    private func tlsServer(requireClientCertificate: Bool = false) async throws -> (
        TestServer, TestCertificates, TemporaryDirectory
    ) {
        let certificates = try TestCertificates()
        let tls = try certificates.serverConfiguration(
            presenting: certificates.leaf, chain: [certificates.intermediate],
            requireClientCertificate: requireClientCertificate)
        let server = try await TestServer.start(tls: tls)
        let directory = try TemporaryDirectory()
        try Data(certificates.root.pem.utf8).write(to: directory.url.appendingPathComponent("root.pem"))
        try Data((certificates.client.pem + certificates.intermediate.pem).utf8).write(
            to: directory.url.appendingPathComponent("client.pem"))
        try Data(certificates.client.privateKeyPEM.utf8).write(to: directory.url.appendingPathComponent("client.key"))
        try Data((certificates.client.pem + certificates.intermediate.pem + certificates.client.privateKeyPEM).utf8)
            .write(to: directory.url.appendingPathComponent("both.pem"))
        return (server, certificates, directory)
    }

    func testHTTP2IsNegotiatedByDefaultAndHTTP1OnlyWhenAsked() async throws {
        let certificates = try TestCertificates()
        let tls = try certificates.serverConfiguration(
            presenting: certificates.leaf, chain: [certificates.intermediate])
        let server = try await TestServer.start(tls: tls, http2: true)
        let directory = try TemporaryDirectory()
        let root = directory.url.appendingPathComponent("root.pem")
        try Data(certificates.root.pem.utf8).write(to: root)
        let url = server.url("/get").absoluteString
        let negotiated = try await bonnet(["--no-color", "-h", "--verify", root.path, url])
        XCTAssertTrue(negotiated.output.hasPrefix("HTTP/2 200"), negotiated.output + negotiated.errors)
        let http1 = try await bonnet(["--no-color", "-h", "--http1", "--verify", root.path, url])
        XCTAssertTrue(http1.output.hasPrefix("HTTP/1.1 200"), http1.output + http1.errors)
        await server.stop()
    }

    func testVerifyTakesACABundleOrNoAndRefusesAnUnknownRootByDefault() async throws {
        let (server, _, directory) = try await tlsServer()
        let url = server.url("/get").absoluteString
        let refused = try await bonnet(["--no-color", url])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.errors.contains("bonnet: error:"), refused.errors)
        let bundle = try await bonnet([
            "--no-color", "--verify", directory.url.appendingPathComponent("root.pem").path, url,
        ])
        XCTAssertEqual(bundle.status, 0, bundle.errors)
        XCTAssertTrue(bundle.output.contains("\"url\""), bundle.output)
        let unchecked = try await bonnet(["--no-color", "--verify=no", url])
        XCTAssertEqual(unchecked.status, 0, unchecked.errors)
        let missing = try await bonnet([
            "--no-color", "--verify", directory.url.appendingPathComponent("absent.pem").path, url,
        ])
        XCTAssertNotEqual(missing.status, 0)
        XCTAssertTrue(missing.errors.contains("cannot read"), missing.errors)
        await server.stop()
    }

    /// Issue 43 (14): `REQUESTS_CA_BUNDLE` and `SSL_CERT_FILE` were ignored, and an encrypted key without its
    /// passphrase failed with `invalidPrivateKey(underlying: …)`.
    func testCABundleVariablesAndAnEncryptedKeyAreHandledAsHTTPieDoes() async throws {
        let (server, _, directory) = try await tlsServer(requireClientCertificate: true)
        let url = server.url("/get").absoluteString
        let root = directory.url.appendingPathComponent("root.pem").path
        let identity = directory.url.appendingPathComponent("both.pem").path
        // This machine's own variables (CI images set all three to the system's bundle) stay out.
        let variables = ["REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SSL_CERT_FILE"]
        for variable in ["REQUESTS_CA_BUNDLE", "SSL_CERT_FILE"] {
            let run = try await bonnet(
                ["--no-color", "--cert", identity, url], environment: [variable: root],
                unsetting: variables.filter { $0 != variable })
            XCTAssertEqual(run.status, 0, "\(variable): \(run.errors)")
        }
        let absent = try await bonnet(
            ["--no-color", "--cert", identity, url], environment: ["REQUESTS_CA_BUNDLE": "/nonexistent/ca.pem"])
        XCTAssertNotEqual(absent.status, 0)
        XCTAssertTrue(absent.errors.contains("the REQUESTS_CA_BUNDLE variable: cannot read"), absent.errors)

        let key = directory.url.appendingPathComponent("client.key").path
        let encrypted = directory.url.appendingPathComponent("client-encrypted.key").path
        try TLSSettingsTests.openssl([
            "pkcs8", "-topk8", "-v2", "aes-256-cbc", "-in", key, "-out", encrypted, "-passout", "pass:s3cret",
        ])
        let chain = directory.url.appendingPathComponent("client.pem").path
        let base = ["--no-color", "--verify", root, "--cert", chain, "--cert-key", encrypted]
        let noPassphrase = try await bonnet(base + [url])
        XCTAssertNotEqual(noPassphrase.status, 0)
        XCTAssertTrue(
            noPassphrase.errors.contains("is encrypted: give its passphrase with --cert-key-pass"), noPassphrase.errors)
        let wrong = try await bonnet(base + ["--cert-key-pass", "wrong", url])
        XCTAssertTrue(wrong.errors.contains("--cert-key-pass does not decrypt"), wrong.errors)
        let right = try await bonnet(base + ["--cert-key-pass", "s3cret", url])
        XCTAssertEqual(right.status, 0, right.errors)
        await server.stop()
    }

    func testCertPresentsAClientIdentityFromOneFileOrTwo() async throws {
        let (server, _, directory) = try await tlsServer(requireClientCertificate: true)
        let url = server.url("/get").absoluteString
        let root = directory.url.appendingPathComponent("root.pem").path
        let anonymous = try await bonnet(["--no-color", "--verify", root, url])
        XCTAssertNotEqual(anonymous.status, 0, "the server asks for a certificate")
        // It said "the connection was lost before the response ended: I/O on closed channel" (issue 43) when the
        // server's alert was lost with the connection, which is the TLS layer's race to win; either way it says now
        // what is missing.
        XCTAssertFalse(anonymous.errors.contains("closed channel"), anonymous.errors)
        XCTAssertTrue(anonymous.errors.contains("requires a client certificate"), anonymous.errors)
        XCTAssertTrue(anonymous.errors.contains("give one with --cert"), anonymous.errors)
        let twoFiles = try await bonnet([
            "--no-color", "--verify", root, "--cert", directory.url.appendingPathComponent("client.pem").path,
            "--cert-key", directory.url.appendingPathComponent("client.key").path, url,
        ])
        XCTAssertEqual(twoFiles.status, 0, twoFiles.errors)
        let oneFile = try await bonnet([
            "--no-color", "--verify", root, "--cert", directory.url.appendingPathComponent("both.pem").path, url,
        ])
        XCTAssertEqual(oneFile.status, 0, oneFile.errors)
        let keyWithoutCert = try await bonnet([
            "--no-color", "--cert-key", directory.url.appendingPathComponent("client.key").path, url,
        ])
        XCTAssertNotEqual(keyWithoutCert.status, 0)
        XCTAssertTrue(keyWithoutCert.errors.contains("--cert-key needs --cert"), keyWithoutCert.errors)
        await server.stop()
    }

    func testProxyTakesASchemeAndAURLAndNoProxyGoesDirect() async throws {
        let proxy = try Tinyproxy()
        let through = try await bonnet(["--no-color", "--proxy", "http:http://127.0.0.1:\(proxy.port)", url("/get")])
        XCTAssertEqual(through.status, 0, through.errors)
        // In absolute form, as httpie sends it (issue 43, item 12), not through a tunnel.
        XCTAssertEqual(proxy.forwarded, ["GET http://127.0.0.1:\(server.port)/get"])
        XCTAssertEqual(proxy.tunnels, [])
        let direct = try await bonnet([
            "--no-color", "--proxy", "http:http://127.0.0.1:\(proxy.port)", "--no-proxy", "127.0.0.1", url("/get"),
        ])
        XCTAssertEqual(direct.status, 0, direct.errors)
        XCTAssertEqual(proxy.forwarded.count, 1)
        // A proxy that tunnels to port 443 only (squid's default) forwards a plain request.
        let squidLike = try Tinyproxy(connectPorts: [443])
        let forwarded = try await bonnet([
            "--no-color", "--proxy", "http:http://127.0.0.1:\(squidLike.port)", url("/get"),
        ])
        XCTAssertEqual(forwarded.status, 0, forwarded.errors)
        XCTAssertEqual(squidLike.forwarded, ["GET http://127.0.0.1:\(server.port)/get"])
        let malformed = try await bonnet(["--no-color", "--proxy", "127.0.0.1:3128", url("/get")])
        XCTAssertNotEqual(malformed.status, 0)
        XCTAssertTrue(malformed.errors.contains("SCHEME:URL"), malformed.errors)
    }

    /// Issue 43 (12): the environment's proxy variables were ignored (httpie honours them), `socks5://` could not be
    /// given, and a proxy that refused the connection was reported as "could not connect to the server".
    func testTheEnvironmentsProxiesSOCKSAndARefusedProxyAreHandledAsHTTPieDoes() async throws {
        let proxy = try Tinyproxy()
        let fromEnvironment = try await bonnet(
            ["--no-color", url("/get")], environment: ["http_proxy": "http://127.0.0.1:\(proxy.port)"])
        XCTAssertEqual(fromEnvironment.status, 0, fromEnvironment.errors)
        XCTAssertEqual(proxy.forwarded, ["GET http://127.0.0.1:\(server.port)/get"])
        let exempted = try await bonnet(
            ["--no-color", url("/get")],
            environment: ["HTTP_PROXY": "http://127.0.0.1:\(proxy.port)", "NO_PROXY": "127.0.0.1"])
        XCTAssertEqual(exempted.status, 0, exempted.errors)
        XCTAssertEqual(proxy.forwarded.count, 1, "no_proxy sends it direct")

        let socks = try Microsocks()
        let throughSOCKS = try await bonnet(
            ["--no-color", "--proxy", "all:socks5://127.0.0.1:\(socks.port)", url("/get")],
            environment: ["http_proxy": "http://127.0.0.1:1"])
        XCTAssertEqual(throughSOCKS.status, 0, throughSOCKS.errors)
        XCTAssertEqual(socks.connections, ["127.0.0.1:\(server.port)"])
        let oneScheme = try await bonnet(["--no-color", "--proxy", "http:socks5://127.0.0.1:1080", url("/get")])
        XCTAssertNotEqual(oneScheme.status, 0)
        XCTAssertTrue(oneScheme.errors.contains("--proxy=all:socks5://127.0.0.1:1080"), oneScheme.errors)

        let unused = try LocalDaemon.freePort()
        let refused = try await bonnet(["--no-color", "--proxy", "http:http://127.0.0.1:\(unused)", url("/get")])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(
            refused.errors.contains("could not connect to the proxy 127.0.0.1:\(unused)"), refused.errors)
        let unusable = try await bonnet(["--no-color", url("/get")], environment: ["https_proxy": "https://p:443"])
        XCTAssertNotEqual(unusable.status, 0)
        XCTAssertTrue(unusable.errors.contains("the https_proxy variable"), unusable.errors)
        let withPassword = try await bonnet(
            ["--no-color", url("/get")], environment: ["https_proxy": "https://walker:s3cret@p:443"])
        XCTAssertNotEqual(withPassword.status, 0)
        XCTAssertFalse(withPassword.errors.contains("s3cret"), "the proxy's password reached the error")
        XCTAssertTrue(withPassword.errors.contains("https://walker:***@p:443"), withPassword.errors)
    }
}
