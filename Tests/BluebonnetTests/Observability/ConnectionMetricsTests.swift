import Bluebonnet
import BluebonnetTestServer
import CoreMetrics
import Foundation
import MetricsTestKit
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Each connection the engine opens, as OpenTelemetry's connection metrics: counted open while it lives, its lifetime
/// recorded when it closes, by HTTP version, TLS version and peer.
final class ConnectionMetricsTests: TLSServerTestCase {
    private func dimensions(port: Int, version: String, tls: String?) -> [(String, String)] {
        var dimensions = [
            ("network.protocol.name", "http"), ("network.protocol.version", version),
            ("network.peer.address", "127.0.0.1"), ("network.peer.port", String(port)),
        ]
        if let tls { dimensions.append(("tls.protocol.version", tls)) }
        return dimensions + [("deployment", "test")]
    }

    /// Waits until `metrics` holds the connection-duration timer (the close is recorded on the connection's event
    /// loop as it closes); 30 s is a hang guard only.
    private func closeRecorded(
        _ metrics: TestMetrics, _ dimensions: [(String, String)]
    ) async throws -> TestTimer {
        for _ in 0..<30_000 {
            if let timer = try? metrics.expectTimer("http.client.connection.duration", dimensions) { return timer }
            try await Task.sleep(for: .milliseconds(1))
        }
        return try metrics.expectTimer("http.client.connection.duration", dimensions)
    }

    private func session(_ metrics: TestMetrics) -> Session {
        Session(
            tls: TLSSettings(trustRoots: .adding([certificates.root.certificate])),
            metrics: Session.MetricsOptions(dimensions: [("deployment", "test")], factory: metrics))
    }

    func testATLSConnectionIsCountedWhileOpenAndItsLifetimeRecordedWhenItCloses() async throws {
        let server = try await tlsServer()
        let metrics = TestMetrics()
        let session = session(metrics)
        for _ in 0..<3 { _ = await session.request(server.url("/get")).serializingData().response }
        let expected = dimensions(port: server.port, version: "1.1", tls: "1.3")
        let open = try metrics.expectMeter("http.client.open_connections", expected)
        XCTAssertEqual(open.values, [1], "three requests, one connection")
        await session.shutdown()
        let lived = try await closeRecorded(metrics, expected)
        XCTAssertEqual(lived.values.count, 1)
        XCTAssertEqual(open.values, [1, 0])
    }

    func testAnHTTP2ConnectionIsLabelledWithItsVersion() async throws {
        let server = try await tlsServer(http2: true)
        let metrics = TestMetrics()
        let session = session(metrics)
        let response = await session.request(server.url("/get")).serializingData().response
        XCTAssertNil(response.error)
        let open = try metrics.expectMeter(
            "http.client.open_connections", dimensions(port: server.port, version: "2", tls: "1.3"))
        XCTAssertEqual(open.values, [1])
        await session.shutdown()
    }

    func testACleartextConnectionHasNoTLSVersion() async throws {
        let server = try await plainServer()
        let metrics = TestMetrics()
        let session = session(metrics)
        _ = await session.request(server.url("/get")).serializingData().response
        let expected = dimensions(port: server.port, version: "1.1", tls: nil)
        XCTAssertEqual(try metrics.expectMeter("http.client.open_connections", expected).values, [1])
        await session.shutdown()
        let lived = try await closeRecorded(metrics, expected)
        XCTAssertEqual(lived.values.count, 1)
    }
}
