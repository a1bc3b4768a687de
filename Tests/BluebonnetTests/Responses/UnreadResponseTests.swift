@_spi(Transport) @testable import Bluebonnet
import BluebonnetTestServer
import Foundation
import InMemoryTracing
import Synchronization
import MetricsTestKit
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Issue 47 (2): the library's own features work from its response head, never from FoundationNetworking's
/// `HTTPURLResponse`, whose initialiser is the largest cost of a small request: requests through cookies, the cache,
/// redirects, challenges, validation, notifications, tracing, metrics and serializers, whose callers never read
/// `response`, make none (counted across the process). Before, the cache's invalidation, the cookie store, the
/// redirect and challenge followers, the metrics, `validate()` and a stream's start each made one. A validator of the
/// caller's, a monitor of the caller's told of validation, and a download still do (Alamofire's `Validation` closure,
/// `EventMonitor` and a download's destination take an `HTTPURLResponse`), so they are left out here.
final class UnreadResponseTests: ServerTestCase {
    func testRequestsThroughEveryFeatureMakeNoHTTPURLResponseUnlessOneIsRead() async throws {
        let configuration = URLSessionConfiguration.af.default
        configuration.urlCache = Session.HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 0)
        let tracer = InMemoryTracer()
        let metrics = TestMetrics()
        let session = Session(
            configuration: configuration,
            interceptor: RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0.001),
            eventMonitors: [AlamofireNotifications()], tracer: tracer,
            metrics: Session.MetricsOptions(factory: metrics))
        let before = ResponseHead.madeResponses.load(ordering: .relaxed)

        // Cookies set on a redirect and sent on its follow, a cached response read back, a challenge answered, a
        // stream, validation and serializers.
        let cookies = await session.request(url("/cookies/set?flavour=oat")).validate().serializingData().response
        XCTAssertEqual((try json(cookies.data)["cookies"] as? [String: String])?["flavour"], "oat")
        for _ in 0..<2 {
            let cached = await session.request(url("/cache/60")).validate(statusCode: 200..<300)
                .validate(contentType: ["application/json"]).serializingDecodable(Empty.self).response
            XCTAssertNil(cached.error)
        }
        let challenged = await session.request(url("/basic-auth/user/passwd"))
            .authenticate(username: "user", password: "passwd").serializingString().response
        XCTAssertNil(challenged.error)
        var streamed = 0
        for await chunk in session.streamRequest(url("/stream/3")).validate().streamTask().streamingData() {
            streamed += chunk.value?.count ?? 0
        }
        XCTAssertGreaterThan(streamed, 0)
        let redirected = await session.request(url("/redirect/2")).validate().serializingData().response
        XCTAssertNil(redirected.error)

        XCTAssertEqual(ResponseHead.madeResponses.load(ordering: .relaxed) - before, 0, "an unread response was made")
        XCTAssertGreaterThan(tracer.finishedSpans.count, 0)

        // Reading one makes one.
        _ = redirected.response?.statusCode
        XCTAssertEqual(ResponseHead.madeResponses.load(ordering: .relaxed) - before, 1)
    }
}
