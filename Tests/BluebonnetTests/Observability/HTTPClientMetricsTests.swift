import Bluebonnet
import BluebonnetTestServer
import CoreMetrics
import Foundation
import MetricsTestKit
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// OpenTelemetry's HTTP client metrics through swift-metrics, with a test backend given to the session (a process
/// bootstraps `MetricsSystem` only once): names, dimensions and values.
final class HTTPClientMetricsTests: ServerTestCase {
    private var metrics: TestMetrics!

    override func setUp() async throws {
        try await super.setUp()
        metrics = TestMetrics()
    }

    private func measured(
        _ configure: (URLSessionConfiguration) -> Void = { _ in }, dimensions: [(String, String)] = []
    )
        -> Session
    {
        let configuration = URLSessionConfiguration.af.default
        configure(configuration)
        return Session(
            configuration: configuration, interceptor: RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0.01),
            metrics: .init(dimensions: dimensions, factory: metrics))
    }

    private var port: String { String(URL(string: url("/"))?.port ?? 0) }

    private func hop(_ method: String, status: Int?, error: String? = nil) -> [(String, String)] {
        var dimensions = [
            ("http.request.method", method), ("server.address", "127.0.0.1"), ("server.port", port),
            ("url.scheme", "http"),
        ]
        if let status { dimensions.append(("http.response.status_code", String(status))) }
        if let error { dimensions.append(("error.type", error)) }
        return dimensions
    }

    func testARequestRecordsItsDurationItsBodySizesAndIsActiveWhileItRuns() async throws {
        let session = measured()
        _ = try await session.request(url("/bytes/1000")).serializingData().value
        let duration = try metrics.expectTimer("http.client.request.duration", hop("GET", status: 200))
        XCTAssertEqual(duration.values.count, 1)
        XCTAssertGreaterThan(duration.lastValue ?? 0, 0)
        let received = try metrics.expectRecorder("http.client.response.body.size", hop("GET", status: 200))
        XCTAssertEqual(received.values, [1000])
        let active = try metrics.expectMeter("http.client.active_requests", Array(hop("GET", status: nil)))
        XCTAssertEqual(active.values, [1, 0], "counted from its first hop until it finished")

        _ = try await session.upload(Data(count: 300), to: url("/post")).serializingData().value
        let sent = try metrics.expectRecorder("http.client.request.body.size", hop("POST", status: 200))
        XCTAssertEqual(sent.values, [300])
    }

    func testEachHopOfARetriedRequestIsMeasuredAndTheRetryIsCounted() async throws {
        let session = measured()
        let response = await session.request(url("/status/503")).validate().serializingData().response
        XCTAssertNotNil(response.error)
        let failedHop = try metrics.expectTimer("http.client.request.duration", hop("GET", status: 503, error: "503"))
        XCTAssertEqual(failedHop.values.count, 1, "the first attempt: a 503")
        let last = try metrics.expectTimer(
            "http.client.request.duration", hop("GET", status: 503, error: "responseValidationFailed"))
        XCTAssertEqual(last.values.count, 1, "the retry, with the request's error")
        let retries = try metrics.expectCounter("bluebonnet.client.retries", hop("GET", status: nil))
        XCTAssertEqual(retries.totalValue, 1)
    }

    func testARetryASerializerAsksForAfterTheRequestFinishedIsCountedOnce() async throws {
        struct Missing: Decodable, Sendable { let absent: Int }
        let retrier = Retrier { request, _, error, completion in
            let serialization = error.asAFError?.isResponseSerializationError == true
            completion(request.retryCount == 0 && serialization ? .retry : .doNotRetry)
        }
        let session = Session(interceptor: retrier, metrics: .init(factory: metrics))
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            session.request(url("/get")).responseDecodable(of: Missing.self) { _ in done.resume() }
        }
        let durations = metrics.timers(label: "http.client.request.duration")
        XCTAssertEqual(durations.flatMap(\.values).count, 2, "each hop once, though the request finished twice")
        let retries = try metrics.expectCounter("bluebonnet.client.retries", hop("GET", status: nil))
        XCTAssertEqual(retries.totalValue, 1)
        let active = try metrics.expectMeter("http.client.active_requests", hop("GET", status: nil))
        XCTAssertEqual(active.values, [1, 0, 1, 0])
    }

    func testACacheHitIsCountedAndExtraDimensionsAreAddedEverywhere() async throws {
        let cache = Session.HTTPCache(memoryCapacity: 10_000_000, diskCapacity: 0)
        let session = measured({ $0.urlCache = cache }, dimensions: [("service", "orders")])
        let cacheable = url("/cacheable/\(UUID().uuidString)?cache_control=max-age=600")
        _ = try await session.request(cacheable).serializingData().value
        _ = try await session.request(cacheable).serializingData().value
        let base = [("server.address", "127.0.0.1"), ("server.port", port), ("url.scheme", "http")]
        let hits = try metrics.expectCounter("bluebonnet.client.cache_hits", base + [("service", "orders")])
        XCTAssertEqual(hits.totalValue, 1)
        let duration = try metrics.expectTimer(
            "http.client.request.duration", hop("GET", status: 200) + [("service", "orders")])
        XCTAssertEqual(duration.values.count, 2)
    }

    func testAMethodOutsideTheKnownSetIsMeasuredAsOther() async throws {
        let session = Session(metrics: .init(factory: metrics))
        _ = await session.request(url("/anything"), method: HTTPMethod(rawValue: "FROBNICATE")).serializingData()
            .response
        let dimensions = metrics.timers.map(\.dimensions) + metrics.meters.map(\.dimensions)
        let methods = dimensions.flatMap { $0 }.filter { $0.0 == "http.request.method" }.map { $0.1 }
        XCTAssertFalse(methods.isEmpty, "the request was measured")
        XCTAssertEqual(Set(methods), ["_OTHER"], "\(dimensions)")
    }

    func testNothingIsRecordedWhenDisabledOrWithoutAFactoryAndAFailureHasItsErrorType() async throws {
        let disabled = Session(metrics: .disabled)
        _ = try await disabled.request(url("/get")).serializingData().value
        let unbootstrapped = Session()
        _ = try await unbootstrapped.request(url("/get")).serializingData().value
        XCTAssertTrue(metrics.timers.isEmpty)

        let closed = try await TestServer.start()
        let closedPort = closed.port
        await closed.stop()
        let refusing = Session(metrics: .init(factory: metrics))
        _ = await refusing.request("http://127.0.0.1:\(closedPort)/get").serializingData().response
        let refused = metrics.timers(label: "http.client.request.duration")
        XCTAssertEqual(refused.count, 1)
        XCTAssertTrue(
            refused.first?.dimensions.contains { $0 == "error.type" && $1 == "URLError(-1004)" } == true,
            "\(String(describing: refused.first?.dimensions))")
    }
}
