@_spi(Transport) @testable import Bluebonnet
import XCTest

/// A readiness whose target is attached after the consumer may already have answered: the engine reads on without
/// making a wait when the answer came first, and never loses an answer that comes after.
final class TransportReadinessTests: XCTestCase {
    /// Records what a target was told, and how many targets were made.
    private final class Recorder: Sendable {
        let answers = Protected<[AFError?]>([])
        let made = Protected(0)

        func target() -> Target {
            made.write { $0 += 1 }
            return Target(recorder: self)
        }

        struct Target: ReadinessTarget {
            let recorder: Recorder
            func settle(_ error: AFError?) { recorder.answers.write { $0.append(error) } }
        }
    }

    func testAnAnswerGivenBeforeTheTargetIsReturnedAndNoTargetIsMade() {
        let recorder = Recorder()
        let readiness = TransportReadiness()
        readiness.ready()
        XCTAssertEqual(readiness.attach(recorder.target).map { $0 == nil }, true, "ready, given before the target")
        XCTAssertEqual(recorder.made.read { $0 }, 0)
        readiness.fail(.explicitlyCancelled)
        XCTAssertEqual(recorder.answers.read { $0.count }, 0, "only the first answer counts")
    }

    func testAFailureGivenBeforeTheTargetIsReturned() {
        let recorder = Recorder()
        let readiness = TransportReadiness()
        readiness.fail(.sessionDeinitialized)
        let answer = readiness.attach(recorder.target)
        XCTAssertEqual(answer??.isSessionDeinitializedError, true)
        XCTAssertEqual(recorder.made.read { $0 }, 0)
    }

    func testAnAnswerAfterTheTargetReachesIt() {
        let recorder = Recorder()
        let readiness = TransportReadiness()
        let answer = readiness.attach(recorder.target)
        XCTAssertTrue(answer == nil, "no answer yet")
        readiness.ready()
        readiness.fail(.explicitlyCancelled)
        XCTAssertEqual(recorder.made.read { $0 }, 1)
        XCTAssertEqual(recorder.answers.read { $0.map { $0 == nil } }, [true], "one answer: ready")
    }

    func testAReadinessDroppedUnansweredFailsItsTarget() {
        let recorder = Recorder()
        var readiness: TransportReadiness? = TransportReadiness()
        _ = readiness?.attach(recorder.target)
        readiness = nil
        XCTAssertEqual(recorder.answers.read { $0.map { $0?.isExplicitlyCancelledError } }, [true])
    }
}
