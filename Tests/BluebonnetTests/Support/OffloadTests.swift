@testable import Bluebonnet
import Dispatch
import XCTest

/// The offload queue runs a bounded number of pieces of work at once: a burst of blocking work (TLS handshakes whose
/// chain checks wait, slow file reads) holds `Offload.width` threads, and the rest waits its turn in order.
final class OffloadTests: XCTestCase {
    func testABurstOfBlockingWorkHoldsAtMostWidthThreadsAndAllOfItRuns() {
        let width = Offload.width
        let extra = 5
        let release = DispatchSemaphore(value: 0)
        let started = DispatchSemaphore(value: 0)
        let finished = DispatchGroup()
        let running = Protected<(now: Int, peak: Int)>((0, 0))
        for _ in 0..<(width + extra) {
            finished.enter()
            Offload.run {
                running.write {
                    $0.now += 1
                    $0.peak = max($0.peak, $0.now)
                }
                started.signal()
                release.wait()
                running.write { $0.now -= 1 }
                finished.leave()
            }
        }
        // A barrier, not a sleep: the first `width` are running (the 30 s are a hang guard only).
        for _ in 0..<width { XCTAssertEqual(started.wait(timeout: .now() + 30), .success) }
        // Every worker is blocked: the others wait in the backlog, not on threads of their own.
        XCTAssertGreaterThanOrEqual(Offload.backlog.read { $0.count }, extra)
        XCTAssertEqual(running.read { $0.now }, width)
        for _ in 0..<(width + extra) { release.signal() }
        XCTAssertEqual(finished.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(running.read { $0.peak }, width, "never more than the width at once")
        // Workers leave the queue once nothing waits: a barrier on it sees them gone.
        Offload.queue.sync(flags: .barrier) {}
        XCTAssertEqual(Offload.backlog.read { $0.workers }, 0)
    }
}
