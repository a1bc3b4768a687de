import Bluebonnet
import BluebonnetTopLevelNames
import Foundation
import XCTest

/// Code written against the top-level names Bluebonnet used to declare compiles with `BluebonnetTopLevelNames`
/// imported beside `Bluebonnet`, and the names are the nested types themselves.
final class TopLevelNamesModuleTests: XCTestCase {
    func testTheEarlierTopLevelNamesAreTheNestedTypes() throws {
        let timeline: Timeline = Request.Timeline()
        XCTAssertEqual(timeline, Request.Timeline())
        XCTAssertTrue(Image.self == ImageResponseSerializer.Image.self)
        XCTAssertEqual(Image.Format.png, ImageResponseSerializer.Image.Format.png)
        XCTAssertTrue(EventSource.self == DataStreamRequest.EventSource.self)
        let event = ServerSentEvent(data: "x", lastEventID: nil)
        XCTAssertEqual(event, DataStreamRequest.ServerSentEvent(data: "x", lastEventID: nil))
        let cache: HTTPCache = Session.HTTPCache(memoryCapacity: 0, diskCapacity: 0)
        XCTAssertEqual(cache.diskCapacity, 0)
    }
}
