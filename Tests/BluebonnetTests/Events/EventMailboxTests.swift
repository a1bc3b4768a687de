@testable import Bluebonnet
import Dispatch
import XCTest

/// `EventMailbox`: a monitor's events in order, one hop to its queue per burst.
final class EventMailboxTests: XCTestCase {
    func testEventsRunInOrderOnTheMonitorsQueue() {
        let queue = DispatchQueue(label: "mailbox.order")
        let key = DispatchSpecificKey<Bool>()
        queue.setSpecific(key: key, value: true)
        let mailbox = EventMailbox(queue: queue)
        let seen = Recorder<Int>()
        let onQueue = Recorder<Bool>()
        for index in 0..<100 {
            mailbox.post {
                seen.append(index)
                onQueue.append(DispatchQueue.getSpecific(key: key) == true)
            }
        }
        queue.sync {}
        XCTAssertEqual(seen.values, Array(0..<100))
        XCTAssertTrue(onQueue.values.allSatisfy { $0 })
    }

    func testAnEventPostedWhileOneWaitsForTheQueueJoinsItsHop() {
        let queue = DispatchQueue(label: "mailbox.burst")
        let mailbox = EventMailbox(queue: queue)
        let seen = Recorder<String>()
        queue.suspend()
        mailbox.post { seen.append("first") }
        // Queued after the first event's hop and before the second event is posted: with a hop per event it would run
        // between them; the second event joins the first's hop instead, so it runs sooner, never later.
        queue.async { seen.append("other work") }
        mailbox.post { seen.append("second") }
        XCTAssertEqual(seen.values, [], "nothing runs until the queue does")
        queue.resume()
        queue.sync {}
        XCTAssertEqual(seen.values, ["first", "second", "other work"])
    }

    /// Alamofire's suite saw it (`RequestInstanceInterceptorTests`, some passes): with a mailbox per monitor, two
    /// monitors on one queue could hear a later event in the wrong order. The second monitor's drain, still running
    /// the first event, took the second event too, while the first monitor's drain for it queued behind. Monitors on
    /// one queue now share a mailbox: each event reaches them in their order.
    func testMonitorsOnOneQueueHearEachEventInTheirOrder() {
        let queue = DispatchQueue(label: "mailbox.shared")
        let first = ClosureEventMonitor(queue: queue)
        let second = ClosureEventMonitor(queue: queue)
        let composite = CompositeEventMonitor(monitors: [first, second])
        let seen = Recorder<String>()
        let secondIsRunningTheFirstEvent = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        composite.performEvent(.requestLifecycle) { monitor in
            let name = (monitor as AnyObject) === first ? "first" : "second"
            seen.append("\(name) 1")
            if (monitor as AnyObject) === second {
                secondIsRunningTheFirstEvent.signal()
                release.wait()
            }
        }
        secondIsRunningTheFirstEvent.wait()
        composite.performEvent(.requestLifecycle) { monitor in
            seen.append("\((monitor as AnyObject) === first ? "first" : "second") 2")
        }
        release.signal()
        queue.sync {}
        queue.sync {}
        XCTAssertEqual(seen.values, ["first 1", "second 1", "first 2", "second 2"])
    }

    func testEachEventIsHandedTheMonitorItWasPostedFor() {
        let queue = DispatchQueue(label: "mailbox.monitor")
        let mailbox = EventMailbox(queue: queue)
        let monitors = [ClosureEventMonitor(), ClosureEventMonitor(), ClosureEventMonitor()]
        let seen = Recorder<ObjectIdentifier>()
        for monitor in monitors + monitors.reversed() {
            mailbox.post(.other { seen.append(ObjectIdentifier($0 as AnyObject)) }, to: monitor)
        }
        queue.sync {}
        XCTAssertEqual(seen.values, (monitors + monitors.reversed()).map { ObjectIdentifier($0) })
    }

    func testAnEventPostedByAnEventRunsInTheSameDrainAndAfterIt() {
        let queue = DispatchQueue(label: "mailbox.nested")
        let mailbox = EventMailbox(queue: queue)
        let seen = Recorder<String>()
        mailbox.post {
            seen.append("outer")
            mailbox.post { seen.append("inner") }
            seen.append("outer end")
        }
        queue.sync {}
        XCTAssertEqual(seen.values, ["outer", "outer end", "inner"])
        // The mailbox is idle again: a later event hops anew.
        mailbox.post { seen.append("later") }
        queue.sync {}
        XCTAssertEqual(seen.values.last, "later")
    }

    func testABatchingMailboxHoldsABurstForItsWindowThenRunsItInOrder() {
        let queue = DispatchQueue(label: "mailbox.batch")
        let mailbox = EventMailbox(queue: queue, window: .milliseconds(300))
        let seen = Recorder<Int>()
        let delivered = expectation(description: "the burst")
        mailbox.post { seen.append(1) }
        // A barrier on the idle queue runs at once: without a window the event would have run before it.
        queue.sync {}
        XCTAssertEqual(seen.values, [], "the first event waits for others")
        mailbox.post { seen.append(2) }
        mailbox.post {
            seen.append(3)
            delivered.fulfill()
        }
        wait(for: [delivered], timeout: 30)
        XCTAssertEqual(seen.values, [1, 2, 3], "the burst, in order, in one hop")
        // Idle again: the next event waits for a window of its own, and runs.
        let later = expectation(description: "a later event")
        mailbox.post {
            seen.append(4)
            later.fulfill()
        }
        wait(for: [later], timeout: 30)
        XCTAssertEqual(seen.values, [1, 2, 3, 4])
    }

    func testFlushDeliversWhatWaitsForItsWindowAndTheTimerThenFindsNothing() {
        let queue = DispatchQueue(label: "mailbox.flush", attributes: .concurrent)
        let mailbox = EventMailbox(queue: queue, window: .milliseconds(200))
        let seen = Recorder<Int>()
        for index in 0..<3 { mailbox.post { seen.append(index) } }
        mailbox.flush()
        XCTAssertEqual(seen.values, [0, 1, 2], "a flush is a barrier that sees every event posted before it")
        // The window's own drain comes later and finds nothing left; a new burst is delivered by its own.
        let later = expectation(description: "the next burst")
        mailbox.post {
            seen.append(3)
            later.fulfill()
        }
        wait(for: [later], timeout: 30)
        XCTAssertEqual(seen.values, [0, 1, 2, 3])
    }

    func testOnlyAlamofireNotificationsBatchesItsEvents() {
        XCTAssertEqual(EventMailbox(for: AlamofireNotifications()).window, .milliseconds(1))
        XCTAssertNil(EventMailbox(for: ClosureEventMonitor()).window, "a user's monitor hears each event at once")
    }
}

extension EventMailbox {
    /// Posts a closure as an event for a monitor that ignores it.
    fileprivate func post(_ body: @escaping @Sendable () -> Void) {
        post(.other { _ in body() }, to: ClosureEventMonitor())
    }
}
