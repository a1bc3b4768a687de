import Bluebonnet
import Foundation
import NIOCore
import NIOPosix
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `AlamofireNotifications`: which notifications a request posts, in what order, and from which threads.
final class NotificationTests: ServerTestCase {
    /// Records, in order, the names of Bluebonnet notifications about one request, and whether any was posted from
    /// an event loop.
    final class Observer: @unchecked Sendable {
        // @unchecked: `names` and `onEventLoop` are only touched under `lock`; the tokens only in init and deinit.
        private let lock = NSLock()
        private var names: [String] = []
        private var onEventLoop = false
        private var tokens: [any NSObjectProtocol] = []

        static let all: [Notification.Name] = [
            Request.didResumeNotification, Request.didSuspendNotification, Request.didCancelNotification,
            Request.didFinishNotification, Request.didResumeTaskNotification, Request.didSuspendTaskNotification,
            Request.didCancelTaskNotification, Request.didCompleteTaskNotification,
        ]

        init(of request: @escaping @Sendable () -> Request?) {
            for name in Self.all {
                tokens.append(
                    NotificationCenter.default.addObserver(forName: name, object: nil, queue: nil) { [weak self] note in
                        guard let self, let posted = note.request, posted == request() else { return }
                        let loop = MultiThreadedEventLoopGroup.currentEventLoop != nil
                        lock.lock(); defer { lock.unlock() }
                        names.append(note.name.rawValue.components(separatedBy: ".").last ?? "")
                        onEventLoop = onEventLoop || loop
                    })
            }
        }

        deinit { tokens.forEach(NotificationCenter.default.removeObserver) }

        var recorded: [String] { lock.lock(); defer { lock.unlock() }; return names }
        var sawEventLoop: Bool { lock.lock(); defer { lock.unlock() }; return onEventLoop }
    }

    final class Holder: @unchecked Sendable {
        // @unchecked: set once before any notification can name it, read after.
        var request: Request?
    }

    func testAFPostsResumeTaskAndFinishNotificationsInOrder() async throws {
        let holder = Holder()
        let observer = Observer { holder.request }
        let request = AF.request(url("/get"), shouldAutomaticallyResume: false)
        holder.request = request
        _ = try await request.resume().serializingData().value
        AF.drain()
        XCTAssertEqual(observer.recorded, ["didResume", "didResumeTask", "didCompleteTask", "didFinish"])
        XCTAssertFalse(observer.sawEventLoop)
    }

    func testSuspendAndCancelArePostedWithTheirTaskVariants() async throws {
        let session = Session(eventMonitors: [AlamofireNotifications()])
        let holder = Holder()
        let observer = Observer { holder.request }
        let request = session.request(url("/drip?numbytes=5&duration=10&delay=0"))
        holder.request = request
        let response = request.serializingData()
        await arrival(of: "/drip")
        request.suspend()
        request.cancel()
        _ = await response.response
        session.drain()
        XCTAssertEqual(
            observer.recorded,
            [
                "didResume", "didResumeTask", "didSuspend", "didSuspendTask", "didCancel",
                "didCancelTask", "didCompleteTask", "didFinish",
            ])
        XCTAssertFalse(observer.sawEventLoop)
        withExtendedLifetime(session) {}
    }

    func testASessionWithoutTheMonitorPostsNothing() async throws {
        let holder = Holder()
        let observer = Observer { holder.request }
        let request = session.request(url("/get"))
        holder.request = request
        _ = try await request.serializingData().value
        session.drain()
        XCTAssertEqual(observer.recorded, [])
    }

    func testInterleavedRequestsNotificationsEachCarryTheirOwnRequest() {
        let monitor = AlamofireNotifications()
        let first = session.request(url("/get"), shouldAutomaticallyResume: false)
        let second = session.request(url("/get"), shouldAutomaticallyResume: false)
        let firstObserver = Observer { first }
        let secondObserver = Observer { second }
        // One request's notifications share a `userInfo`; another request's event in between must not borrow it.
        monitor.requestDidResume(first)
        monitor.requestDidResume(second)
        monitor.requestDidFinish(first)
        monitor.requestDidResume(first)
        monitor.requestDidFinish(second)
        monitor.requestDidFinish(second)
        XCTAssertEqual(firstObserver.recorded, ["didResume", "didFinish", "didResume"])
        XCTAssertEqual(secondObserver.recorded, ["didResume", "didFinish", "didFinish"])
    }

    func testTheNotificationCarriesTheRequestUnderAlamofiresKey() {
        let request = session.request(url("/get"))
        let note = Notification(
            name: Request.didResumeNotification, object: nil,
            userInfo: ["org.alamofire.notification.key.request": request])
        XCTAssertEqual(note.request, request)
        XCTAssertNil(Notification(name: Request.didResumeNotification).request)
    }
}
