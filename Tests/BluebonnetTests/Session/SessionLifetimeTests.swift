@testable import Bluebonnet
import BluebonnetTestServer
import Foundation
import Logging
import ServiceLifecycle
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `Session` as a service of a `ServiceGroup`, scoped by `withSession`, and shut down by hand: new requests are
/// refused, those in flight finish within the grace period or are cancelled when it ends, and the engine is released.
final class SessionShutdownTests: ServerTestCase {
    private var faults: FaultServer!

    override func setUp() async throws {
        try await super.setUp()
        faults = try await FaultServer.start()
    }

    override func tearDown() async throws {
        await faults?.stop()
        faults = nil
        try await super.tearDown()
    }

    private func group(running session: Session) -> (ServiceGroup, Task<Void, any Error>) {
        let group = ServiceGroup(
            configuration: ServiceGroupConfiguration(services: [session], logger: Logger(label: "lifetime-test")))
        return (group, Task { try await group.run() })
    }

    /// Returns once `session` has begun shutting down. A barrier on the session's own state (the group tells it
    /// asynchronously); each check waits a millisecond, and 30 s is a hang guard only.
    private func shutdownBegan(of session: Session) async throws {
        for _ in 0..<30_000 where !session.isShuttingDown { try await Task.sleep(for: .milliseconds(1)) }
        XCTAssertTrue(session.isShuttingDown, "the session never began shutting down")
    }

    private func shutdownReason(_ error: AFError?) -> AFError.SessionShutdownReason? {
        guard case let .sessionShutDown(reason)? = error else { return nil }
        return reason
    }

    func testARequestInFlightFinishesWithinTheGracePeriodAndANewOneIsRefused() async throws {
        let session = Session(shutdownGracePeriod: 120)
        let (group, run) = group(running: session)
        let slow = session.request(url("/delay/1")).serializingData()
        await arrival(of: "/delay/1")
        await group.triggerGracefulShutdown()
        try await shutdownBegan(of: session)

        let refused = await session.request(url("/get")).serializingData().response
        guard case .refusedAfterShutdownBegan? = shutdownReason(refused.error) else {
            return XCTFail("\(String(describing: refused.error))")
        }
        XCTAssertNil(refused.response, "a refused request is never sent")
        let finished = await slow.response
        XCTAssertNil(finished.error)
        XCTAssertEqual(finished.response?.statusCode, 200)
        try await run.value
        XCTAssertEqual(server.arrivals.targets.filter { $0 == "/get" }.count, 0)
    }

    func testARequestThatOutlastsTheGracePeriodIsCancelledWithTheReason() async throws {
        let session = Session(shutdownGracePeriod: 0.2)
        let (group, run) = group(running: session)
        let stuck = session.request(faults.url("/silent")).serializingData()
        await faults.arrivals.wait(forPath: "/silent", timeout: 30)
        await group.triggerGracefulShutdown()
        let outcome = await stuck.response
        guard case let .cancelledAfterGracePeriod(gracePeriod)? = shutdownReason(outcome.error) else {
            return XCTFail("\(String(describing: outcome.error))")
        }
        XCTAssertEqual(gracePeriod, 0.2)
        XCTAssertTrue(outcome.error?.isSessionShutDownError == true)
        XCTAssertTrue(outcome.error?.localizedDescription.contains("grace period") == true)
        try await run.value
    }

    func testCancellingTheTaskThatRunsTheSessionShutsItDownWithoutAGracePeriod() async throws {
        let session = Session(shutdownGracePeriod: 120)
        let stuck = session.request(faults.url("/silent")).serializingData()
        await faults.arrivals.wait(forPath: "/silent", timeout: 30)
        let run = Task { await session.run() }
        run.cancel()
        let outcome = await stuck.response
        guard case .cancelledAfterGracePeriod(0)? = shutdownReason(outcome.error) else {
            return XCTFail("\(String(describing: outcome.error))")
        }
        await run.value
        XCTAssertTrue(session.isShuttingDown)
    }

    func testWithSessionReturnsTheValueAndShutsTheSessionDown() async throws {
        let target = url("/get")
        let (status, kept) = try await Session.withSession { session in
            let response = await session.request(target).serializingData().response
            return (response.response?.statusCode, session)
        }
        XCTAssertEqual(status, 200)
        XCTAssertTrue(kept.isShuttingDown)
        let after = await kept.request(target).serializingData().response
        guard case .refusedAfterShutdownBegan? = shutdownReason(after.error) else {
            return XCTFail("\(String(describing: after.error))")
        }
    }

    func testWithSessionRethrowsTheBodysErrorAfterShuttingDown() async throws {
        struct Failure: Error {}
        let kept = Protected<Session?>(nil)
        do {
            _ = try await Session.withSession { session -> Int in
                kept.write { $0 = session }
                throw Failure()
            }
            XCTFail("withSession returned")
        } catch is Failure {
            XCTAssertEqual(kept.read { $0?.isShuttingDown }, true)
        }
    }

    func testAShutdownLeavesNoEventLoopThreadOfItsOwn() async throws {
        // The engine's loops are NIO's shared ones: warm them, then count.
        _ = await Session().request(url("/get")).serializingData().response
        let before = Self.eventLoopThreads()
        XCTAssertGreaterThan(before, 0)
        for _ in 0..<3 {
            try await Session.withSession { session in
                _ = await session.request(self.url("/get")).serializingData().response
                _ = await session.request(self.faults.url("/head-then-close")).serializingData().response
            }
        }
        XCTAssertEqual(Self.eventLoopThreads(), before)
    }

    func testShuttingDownTwiceWaitsForTheFirstAndAfterwardsEveryRequestIsRefused() async throws {
        let session = Session(shutdownGracePeriod: 0.2)
        let stuck = session.request(faults.url("/silent")).serializingData()
        await faults.arrivals.wait(forPath: "/silent", timeout: 30)
        async let first: Void = session.shutdown()
        async let second: Void = session.shutdown()
        _ = await (first, second)
        let stuckError = await stuck.response.error
        XCTAssertNotNil(shutdownReason(stuckError))
        let download = await session.download(url("/bytes/10")).serializingData().response.error
        let upload = await session.upload(Data("x".utf8), to: url("/post")).serializingData().response.error
        for error in [download, upload] {
            guard case .refusedAfterShutdownBegan? = shutdownReason(error) else {
                return XCTFail("\(String(describing: error))")
            }
        }
    }

    func testAFKeepsWorkingAfterTheGroupItRanInShutsDown() async throws {
        let (group, run) = group(running: AF)
        await group.triggerGracefulShutdown()
        try await run.value
        XCTAssertFalse(AF.isShuttingDown)
        let response = await AF.request(url("/get")).serializingData().response
        XCTAssertEqual(response.response?.statusCode, 200)
    }

    func testASessionDroppedWithARequestInFlightEndsItWithoutBlocking() async throws {
        var session: Session? = Session()
        let stuck = session!.request(faults.url("/silent")).serializingData()
        await faults.arrivals.wait(forPath: "/silent", timeout: 30)
        session = nil
        let outcome = await stuck.response
        XCTAssertNotNil(outcome.error)
        XCTAssertNil(outcome.response)
    }

    /// NIO's threads in this process, by name.
    static func eventLoopThreads() -> Int {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.filter { task in
            let name = (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? ""
            // Event loops ("NIO-SGLTN-…" for the shared group, "NIO-ELT-…" for any other) and NIO's thread pools.
            return name.hasPrefix("NIO-") || name.contains("TP-#")
        }.count
    }
}
