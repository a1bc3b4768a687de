@testable import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The exact ordered events a monitor sees for success, failure, redirect, retry and cancel.
final class EventSequenceTests: FaultServerTestCase {
    final class Recording: EventMonitor, @unchecked Sendable {
        // @unchecked: `events` is only touched on `queue`, which is serial.
        let queue = DispatchQueue(label: "event.sequence")
        private var events: [String] = []

        var recorded: [String] { queue.sync { events } }
        private func add(_ event: String) { events.append(event) }

        func requestDidResume(_ request: Request) { add("resume") }
        func requestDidSuspend(_ request: Request) { add("suspend") }
        func requestDidCancel(_ request: Request) { add("cancel") }
        func requestDidFinish(_ request: Request) { add("finish") }
        func requestIsRetrying(_ request: Request) { add("retrying") }
        func request(_ request: Request, didCreateInitialURLRequest urlRequest: URLRequest) { add("initial") }
        func request(_ request: Request, didFailToCreateURLRequestWithError error: AFError) { add("createFailed") }
        func request(
            _ request: Request, didAdaptInitialRequest initialRequest: URLRequest, to adaptedRequest: URLRequest
        ) { add("adapted") }
        func request(_ request: Request, didFailToAdaptURLRequest initialRequest: URLRequest, withError error: AFError)
        { add("adaptFailed") }
        func request(_ request: Request, didCreateURLRequest urlRequest: URLRequest) {
            add("send \(urlRequest.url?.path ?? "")")
        }
        func request(
            _ request: DataRequest, didValidateRequest urlRequest: URLRequest?, response: HTTPURLResponse, data: Data?,
            withResult result: Request.ValidationResult
        ) {
            add((try? result.get()) != nil ? "valid" : "invalid")
        }
        func request(_ request: DataRequest, didParseResponse response: DataResponse<Data?, AFError>) { add("parsed") }
        func request<Value>(_ request: DataRequest, didParseResponse response: DataResponse<Value, AFError>) {
            add("parsed \(Value.self)")
        }
        func request(_ request: Request, didCreateTask task: URLSessionTask) { add("task") }
        func request(_ request: Request, didResumeTask task: URLSessionTask) { add("taskResume") }
        func request(_ request: Request, didSuspendTask task: URLSessionTask) { add("taskSuspend") }
        func request(_ request: Request, didCancelTask task: URLSessionTask) { add("taskCancel") }
        func request(_ request: Request, didGatherTaskMetrics metrics: RequestTaskMetrics) {
            add("metrics \(metrics.transactionMetrics.count)")
        }
        func request(_ request: Request, didCompleteTask task: URLSessionTask, with error: AFError?) {
            add(error == nil ? "taskDone" : "taskFailed")
        }
    }

    let monitor = Recording()

    func events(after request: DataRequest) async -> [String] {
        _ = await request.serializingResponse().response
        request.session?.drain()
        return monitor.recorded
    }

    func testSuccess() async {
        let session = Session(eventMonitors: [monitor])
        let events = await events(after: session.request(faults.url("/flaky?key=ok&failures=0")).validate())
        XCTAssertEqual(
            events,
            [
                "resume", "initial", "send /flaky", "task", "taskResume", "metrics 1", "taskDone",
                "valid", "valid", "finish", "parsed",
            ])
    }

    func testTransportFailure() async {
        let session = Session(eventMonitors: [monitor])
        let events = await events(after: session.request(faults.url("/flaky?key=fail&failures=1")))
        XCTAssertEqual(
            events,
            [
                "resume", "initial", "send /flaky", "task", "taskResume", "metrics 1", "taskFailed",
                "finish", "parsed",
            ])
    }

    func testCreationFailure() async {
        let session = Session(eventMonitors: [monitor])
        let events = await events(after: session.request("http://[not a url"))
        XCTAssertEqual(events, ["resume", "createFailed", "finish", "parsed"])
    }

    func testRedirect() async {
        let session = Session(eventMonitors: [monitor])
        let target = "/flaky?key=redirected%26failures=0".replacingOccurrences(of: "?", with: "%3F")
        let events = await events(after: session.request(faults.url("/redirect?location=\(target)")))
        XCTAssertEqual(
            events,
            [
                "resume", "initial", "send /redirect", "task", "taskResume", "send /flaky",
                "metrics 2", "taskDone", "finish", "parsed",
            ])
    }

    func testRetryWithAnAdapter() async {
        let interceptor = Interceptor(
            adaptHandler: { request, _, completion in completion(.success(request)) },
            retryHandler: { request, _, _, completion in completion(request.retryCount < 1 ? .retry : .doNotRetry) })
        let session = Session(interceptor: interceptor, eventMonitors: [monitor])
        let events = await events(after: session.request(faults.url("/flaky?key=retry&failures=1")).validate())
        XCTAssertEqual(
            events,
            [
                "resume", "initial", "adapted", "send /flaky", "task", "taskResume", "metrics 1",
                "taskFailed", "retrying", "initial", "adapted", "send /flaky", "task", "taskResume",
                "metrics 1", "taskDone", "valid", "valid", "finish", "parsed",
            ])
    }

    // MARK: - A request's own monitors

    func testAMonitorAddedToOneRequestHearsThatRequestAlone() async {
        let sessionMonitor = Recording()
        let session = Session(eventMonitors: [sessionMonitor])
        let events = await events(
            after: session.request(faults.url("/flaky?key=own&failures=0")).eventMonitor(monitor).validate())
        XCTAssertEqual(
            events,
            [
                "resume", "initial", "send /flaky", "task", "taskResume", "metrics 1", "taskDone", "valid", "valid",
                "finish",
                "parsed",
            ])
        XCTAssertEqual(sessionMonitor.recorded, events, "the session's monitor hears it too")
        _ = await session.request(faults.url("/flaky?key=other&failures=0")).validate().serializingResponse().response
        session.drain()
        XCTAssertEqual(monitor.recorded, events, "not another request of the session")
        XCTAssertEqual(sessionMonitor.recorded.count, 2 * events.count)
    }

    func testMonitorsAddedToARequestOfASessionWithoutMonitorsAreToldInOrder() async {
        let second = Recording()
        let session = Session()
        let request = session.request(faults.url("/flaky?key=own2&failures=0")).eventMonitor(monitor)
            .eventMonitor(second)
        let events = await events(after: request)
        withExtendedLifetime(session) {}
        second.queue.sync {}
        XCTAssertEqual(
            events,
            ["resume", "initial", "send /flaky", "task", "taskResume", "metrics 1", "taskDone", "finish", "parsed"])
        XCTAssertEqual(second.recorded, events)
    }

    // MARK: - `.eager` setup: the attempt is made, adapted and its task announced before any resume

    func testAnEagerRequestIsAdaptedAndItsTaskCreatedBeforeItIsResumed() async {
        let session = Session(
            startRequestsImmediately: false, requestSetup: .eager,
            interceptor: Adapter { request, _, completion in completion(.success(request)) }, eventMonitors: [monitor])
        let request = session.request(faults.url("/flaky?key=eager&failures=0"))
        session.drain()
        XCTAssertEqual(monitor.recorded, ["initial", "adapted", "send /flaky", "task"])
        XCTAssertTrue(request.isInitialized)
        for _ in 0..<3 { request.suspend() }
        session.drain()
        XCTAssertEqual(monitor.recorded.suffix(2), ["suspend", "taskSuspend"], "once each, however many calls")
        let events = await events(after: request.resume().validate())
        XCTAssertEqual(
            events,
            [
                "initial", "adapted", "send /flaky", "task", "suspend", "taskSuspend", "resume", "taskResume",
                "metrics 1", "taskDone", "valid", "valid", "finish", "parsed",
            ], "the hop is announced once")
    }

    func testAnEagerRequestSuspendedBeforeItsTaskIsMadeHearsItsTaskSuspended() async {
        // The request queue is held, so the suspension lands before the attempt is made.
        let requestQueue = DispatchQueue(label: "held.request.queue")
        requestQueue.suspend()
        let session = Session(
            startRequestsImmediately: false, requestSetup: .eager, requestQueue: requestQueue,
            eventMonitors: [monitor])
        let request = session.request(faults.url("/flaky?key=eager-suspended&failures=0"))
        request.suspend()
        requestQueue.resume()
        session.drain()
        XCTAssertEqual(monitor.recorded, ["suspend", "initial", "send /flaky", "task", "taskSuspend"])
        let events = await events(after: request.resume())
        XCTAssertEqual(
            Array(events.dropFirst(5)), ["resume", "taskResume", "metrics 1", "taskDone", "finish", "parsed"])
    }

    func testAnEagerRequestCancelledBeforeItIsResumedCancelsItsTask() async {
        let session = Session(startRequestsImmediately: false, requestSetup: .eager, eventMonitors: [monitor])
        let request = session.request(faults.url("/flaky?key=eager-cancel&failures=0"))
        session.drain()
        for _ in 0..<3 { request.cancel() }
        let events = await events(after: request)
        // Its task ends with metrics of no transaction, as a URLSession task cancelled before it ran does.
        XCTAssertEqual(
            events,
            ["initial", "send /flaky", "task", "cancel", "taskCancel", "metrics 0", "taskFailed", "finish", "parsed"])
        XCTAssertEqual(request.taskMetrics?.transactionMetrics.count, 0)
        XCTAssertEqual(request.state, .cancelled)
        XCTAssertFalse(faults.arrivals.targets.contains { $0.hasPrefix("/flaky") }, "nothing reached the server")
    }

    func testAnEagerRequestWhoseAdapterFailsFinishesBeforeAnyResume() async {
        struct Refused: Error {}
        let session = Session(
            startRequestsImmediately: false, requestSetup: .eager,
            interceptor: Adapter { _, _, completion in completion(.failure(Refused())) }, eventMonitors: [monitor])
        let request = session.request(faults.url("/flaky?key=eager-adapt&failures=0"))
        let finished = expectation(description: "finished without a resume")
        let failure = Recorder<AFError?>()
        request.response(queue: .global()) {
            failure.append($0.error)
            finished.fulfill()
        }
        await fulfillment(of: [finished], timeout: 30)
        session.drain()
        XCTAssertEqual(monitor.recorded.prefix(2), ["initial", "adaptFailed"], "adapted at once, not on resume")
        XCTAssertTrue(failure.values.first??.isRequestAdaptationError == true, "\(failure.values)")
    }

    func testAMonitorToldOfAFailedAdaptationOrCreationFindsTheErrorOnTheRequest() async {
        struct Refused: Error {}
        let seen = Recorder<String>()
        let closures = ClosureEventMonitor(queue: DispatchQueue(label: "closures"))
        closures.requestDidFailToAdaptURLRequestWithError = { request, _, _ in
            seen.append(request.error?.isRequestAdaptationError == true ? "adapt" : "no error")
        }
        closures.requestDidFailToCreateURLRequestWithError = { request, error in
            seen.append(request.error?.localizedDescription == error.localizedDescription ? "create" : "no error")
        }
        let refusing = Session(
            interceptor: Adapter { _, _, completion in completion(.failure(Refused())) }, eventMonitors: [closures])
        let unmakeable = Session(eventMonitors: [closures])
        // The monitor runs on its own queue as soon as it is told, racing the request: repeated, so that telling it
        // before the error is recorded would show.
        for round in 0..<20 {
            _ = await refusing.request(faults.url("/flaky?key=r\(round)&failures=0")).serializingResponse().response
            _ = await unmakeable.request("http://[bad").serializingResponse().response
        }
        refusing.drain()
        unmakeable.drain()
        XCTAssertEqual(seen.values.filter { $0 == "no error" }.count, 0)
        XCTAssertEqual(seen.values.count, 40)
    }

    func testAdapterFailure() async {
        struct Refused: Error {}
        let session = Session(
            interceptor: Adapter { _, _, completion in completion(.failure(Refused())) }, eventMonitors: [monitor])
        let events = await events(after: session.request(faults.url("/flaky?key=adapt&failures=0")))
        XCTAssertEqual(events, ["resume", "initial", "adaptFailed", "finish", "parsed"])
    }

    func testCancelDuringTheHop() async {
        let session = Session(eventMonitors: [monitor])
        let request = session.request(faults.url("/silent"))
        let response = request.serializingResponse()
        await arrival(of: "/silent")
        request.cancel()
        _ = await response.response
        session.drain()
        XCTAssertEqual(
            monitor.recorded,
            [
                "resume", "initial", "send /silent", "task", "taskResume", "cancel", "taskCancel",
                "metrics 1", "taskFailed", "finish", "parsed",
            ])
    }

    func testTheAsyncAPIParsesInTheHandlersTurnWhenAMonitorListensEvenIfNobodyAwaits() async {
        let session = Session(eventMonitors: [monitor])
        let request = session.request(faults.url("/flaky?key=parse&failures=0"))
        _ = request.serializingString()  // never awaited
        _ = await request.serializingResponse().response
        session.drain()
        XCTAssertEqual(Array(monitor.recorded.suffix(3)), ["finish", "parsed String", "parsed"])
    }
}
