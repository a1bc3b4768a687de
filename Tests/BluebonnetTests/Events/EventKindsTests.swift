@testable import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A composite dispatches to a monitor of Bluebonnet's only the events it handles.
final class EventKindsTests: ServerTestCase {
    final class LifecycleOnly: SelectiveEventMonitor, @unchecked Sendable {
        // @unchecked: `events` is only touched on `queue`, which is serial.
        let queue = DispatchQueue(label: "lifecycle.only")
        let handledEvents: EventKinds = [.requestLifecycle]
        private var events: [String] = []
        var recorded: [String] { queue.sync { events } }
        func requestDidResume(_ request: Request) { events.append("resume") }
        func requestDidFinish(_ request: Request) { events.append("finish") }
        func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest) { events.append("send") }
        func request(_ request: Request, didResumeTask task: URLSessionTask) { events.append("task") }
    }

    func testOnlyTheHandledEventsAreDispatched() async throws {
        let monitor = LifecycleOnly()
        let monitored = Session(eventMonitors: [monitor])
        _ = try await monitored.request(url("/get")).serializingData().value
        monitored.drain()
        XCTAssertEqual(monitor.recorded, ["resume", "finish"])
        withExtendedLifetime(monitored) {}
    }

    func testWhatEachMonitorHandles() {
        XCTAssertEqual(EventKinds.handled(by: AlamofireNotifications()), [.requestLifecycle, .taskLifecycle])
        XCTAssertEqual(EventKinds.handled(by: ClosureEventMonitor()), .all)
        XCTAssertEqual(EventKinds.handled(by: nil), [])
        let composite = CompositeEventMonitor(monitors: [AlamofireNotifications(), LifecycleOnly()])
        XCTAssertEqual(EventKinds.handled(by: composite), [.requestLifecycle, .taskLifecycle])
    }

    func testARequestWhoseMonitorsIgnoreTasksMakesNone() {
        let lifecycle = Session(eventMonitors: [LifecycleOnly()])
        XCTAssertTrue(lifecycle.request(url("/get")).monitoredEvents.isDisjoint(with: .tasks))
        let notifying = Session(eventMonitors: [AlamofireNotifications()])
        XCTAssertFalse(notifying.request(url("/get")).monitoredEvents.isDisjoint(with: .tasks))
        XCTAssertFalse(notifying.request(url("/get")).monitoredEvents.contains(.parsing))
    }
}
