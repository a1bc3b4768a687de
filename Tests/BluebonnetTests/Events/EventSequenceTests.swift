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
        func request(_ request: Request, didCreateTask task: RequestTask) { add("task") }
        func request(_ request: Request, didResumeTask task: RequestTask) { add("taskResume") }
        func request(_ request: Request, didSuspendTask task: RequestTask) { add("taskSuspend") }
        func request(_ request: Request, didCancelTask task: RequestTask) { add("taskCancel") }
        func request(_ request: Request, didGatherMetrics metrics: RequestTaskMetrics) {
            add("metrics \(metrics.transactionMetrics.count)")
        }
        func request(_ request: Request, didCompleteTask task: RequestTask, with error: AFError?) {
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
                "valid", "finish", "parsed",
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
                "metrics 1", "taskDone", "valid", "finish", "parsed",
            ])
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
