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
/// redirects, challenges, monitors, notifications, tracing, metrics and serializers, whose callers never read
/// `response`, make none (counted across the process). Before, the cache's invalidation, the cookie store, the
/// redirect and challenge followers, the metrics and a stream's start each made one. Validators and downloads still
/// do (Alamofire's `Validation` closure and a download's destination take an `HTTPURLResponse`), so they are left out
/// here: issue 47 stays open for them.
final class UnreadResponseTests: ServerTestCase {
    /// A monitor of the request events, which never reads a response.
    private final class ListeningMonitor: EventMonitor, @unchecked Sendable {
        // @unchecked: `events` is only touched on `queue`, a serial queue.
        let queue = DispatchQueue(label: "unread-response-monitor")
        var events = 0
        func requestDidResume(_ request: Request) { events += 1 }
        func requestDidFinish(_ request: Request) { events += 1 }
    }

    func testRequestsThroughEveryFeatureMakeNoHTTPURLResponseUnlessOneIsRead() async throws {
        let configuration = URLSessionConfiguration.af.default
        configuration.urlCache = Session.HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 0)
        let tracer = InMemoryTracer()
        let metrics = TestMetrics()
        let monitor = ListeningMonitor()
        let session = Session(
            configuration: configuration,
            interceptor: RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0.001),
            eventMonitors: [monitor, AlamofireNotifications()], tracer: tracer,
            metrics: Session.MetricsOptions(factory: metrics))
        let before = ResponseHead.madeResponses.load(ordering: .relaxed)

        // Cookies set on a redirect and sent on its follow, a cached response read back, a challenge answered, a
        // stream and serializers.
        let cookies = await session.request(url("/cookies/set?flavour=oat")).serializingData().response
        XCTAssertEqual((try json(cookies.data)["cookies"] as? [String: String])?["flavour"], "oat")
        for _ in 0..<2 {
            let cached = await session.request(url("/cache/60")).serializingDecodable(Empty.self).response
            XCTAssertNil(cached.error)
        }
        let challenged = await session.request(url("/basic-auth/user/passwd"))
            .authenticate(username: "user", password: "passwd").serializingString().response
        XCTAssertNil(challenged.error)
        var streamed = 0
        for await chunk in session.streamRequest(url("/stream/3")).streamTask().streamingData() {
            streamed += chunk.value?.count ?? 0
        }
        XCTAssertGreaterThan(streamed, 0)
        let redirected = await session.request(url("/redirect/2")).serializingData().response
        XCTAssertNil(redirected.error)

        XCTAssertEqual(ResponseHead.madeResponses.load(ordering: .relaxed) - before, 0, "an unread response was made")
        XCTAssertGreaterThan(tracer.finishedSpans.count, 0)
        XCTAssertGreaterThan(monitor.queue.sync { monitor.events }, 0)

        // Reading one makes one.
        _ = redirected.response?.statusCode
        XCTAssertEqual(ResponseHead.madeResponses.load(ordering: .relaxed) - before, 1)
    }
}
