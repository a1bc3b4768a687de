import Bluebonnet
import BluebonnetTestServer
import Foundation
import TopLevelNameFixtures
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `import Bluebonnet` adds no top-level name Alamofire lacks that an app's other modules commonly declare: this file
/// imports a module that declares `Image`, `Timeline`, `EventSource`, `ServerSentEvent` and `HTTPCache` and uses them
/// unqualified, which compiles only while Bluebonnet's types of those names are nested (it did not compile before).
final class TopLevelNamesTests: ServerTestCase {
    func testAnotherModulesShortNamesStayUnambiguousBesideBluebonnet() {
        // In type position, where a name two imported modules both declare is ambiguous (an initializer call alone
        // would be resolved by its arguments).
        let image: Image = Image(name: "logo")
        let timeline: Timeline = Timeline(events: ["a"])
        let source: EventSource = EventSource(url: "https://example.com/events")
        let event: ServerSentEvent = ServerSentEvent(data: "x")
        let cache: HTTPCache = HTTPCache(capacity: 1)
        XCTAssertEqual(image.name, "logo")
        XCTAssertEqual(timeline.events, ["a"])
        XCTAssertEqual(source.url, "https://example.com/events")
        XCTAssertEqual(event.data, "x")
        XCTAssertEqual(cache.capacity, 1)
    }

    func testBluebonnetsOwnTypesAreReachedThroughTheTypesTheyBelongTo() async throws {
        let response = await session.request(url("/get")).serializingData().response
        let timeline: Request.Timeline = response.timeline
        XCTAssertGreaterThan(timeline.requestStartTime, 0)

        let png = await session.request(url("/image/png")).serializingResponse(using: .image).response
        let image: ImageResponseSerializer.Image = try XCTUnwrap(png.value)
        XCTAssertEqual(image.format, .png)

        var events: [DataStreamRequest.ServerSentEvent] = []
        let source: DataStreamRequest.EventSource = session.eventSource(url("/sse?count=2"))
        for try await event in source {
            events.append(event)
            if events.count == 2 { break }
        }
        XCTAssertEqual(events.map(\.data).count, 2)

        let cache = Session.HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 0)
        XCTAssertEqual(cache.memoryCapacity, 1 << 20)
    }
}
