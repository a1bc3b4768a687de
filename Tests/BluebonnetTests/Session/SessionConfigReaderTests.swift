import Bluebonnet
import BluebonnetTestServer
import Configuration
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `Session(configReader:)`: settings from environment variables, in AsyncHTTPClient's key names where the engine owns
/// them, applied over real sockets; and a value that cannot be used refused with the key it came from.
final class SessionConfigReaderTests: ServerTestCase {
    private func reader(_ environment: [String: String]) -> ConfigReader {
        ConfigReader(provider: EnvironmentVariablesProvider(environmentVariables: environment)).scoped(to: "upstream")
    }

    private func refusal(_ environment: [String: String]) -> Session.ConfigurationError? {
        do {
            _ = try Session(configReader: reader(environment))
            return nil
        } catch let AFError.sessionInvalidated(error?) {
            return error as? Session.ConfigurationError
        } catch {
            XCTFail("\(error)")
            return nil
        }
    }

    func testEnvironmentVariablesConfigureTheEngineTheRetrierAndTheLimits() async throws {
        let session = try Session(
            configReader: reader([
                "UPSTREAM_DNS_OVERRIDES": "bluebonnet.invalid:127.0.0.1",
                "UPSTREAM_TIMEOUT_READ_MS": "5000",
                "UPSTREAM_MAXIMUM_USES_PER_CONNECTION": "1",
                "UPSTREAM_RETRY_LIMIT": "2",
                "UPSTREAM_RETRY_BACKOFF_SCALE_MS": "1",
                "UPSTREAM_MAXIMUM_RESPONSE_SIZE_BYTES": "100",
                "UPSTREAM_SHUTDOWN_GRACE_PERIOD_MS": "250",
                "UPSTREAM_REDIRECT_MODE": "disallow",
                "UPSTREAM_COOKIES_ENABLED": "false",
            ]))
        XCTAssertEqual(session.sessionConfiguration.timeoutIntervalForRequest, 5)
        XCTAssertEqual(session.connections.dnsOverrides, ["bluebonnet.invalid": "127.0.0.1"])
        XCTAssertEqual(session.shutdownGracePeriod, 0.25)
        XCTAssertNil(session.sessionConfiguration.httpCookieStorage)
        // The override reaches the test server under a name that does not resolve.
        let base = "http://bluebonnet.invalid:\(server.port)"
        let echoed = await session.request("\(base)/get").serializingData().response
        XCTAssertEqual(echoed.response?.statusCode, 200)
        // One use per connection: two requests, two client ports.
        var ports: Set<Int> = []
        for _ in 0..<2 {
            let data = await session.request("\(base)/peer").serializingData().response.data
            ports.insert(try XCTUnwrap(try json(data)["port"] as? Int))
        }
        XCTAssertEqual(ports.count, 2)
        // The retrier retries a 503 twice.
        let retried = session.request("\(base)/status/503").validate()
        _ = await retried.serializingData().response
        XCTAssertEqual(retried.retryCount, 2)
        // The limit on a body held in memory.
        let large = await session.request("\(base)/bytes/1000").serializingData().response
        guard case .responseLimitExceeded(.maximumResponseSizeExceeded(limit: 100))? = large.error else {
            return XCTFail("\(String(describing: large.error))")
        }
        // Redirects are not followed.
        let redirect = await session.request("\(base)/redirect/1").serializingData().response
        XCTAssertEqual(redirect.response?.statusCode, 302)
    }

    func testNoKeysGiveTheDefaults() throws {
        let session = try Session(configReader: reader([:]))
        XCTAssertEqual(session.connections, Session.ConnectionSettings.default)
        XCTAssertEqual(session.shutdownGracePeriod, Session.defaultShutdownGracePeriod)
        XCTAssertEqual(session.maximumResponseSize, Session.defaultMaximumResponseSize)
        XCTAssertNil(session.interceptor)
        XCTAssertTrue(session.tls.allowsHTTP2)
    }

    func testAValueThatCannotBeUsedIsRefusedWithItsKey() {
        let cases: [([String: String], String)] = [
            (["UPSTREAM_TIMEOUT_READ_MS": "soon"], "timeout.readMs"),
            (["UPSTREAM_TIMEOUT_CONNECTION_MS": "0"], "timeout.connectionMs"),
            (["UPSTREAM_MAXIMUM_USES_PER_CONNECTION": "0"], "maximumUsesPerConnection"),
            (["UPSTREAM_HTTP_VERSION": "http3"], "httpVersion"),
            (["UPSTREAM_REDIRECT_MODE": "sometimes"], "redirect.mode"),
            (["UPSTREAM_DNS_OVERRIDES": "no-colon"], "dnsOverrides"),
            (["UPSTREAM_RETRY_LIMIT": "2", "UPSTREAM_RETRY_STATUS_CODES": "503,abc"], "retry.statusCodes"),
            (["UPSTREAM_LOCAL_ADDRESS": "eth0"], "localAddress"),
            (["UPSTREAM_PROXY_ENABLED": "true"], "proxy.host"),
            (["UPSTREAM_TRUST_ROOTS_FILE": "/nonexistent/roots.pem"], "trust.rootsFile"),
            (["UPSTREAM_CACHE_ENABLED": "yes please"], "cache.enabled"),
        ]
        for (environment, key) in cases {
            XCTAssertEqual(refusal(environment)?.setting, key, "\(environment)")
        }
    }
}

/// `trust.additionalRootsFile` and `httpVersion` over a real TLS server.
final class SessionConfigReaderTLSTests: TLSServerTestCase {
    func testARootsFileIsTrustedAndHTTP1OnlyIsKept() async throws {
        let server = try await tlsServer(http2: true)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("roots-\(UUID().uuidString).pem")
        try Data(certificates.root.pem.utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let environment = [
            "UPSTREAM_TRUST_ADDITIONAL_ROOTS_FILE": file.path, "UPSTREAM_HTTP_VERSION": "http1Only",
        ]
        let reader = ConfigReader(provider: EnvironmentVariablesProvider(environmentVariables: environment))
        let session = try Session(configReader: reader.scoped(to: "upstream"))
        let response = await session.request(server.url("/get")).serializingData().response
        XCTAssertNil(response.error)
        XCTAssertEqual(response.taskMetrics?.transactionMetrics.last?.networkProtocolName, "http/1.1")
        // Without the file the server's root is unknown.
        let plain = await Session().request(server.url("/get")).serializingData().response
        XCTAssertNotNil(plain.error)
    }
}
