@testable import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `connectionProxyDictionary` through a real proxy (tinyproxy): plain targets forwarded in absolute form, TLS targets
/// tunnelled with `CONNECT`, Basic credentials that reach the proxy and never the origin, a 407 as a clear error, and exceptions going direct.
final class ProxyInteropTests: ServerTestCase {
    /// Sessions made by the test, kept alive until it ends.
    private var sessions: [Session] = []

    private func session(proxy: [AnyHashable: Any], trust: ServerTrustManager? = nil) -> Session {
        let configuration = URLSessionConfiguration.af.default
        configuration.connectionProxyDictionary = proxy
        let session = Session(configuration: configuration, serverTrustManager: trust)
        sessions.append(session)
        return session
    }

    /// An HTTPS test server, and a trust manager pinning its leaf.
    private func pinnedTLSServer() async throws -> (TestServer, ServerTrustManager) {
        let certificates = try TestCertificates()
        let tlsServer = try await TestServer.start(
            tls: try certificates.serverConfiguration(
                presenting: certificates.leaf,
                chain: [certificates.intermediate]))
        let pinned = ServerTrustManager(evaluators: [
            "127.0.0.1": PinnedCertificatesTrustEvaluator(
                certificates: [certificates.leaf.certificate], performDefaultValidation: false)
        ])
        return (tlsServer, pinned)
    }

    /// Issue 43 (12): a plain `http://` request was tunnelled with `CONNECT`; it goes to the proxy in absolute form,
    /// with the origin's `Host`, and the field that carries the origin to the connection never leaves it.
    func testPlainHTTPGoesThroughTheProxyInAbsoluteForm() async throws {
        let proxy = try Tinyproxy()
        let session = session(proxy: proxy.dictionary())
        let response = await session.request(url("/get?via=proxy")).serializingData().response
        XCTAssertNil(response.error)
        let body = try json(response.data)
        XCTAssertEqual(body["args"] as? [String: String], ["via": "proxy"])
        let headers = try XCTUnwrap(body["headers"] as? [String: String])
        XCTAssertEqual(headers.first { $0.key.lowercased() == "host" }?.value, "127.0.0.1:\(server.port)")
        XCTAssertFalse(headers.keys.contains { $0.lowercased().hasPrefix("x-bluebonnet") }, "\(headers)")
        let posted = await session.upload(Data("abc".utf8), to: url("/post?n=2"), method: .post).serializingData()
            .response
        XCTAssertEqual(try json(posted.data)["data"] as? String, "abc")
        XCTAssertEqual(
            proxy.forwarded,
            ["GET http://127.0.0.1:\(server.port)/get?via=proxy", "POST http://127.0.0.1:\(server.port)/post?n=2"])
        XCTAssertEqual(proxy.tunnels, [], "nothing was tunnelled")
    }

    /// Issue 43 (12): a proxy that opens tunnels to port 443 only (squid's default) refused every plain `http://`
    /// request, which it forwards.
    func testAPlainHTTPRequestPassesAProxyThatTunnelsTo443Only() async throws {
        let proxy = try Tinyproxy(connectPorts: [443])
        let response = await session(proxy: proxy.dictionary()).request(url("/get")).serializingData().response
        XCTAssertNil(response.error)
        XCTAssertEqual(response.response?.statusCode, 200)
        XCTAssertEqual(proxy.forwarded, ["GET http://127.0.0.1:\(server.port)/get"])
    }

    func testAProxyThatRefusesTheTunnelIsNamedInTheError() async throws {
        // tinyproxy allowing CONNECT to port 443 only, as squid does by default: a TLS target on another port is
        // refused, and the error says so rather than blaming the server.
        let proxy = try Tinyproxy(connectPorts: [443])
        let (tlsServer, pinned) = try await pinnedTLSServer()
        let response = await session(proxy: proxy.dictionary(), trust: pinned).request(tlsServer.url("/get"))
            .serializingData().response
        await tlsServer.stop()
        guard case let .sessionTaskFailed(error as URLError)? = response.error else {
            return XCTFail("\(String(describing: response.error))")
        }
        XCTAssertEqual(error.code, .cannotConnectToHost)
        XCTAssertTrue(
            error.localizedDescription.contains(
                "proxy 127.0.0.1:\(proxy.port) refused to open a tunnel (CONNECT) to "
                    + "127.0.0.1:\(tlsServer.port)"), error.localizedDescription)
        XCTAssertEqual(error.failingURL, tlsServer.url("/get"))
        XCTAssertTrue(tlsServer.arrivals.targets.isEmpty, "nothing reached the server")
    }

    func testATLSTargetIsTunnelledAndItsTrustStillEnforced() async throws {
        let proxy = try Tinyproxy()
        let (tlsServer, pinned) = try await pinnedTLSServer()
        let response = await session(proxy: proxy.dictionary(), trust: pinned).request(tlsServer.url("/get"))
            .serializingData().response
        XCTAssertNil(response.error)
        let other = try TestCertificates()
        let wrongPin = ServerTrustManager(evaluators: [
            "127.0.0.1": PinnedCertificatesTrustEvaluator(
                certificates: [other.leaf.certificate], performDefaultValidation: false)
        ])
        let refused = await session(proxy: proxy.dictionary(), trust: wrongPin).request(tlsServer.url("/get"))
            .serializingData().response
        guard case .serverTrustEvaluationFailed(reason: .certificatePinningFailed)? = refused.error else {
            await tlsServer.stop()
            return XCTFail("\(String(describing: refused.error))")
        }
        XCTAssertEqual(Set(proxy.tunnels), ["127.0.0.1:\(tlsServer.port)"])
        await tlsServer.stop()
    }

    func testBasicCredentialsReachTheProxyAndNeverTheOrigin() async throws {
        let proxy = try Tinyproxy(credentials: ("walker", "s3cret"))
        // A forwarded request gets the proxy's answer as its response, as from any server.
        let missing = await session(proxy: proxy.dictionary()).request(url("/get")).serializingData().response
        XCTAssertNil(missing.error)
        XCTAssertEqual(missing.response?.statusCode, 407, "tinyproxy answers 407")
        let wrong = await session(proxy: proxy.dictionary(user: "walker", password: "nope")).request(url("/get"))
            .serializingData().response
        XCTAssertEqual(wrong.response?.statusCode, 401, "tinyproxy answers wrong credentials with 401")
        let right = await session(proxy: proxy.dictionary(user: "walker", password: "s3cret")).request(url("/headers"))
            .serializingData().response
        XCTAssertNil(right.error)
        XCTAssertEqual(right.response?.statusCode, 200)
        let headers = try XCTUnwrap(try json(right.data)["headers"] as? [String: String])
        XCTAssertFalse(
            headers.keys.contains { $0.lowercased() == "proxy-authorization" },
            "the origin saw the proxy's credentials: \(headers)")
        XCTAssertEqual(proxy.tunnels, [])
        // A tunnel the proxy refuses for want of credentials is an error: no response of the target's came.
        let (tlsServer, pinned) = try await pinnedTLSServer()
        let tunnelled = await session(proxy: proxy.dictionary(), trust: pinned).request(tlsServer.url("/get"))
            .serializingData().response
        await tlsServer.stop()
        XCTAssertEqual(tunnelled.error?.urlErrorCode, .userAuthenticationRequired, "tinyproxy answers 407")
    }

    func testExceptionsGoDirect() async throws {
        let proxy = try Tinyproxy()
        let response = await session(proxy: proxy.dictionary(exceptions: ["127.0.0.1"])).request(url("/get"))
            .serializingData().response
        XCTAssertNil(response.error)
        XCTAssertEqual(proxy.tunnels, [])
        XCTAssertEqual(proxy.forwarded, [])
        XCTAssertEqual(server.arrivals.targets, ["/get"])
    }

    func testASOCKSProxyCarriesPlainAndTLSTargetsAndHonoursExceptions() async throws {
        let proxy = try Microsocks()
        let plain = await session(proxy: proxy.dictionary()).request(url("/get?via=socks")).serializingData().response
        XCTAssertNil(plain.error)
        XCTAssertEqual(try json(plain.data)["args"] as? [String: String], ["via": "socks"])
        let (tlsServer, pinned) = try await pinnedTLSServer()
        let secure = await session(proxy: proxy.dictionary(), trust: pinned).request(tlsServer.url("/get"))
            .serializingData().response
        XCTAssertNil(secure.error)
        // Closed first: the server's graceful stop would otherwise wait out the idle connection in the tunnel.
        sessions.removeAll()
        await tlsServer.stop()
        let direct = await session(proxy: proxy.dictionary(exceptions: ["127.0.0.1"])).request(url("/get"))
            .serializingData().response
        XCTAssertNil(direct.error)
        XCTAssertEqual(proxy.connections, ["127.0.0.1:\(server.port)", "127.0.0.1:\(tlsServer.port)"])
    }

    func testASOCKSProxyThatDemandsCredentialsFailsTheRequest() async throws {
        let proxy = try Microsocks(credentials: ("walker", "s3cret"))
        let response = await session(proxy: proxy.dictionary()).request(url("/get")).serializingData().response
        XCTAssertNotNil(response.error)
        XCTAssertNil(response.response, "the request went around the proxy")
        XCTAssertEqual(proxy.connections, [])
    }

    func testASOCKSProxyThatIsDownFailsTheRequestRatherThanGoingDirect() async throws {
        let unused = try LocalDaemon.freePort()
        let response = await session(proxy: ["SOCKSEnable": 1, "SOCKSProxy": "127.0.0.1", "SOCKSPort": unused])
            .request(url("/get")).serializingData().response
        XCTAssertEqual(response.error?.urlErrorCode, .cannotConnectToHost)
        // Issue 43 (12): the proxy is named, not "the server".
        XCTAssertTrue(
            response.error?.localizedDescription.contains("Could not connect to the proxy 127.0.0.1:\(unused)") == true,
            "\(String(describing: response.error?.localizedDescription))")
    }

    /// Issue 43 (12): `all_proxy` was ignored, and a SOCKS5 proxy could not come from the environment at all.
    func testAllProxyNamesASOCKSProxyOrFillsTheSchemesWithoutOne() async throws {
        let socks = try URLSessionConfiguration.af.proxyDictionary(fromEnvironment: ["ALL_PROXY": "socks5h://127.0.0.1"]
        )
        XCTAssertEqual(ProxyConfiguration(dictionary: socks)?.socks?.port, 1080)
        let mixed = try XCTUnwrap(
            ProxyConfiguration(
                dictionary: try URLSessionConfiguration.af.proxyDictionary(fromEnvironment: [
                    "https_proxy": "http://secure.local:8443", "all_proxy": "http://every.local:3128",
                ])))
        XCTAssertEqual(mixed.https?.host, "secure.local", "a scheme's own variable wins")
        XCTAssertEqual(mixed.http?.host, "every.local")
        for refused in ["socks5://user:pw@127.0.0.1:1080", "socks4://127.0.0.1:1080", "https://proxy:443"] {
            XCTAssertThrowsError(
                try URLSessionConfiguration.af.proxyDictionary(fromEnvironment: ["all_proxy": refused]))
        }
        let proxy = try Microsocks()
        let dictionary = try URLSessionConfiguration.af.proxyDictionary(fromEnvironment: [
            "all_proxy": "socks5://127.0.0.1:\(proxy.port)"
        ])
        let response = await session(proxy: dictionary).request(url("/get")).serializingData().response
        XCTAssertNil(response.error)
        XCTAssertEqual(proxy.connections, ["127.0.0.1:\(server.port)"])
    }

    func testAnHTTPProxyIsPreferredOverSOCKSForItsScheme() {
        let configuration = ProxyConfiguration(dictionary: [
            "HTTPEnable": 1, "HTTPProxy": "web", "HTTPPort": 3128,
            "SOCKSEnable": 1, "SOCKSProxy": "socks", "SOCKSPort": 1080,
        ])
        XCTAssertEqual(configuration?.proxy(for: URL(string: "http://example.com/")!), .server(host: "web", port: 3128))
        XCTAssertEqual(
            configuration?.proxy(for: URL(string: "https://example.com/")!), .socksServer(host: "socks", port: 1080))
        XCTAssertEqual(ProxyConfiguration(dictionary: ["SOCKSEnable": 1, "SOCKSProxy": "socks"])?.socks?.port, 1080)
    }

    func testADisabledOrUnusableDictionaryMeansNoProxy() {
        XCTAssertNil(ProxyConfiguration(dictionary: nil))
        XCTAssertNil(ProxyConfiguration(dictionary: ["HTTPEnable": 0, "HTTPProxy": "proxy", "HTTPPort": 3128]))
        XCTAssertNil(ProxyConfiguration(dictionary: ["HTTPEnable": 1, "HTTPProxy": "proxy", "HTTPPort": 70000]))
        let configuration = ProxyConfiguration(dictionary: [
            "HTTPSEnable": true, "HTTPSProxy": "proxy.example", "HTTPSPort": "3128",
            "ExceptionsList": ["*.internal", ".corp.example", "localhost"],
        ])
        XCTAssertEqual(configuration?.https?.port, 3128)
        XCTAssertNil(configuration?.proxy(for: URL(string: "http://example.com/")!), "no HTTP proxy was given")
        XCTAssertNotNil(configuration?.proxy(for: URL(string: "https://example.com/")!))
        for direct in ["https://a.internal/", "https://internal/", "https://x.corp.example/", "https://LOCALHOST/"] {
            XCTAssertNil(configuration?.proxy(for: URL(string: direct)!), direct)
        }
        XCTAssertNotNil(configuration?.proxy(for: URL(string: "https://notinternal/")!))
    }

    func testTheEnvironmentIsReadOnlyWhenAskedAndLowercaseWins() throws {
        let dictionary = try URLSessionConfiguration.af.proxyDictionary(fromEnvironment: [
            "http_proxy": "http://walker:s%40cret@proxy.local:3128", "HTTP_PROXY": "http://ignored:1",
            "HTTPS_PROXY": "secure.local:8443", "NO_PROXY": "localhost, .internal ,",
        ])
        let configuration = try XCTUnwrap(ProxyConfiguration(dictionary: dictionary))
        XCTAssertEqual(
            configuration.http, .init(host: "proxy.local", port: 3128, username: "walker", password: "s@cret"))
        XCTAssertEqual(configuration.https?.host, "secure.local")
        XCTAssertEqual(configuration.https?.port, 8443)
        XCTAssertEqual(configuration.exceptions, ["localhost", ".internal"])
        XCTAssertTrue(try URLSessionConfiguration.af.proxyDictionary(fromEnvironment: [:]).isEmpty)
        XCTAssertThrowsError(
            try URLSessionConfiguration.af.proxyDictionary(fromEnvironment: ["https_proxy": "socks5://proxy:1080"])
        ) { error in
            XCTAssertEqual(
                error as? ProxyEnvironmentError,
                .unsupportedProxy(variable: "https_proxy", value: "socks5://proxy:1080"))
        }
    }

    /// Issue 24 (4): from `http_proxy=http://user:pw@A` and `https_proxy=http://B`, every `CONNECT` to B carried A's
    /// `Proxy-Authorization`.
    func testProxyCredentialsFromTheEnvironmentStayWithTheirProxy() throws {
        let dictionary = try URLSessionConfiguration.af.proxyDictionary(fromEnvironment: [
            "http_proxy": "http://alice:pw-a@proxy-a.local:3128", "https_proxy": "http://proxy-b.local:3129",
        ])
        let configuration = try XCTUnwrap(ProxyConfiguration(dictionary: dictionary))
        XCTAssertEqual(
            configuration.http, .init(host: "proxy-a.local", port: 3128, username: "alice", password: "pw-a"))
        XCTAssertEqual(configuration.https, .init(host: "proxy-b.local", port: 3129, username: nil, password: nil))
        XCTAssertEqual(
            configuration.proxy(for: URL(string: "https://example.com/")!), .server(host: "proxy-b.local", port: 3129))
        XCTAssertNil(dictionary["kCFProxyUsernameKey"], "no credentials for every proxy")
        // Each proxy keeps its own; CFNetwork's global keys still apply to a proxy that has none of its own.
        let both = try XCTUnwrap(
            ProxyConfiguration(
                dictionary: try URLSessionConfiguration.af.proxyDictionary(fromEnvironment: [
                    "http_proxy": "http://alice:pw-a@a:1", "https_proxy": "http://bob:pw-b@b:2",
                ])))
        XCTAssertEqual(both.http?.username, "alice")
        XCTAssertEqual(both.https?.username, "bob")
        XCTAssertEqual(both.https?.password, "pw-b")
        let global = try XCTUnwrap(
            ProxyConfiguration(dictionary: [
                "HTTPSEnable": 1, "HTTPSProxy": "c", "HTTPSPort": 3, "kCFProxyUsernameKey": "carol",
                "kCFProxyPasswordKey": "pw-c",
            ]))
        XCTAssertEqual(global.https?.username, "carol")
    }

    func testAnHTTPSProxyWithoutCredentialsNeverGetsTheHTTPProxysOnTheWire() async throws {
        // Proxy B demands the very credentials given for proxy A: only a leak would let the request through.
        let proxyA = try Tinyproxy(credentials: ("alice", "pw-a"))
        let proxyB = try Tinyproxy(credentials: ("alice", "pw-a"))
        let (tlsServer, pinned) = try await pinnedTLSServer()
        let environment = [
            "http_proxy": "http://alice:pw-a@127.0.0.1:\(proxyA.port)",
            "https_proxy": "http://127.0.0.1:\(proxyB.port)",
        ]
        let client = session(
            proxy: try URLSessionConfiguration.af.proxyDictionary(fromEnvironment: environment), trust: pinned)
        let refused = await client.request(tlsServer.url("/get")).serializingData().response
        XCTAssertEqual(refused.error?.urlErrorCode, .userAuthenticationRequired, "\(String(describing: refused.error))")
        // A's own credentials still reach A.
        let plain = await client.request(url("/get")).serializingData().response
        XCTAssertNil(plain.error)
        XCTAssertEqual(plain.response?.statusCode, 200)
        XCTAssertEqual(proxyA.forwarded, ["GET http://127.0.0.1:\(server.port)/get"])
        await tlsServer.stop()
    }
}
