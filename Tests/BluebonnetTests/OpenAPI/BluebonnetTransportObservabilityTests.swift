import Bluebonnet
import BluebonnetOpenAPI
import BluebonnetTestServer
import CoreMetrics
import Foundation
import InMemoryTracing
import MetricsTestKit
import OpenAPIFixtureClient
import Tracing
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An operation's `operationID` names its request's span, as swift-openapi's tracing middleware names its spans, and is
/// the `openapi.operation_id` attribute and metric dimension.
final class BluebonnetTransportObservabilityTests: ServerTestCase {
    func testTheOperationNamesTheRequestSpanAndIsAnAttribute() async throws {
        let tracer = InMemoryTracer()
        let client = Client(
            serverURL: server.url("/"), transport: BluebonnetTransport(session: Session(tracer: tracer)))
        _ = try await client.getEcho(query: .init(greeting: "traced")).ok.body.json
        let spans = tracer.finishedSpans
        let request = try XCTUnwrap(spans.first { $0.operationName == "getEcho" }, "\(spans.map(\.operationName))")
        XCTAssertEqual(request.attributes.get("openapi.operation_id")?.toSpanAttribute(), "getEcho")
        XCTAssertEqual(request.attributes.get("http.request.method")?.toSpanAttribute(), "GET")
        let hops = spans.filter { $0.parentSpanID == request.spanID }
        XCTAssertEqual(hops.map(\.operationName), ["GET"], "the hop keeps the method's name")

        // A plain request of the same session is named by its method, with no operation.
        let plainSession = Session(tracer: tracer)
        _ = try await plainSession.request(url("/get")).serializingData().value
        let plain = tracer.finishedSpans.filter { $0.operationName == "GET" && $0.parentSpanID == nil }
        XCTAssertFalse(plain.isEmpty)
        XCTAssertNil(plain.first?.attributes.get("openapi.operation_id"))
    }

    func testTheOperationIsADimensionOfTheRequestsMetrics() async throws {
        let metrics = TestMetrics()
        let client = Client(
            serverURL: server.url("/"),
            transport: BluebonnetTransport(session: Session(metrics: .init(factory: metrics))))
        _ = try await client.getEcho().ok.body.json
        let port = String(server.url("/").port ?? 0)
        let duration = try metrics.expectTimer(
            "http.client.request.duration",
            [
                ("http.request.method", "GET"), ("server.address", "127.0.0.1"), ("server.port", port),
                ("url.scheme", "http"), ("http.response.status_code", "200"), ("openapi.operation_id", "getEcho"),
            ])
        XCTAssertEqual(duration.values.count, 1)
    }
}
