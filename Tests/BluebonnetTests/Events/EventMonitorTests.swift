import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class EventMonitorTests: ServerTestCase {
    func testMonitorsSeeTheLifecycleOfARequest() async throws {
        let queue = DispatchQueue(label: "monitor")
        let events = Recorder<String>()
        let monitor = ClosureEventMonitor(queue: queue)
        monitor.requestDidCreateInitialURLRequest = { _, request in events.append("created \(request.url?.path ?? "")")
        }
        monitor.requestDidResume = { _ in events.append("resumed") }
        monitor.requestDidFinish = { _ in events.append("finished") }
        monitor.requestDidParseResponse = { _, response in events.append("parsed \(response.response?.statusCode ?? 0)")
        }
        let session = Session(eventMonitors: [monitor])
        _ = await session.request(url("/get")).response(queue: queue) { _ in }.serializingResponse().response
        session.drain()
        let seen = events.values
        XCTAssertTrue(seen.contains("created /get"), "\(seen)")
        XCTAssertTrue(seen.contains("resumed"))
        XCTAssertTrue(seen.contains("finished"))
        XCTAssertTrue(seen.contains("parsed 200"))
        XCTAssertLessThan(seen.firstIndex(of: "resumed")!, seen.firstIndex(of: "finished")!)
    }

    func testTheTaskLevelCompletionComesWithTheSessionsURLSessionAndTheAttemptsTaskAfterItsMetrics() async throws {
        let queue = DispatchQueue(label: "closures")
        let monitor = ClosureEventMonitor(queue: queue)
        let events = Recorder<String>()
        let completed = Recorder<(ObjectIdentifier, Int)>()
        monitor.taskDidComplete = { urlSession, task, error in
            completed.append((ObjectIdentifier(urlSession), task.taskIdentifier))
            events.append("task ended \(error == nil)")
        }
        monitor.requestDidGatherTaskMetrics = { _, metrics in
            events.append("gathered \(metrics.transactionMetrics.count)")
        }
        monitor.requestDidCompleteTaskWithError = { _, task, _ in events.append("completed \(task.taskIdentifier)") }
        let session = Session(eventMonitors: [monitor])
        let request = session.request(url("/redirect/1"))
        _ = await request.serializingData().response
        queue.sync {}
        let (urlSession, task) = try XCTUnwrap(completed.values.first)
        XCTAssertEqual(urlSession, ObjectIdentifier(session.session))
        XCTAssertEqual(task, request.task?.taskIdentifier)
        XCTAssertEqual(
            events.values, ["gathered 2", "task ended true", "completed \(task)"],
            "before the request's, as in Alamofire")
    }

    func testMonitorsSeeCancellationAndCreationFailures() async throws {
        let queue = DispatchQueue(label: "monitor")
        let events = Recorder<String>()
        let monitor = ClosureEventMonitor(queue: queue)
        monitor.requestDidCancel = { _ in events.append("cancelled") }
        monitor.requestDidFailToCreateURLRequestWithError = { _, error in
            events.append(error.isInvalidURLError ? "invalid" : "other")
        }
        let session = Session(eventMonitors: [monitor])
        _ = await session.request("").serializingData().response
        let cancelled = session.request(url("/delay/3"))
        let task = cancelled.serializingData()
        cancelled.cancel()
        _ = await task.response
        session.drain()
        XCTAssertEqual(Set(events.values), ["invalid", "cancelled"])
    }

    func testMonitorsSeeUploadablesMadeAndFailed() async throws {
        let queue = DispatchQueue(label: "monitor")
        let events = Recorder<String>()
        let monitor = ClosureEventMonitor(queue: queue)
        monitor.requestDidCreateUploadable = { _, uploadable in
            if case let .data(data) = uploadable { events.append("data \(data.count)") }
        }
        monitor.requestDidFailToCreateUploadableWithError = { _, error in
            events.append(error.isMultipartEncodingError ? "uploadable failed" : "other")
        }
        monitor.requestDidFailToCreateURLRequestWithError = { _, _ in events.append("url request failed") }
        let session = Session(eventMonitors: [monitor])
        _ = await session.upload(Data("12345".utf8), to: url("/post")).serializingData().response
        // A form with a missing file cannot be made into an uploadable (a missing file alone can: its task fails, as
        // URLSession's does).
        let missing = URL(fileURLWithPath: "/nonexistent/\(UUID().uuidString)")
        _ = await session.upload(multipartFormData: { $0.append(missing, withName: "f") }, to: url("/post"))
            .serializingData().response
        try await waitUntil { events.values.count == 2 }
        XCTAssertEqual(Set(events.values), ["data 5", "uploadable failed"])
    }

    func testARequestWithoutHandlersIsFinishedWhenItsMonitorsHearItFinished() async throws {
        let states = Recorder<Request.State>()
        let monitor = ClosureEventMonitor(queue: DispatchQueue(label: "monitor"))
        let session = Session(eventMonitors: [monitor])
        for _ in 0..<20 {
            let finished = expectation(description: "finished")
            monitor.requestDidFinish = { request in
                states.append(request.state)
                finished.fulfill()
            }
            let request = session.request(url("/get")).resume()
            await fulfillment(of: [finished], timeout: 30)
            withExtendedLifetime(request) {}
        }
        XCTAssertEqual(states.values.count, 20)
        XCTAssertEqual(Set(states.values), [.finished], "as in Alamofire, the state changes before the event is sent")
    }
}
