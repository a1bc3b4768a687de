import Bluebonnet
import Foundation
import Logging
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `Session.withAllRequests`, `cancelAllRequests`, `requestSetup` and `logger`, over real sockets.
final class SessionRequestSetupTests: ServerTestCase {
    func testWithAllRequestsSeesResumedRequestsUntilTheyFinish() async throws {
        // Answered after ten seconds, so it is still active however long a busy machine takes to look; it is
        // cancelled long before.
        let slow = session.request(url("/delay/10"))
        let idle = session.request(url("/get"))
        let response = slow.serializingData()
        await arrival(of: "/delay/10")
        let active: Set<Request> = await withCheckedContinuation { continuation in
            session.withAllRequests { continuation.resume(returning: $0) }
        }
        XCTAssertEqual(active, [slow], "a request never resumed is not active")
        slow.cancel()
        _ = await response.response
        let after: Set<Request> = await withCheckedContinuation { continuation in
            session.withAllRequests { continuation.resume(returning: $0) }
        }
        XCTAssertTrue(after.isEmpty)
        withExtendedLifetime(idle) {}
    }

    func testAnEagerRequestIsActiveFromItsCreationSoMassActionsReachIt() async throws {
        let eager = Session(requestSetup: .eager)
        let requests = (0..<3).map { _ in eager.request(url("/get")) }
        let active: Set<Request> = await withCheckedContinuation { continuation in
            eager.withAllRequests { requests in
                for request in requests { request.suspend() }
                continuation.resume(returning: requests)
            }
        }
        XCTAssertEqual(active, Set(requests), "set up at once, so active though never resumed, as in Alamofire")
        XCTAssertTrue(requests.allSatisfy(\.isSuspended))
        for request in requests { request.cancel() }
        for request in requests { _ = await request.serializingData().response }
        let after: Set<Request> = await withCheckedContinuation { continuation in
            eager.withAllRequests { continuation.resume(returning: $0) }
        }
        XCTAssertTrue(after.isEmpty, "a finished request is not active")
    }

    func testRequestsWaitingToStartFinishWhenTheirSessionGoesAwayAndMonitorsHearItInvalidated() async throws {
        let queue = DispatchQueue(label: "invalidation")
        let monitor = ClosureEventMonitor(queue: queue)
        let invalidated = expectation(description: "invalidated")
        monitor.sessionDidBecomeInvalidWithError = { _, error in
            XCTAssertNil(error)
            invalidated.fulfill()
        }
        var session: Session? = Session(startRequestsImmediately: false, requestSetup: .eager, eventMonitors: [monitor])
        let finished = expectation(description: "finished")
        let failure = Recorder<AFError?>()
        let request = session?.request(url("/get")).response(queue: queue) { response in
            failure.append(response.error)
            finished.fulfill()
        }
        session?.drain()
        XCTAssertEqual(request?.isInitialized, true, "set up, never resumed")
        session = nil
        await fulfillment(of: [finished, invalidated], timeout: 30)
        XCTAssertEqual(failure.values.first??.isSessionDeinitializedError, true, "\(failure.values)")
    }

    func testCancelAllRequestsCancelsEveryActiveRequestThenCompletes() async throws {
        let requests = (0..<5).map { _ in session.request(url("/delay/10")) }
        let responses = requests.map { $0.serializingData() }
        await arrival(of: "/delay/10", count: 5)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            session.cancelAllRequests(completingOnQueue: .global()) { continuation.resume() }
        }
        for response in responses {
            let result = await response.response
            XCTAssertEqual(result.error?.isExplicitlyCancelledError, true)
            // The server answers after ten seconds: a request that waited for it would have its response head.
            XCTAssertNil(result.response, "the request waited for the server's answer")
        }
        XCTAssertTrue(requests.allSatisfy(\.isCancelled))
    }

    func testALazyRequestOnACustomRequestQueueMakesItsURLRequestThereOnResume() async throws {
        let requestQueue = DispatchQueue(label: "custom.request.queue")
        let key = DispatchSpecificKey<Bool>()
        requestQueue.setSpecific(key: key, value: true)
        let custom = Session(requestQueue: requestQueue)
        struct Probe: URLRequestConvertible {
            let url: String
            let onQueue: Recorder<Bool>
            let key: DispatchSpecificKey<Bool>
            func asURLRequest() throws -> URLRequest {
                onQueue.append(DispatchQueue.getSpecific(key: key) == true)
                return try URLRequest(url: url, method: .get)
            }
        }
        let onQueue = Recorder<Bool>()
        let request = custom.request(Probe(url: url("/get"), onQueue: onQueue, key: key))
        custom.drain()
        XCTAssertEqual(onQueue.values, [], "made before resume")
        let response = await request.serializingData().response
        XCTAssertEqual(response.response?.statusCode, 200)
        XCTAssertEqual(onQueue.values, [true])
        withExtendedLifetime(custom) {}
    }

    func testTheLoggerGetsLifecycleLinesWithTheRequestIDAndNoCredentials() async throws {
        let lines = Recorder<String>()
        var logger = Logger(label: "test") { _ in CapturingLogHandler(lines: lines) }
        logger.logLevel = .debug
        let logged = Session(logger: logger)
        let request = logged.request(
            "http://user:secret@127.0.0.1:\(server.port)/get?token=hunter2",
            headers: [.authorization(bearerToken: "bearer-secret")])
        _ = await request.serializingData().response
        let refused = await logged.request("http://user:secret@127.0.0.1:1/refused?token=hunter2").serializingData()
            .response
        XCTAssertNotNil(refused.error)
        let text = lines.values.joined(separator: "\n")
        XCTAssertTrue(text.contains("error=sessionTaskFailed"), "an error is named by its case: \(text)")
        XCTAssertTrue(text.contains("sending"), text)
        XCTAssertTrue(text.contains("completed"), text)
        XCTAssertTrue(text.contains(request.id.uuidString), "every line carries the request id")
        for secret in ["secret", "hunter2", "bearer-secret", "user:"] {
            XCTAssertFalse(text.contains(secret), "\(secret) leaked into the log: \(text)")
        }
        withExtendedLifetime(logged) {}
    }
}

extension SessionRequestSetupTests {
    func testTheLoggerIsHandedToAsyncHTTPClient() async throws {
        let lines = Recorder<String>()
        var logger = Logger(label: "test") { _ in CapturingLogHandler(lines: lines) }
        logger.logLevel = .trace
        let logged = Session(logger: logger)
        _ = try await logged.request(url("/get")).serializingData().value
        XCTAssertTrue(
            lines.values.contains { $0.contains("ahc-request-id") }, "AsyncHTTPClient's own lines: \(lines.values)")
        withExtendedLifetime(logged) {}
    }
}

/// Keeps every line as `message key=value ...`.
struct CapturingLogHandler: LogHandler {
    let lines: Recorder<String>
    var logLevel: Logger.Level = .trace
    var metadata: Logger.Metadata = [:]

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        lines.append(
            "\(event.message) " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
    }
}
