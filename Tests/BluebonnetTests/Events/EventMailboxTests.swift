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
}

extension EventMailbox {
    /// Posts a closure as an event for a monitor that ignores it.
    fileprivate func post(_ body: @escaping @Sendable () -> Void) {
        post(.other { _ in body() }, to: ClosureEventMonitor())
    }
}
