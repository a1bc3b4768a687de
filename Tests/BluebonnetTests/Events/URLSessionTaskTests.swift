@_spi(Transport) @testable import Bluebonnet
import BluebonnetTesting
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where Alamofire code names URLSession's types, Bluebonnet hands it URLSession's types: each attempt's
/// `URLSessionTask` (made only when asked for), monitors written for Alamofire that are called, `SessionDelegate`, and
/// `metrics` that are `URLSessionTaskMetrics`.
final class URLSessionTaskTests: ServerTestCase {
    /// A monitor as one is written for Alamofire: every task event with URLSession's own types.
    private final class AlamofireShapedMonitor: EventMonitor, @unchecked Sendable {
        // @unchecked: its only state is a `Recorder`, which locks.
        let queue = DispatchQueue(label: "alamofire.shaped.monitor")
        let events = Recorder<String>()
        let tasks = Recorder<URLSessionTask>()

        func request(_ request: Request, didCreateTask task: URLSessionTask) {
            tasks.append(task)
            events.append("create")
        }
        func request(_ request: Request, didResumeTask task: URLSessionTask) { events.append("resume") }
        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
            events.append(error == nil ? "urlSessionComplete" : "urlSessionFailed")
        }
        func request(_ request: Request, didCompleteTask task: URLSessionTask, with error: AFError?) {
            events.append("complete \(task.state == .completed)")
        }
        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse) {
            events.append("response \((response as? HTTPURLResponse)?.statusCode ?? 0)")
        }
        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            events.append("data \(data.count)")
        }
        func urlSession(
            _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest
        ) {
            events.append("redirect \(response.statusCode) \(request.url?.path ?? "")")
        }
        func urlSession(
            _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
            totalBytesExpectedToSend: Int64
        ) {
            events.append("sent \(totalBytesSent)/\(totalBytesExpectedToSend)")
        }
        func request(_ request: Request, didGatherTaskMetrics metrics: RequestTaskMetrics) {
            events.append("metrics \(metrics.transactionMetrics.count)")
        }
    }

    func testARequestsTaskIsAURLSessionDataTaskThatReadsTheRequest() async throws {
        let request = session.request(url("/bytes/1000?seed=3"))
        let response = await request.serializingData().response
        let task = try XCTUnwrap(request.task)
        XCTAssertTrue(task is URLSessionDataTask)
        XCTAssertFalse(task is URLSessionUploadTask)
        XCTAssertTrue(request.task === task, "the same object each time")
        XCTAssertEqual(request.tasks.count, 1)
        XCTAssertTrue(request.tasks.first === task)
        XCTAssertTrue(request.firstTask === task)
        XCTAssertEqual(task.state, .completed)
        XCTAssertEqual(task.originalRequest?.url, request.firstRequest?.url)
        XCTAssertEqual(task.currentRequest?.url, request.lastRequest?.url)
        XCTAssertEqual((task.response as? HTTPURLResponse)?.statusCode, 200)
        XCTAssertEqual(task.countOfBytesReceived, 1000)
        XCTAssertEqual(task.countOfBytesExpectedToReceive, 1000)
        XCTAssertEqual(task.countOfBytesSent, 0)
        XCTAssertNil(task.error)
        XCTAssertEqual(response.data?.count, 1000)
    }

    /// URLSession's events carry objects FoundationNetworking makes (the attempt's task, the `HTTPURLResponse`), which
    /// cost thousands of instructions: they are made on the monitor's queue when its event runs, never where the
    /// engine reported the event (an event loop). With the monitor's queue held, the request ends having made neither.
    func testATaskAndAResponseForAMonitorAreMadeOnItsQueueNotWhereTheEngineReports() async throws {
        let held = DispatchQueue(label: "held.monitor.queue")
        held.suspend()
        let monitor = ClosureEventMonitor(queue: held)
        let told = DispatchSemaphore(value: 0)
        let statuses = Protected<[Int]>([])
        monitor.dataTaskDidReceiveResponse = { _, _, response in
            statuses.write { $0.append((response as? HTTPURLResponse)?.statusCode ?? 0) }
            told.signal()
        }
        let session = Session(eventMonitors: [monitor])
        let request = session.request(url("/response-headers?X-One=1&X-Two=2"))
        let response = await request.serializingData().response
        XCTAssertNotNil(response.data)
        guard case let .head(head) = try XCTUnwrap(response.source) else { return XCTFail("no head from the engine") }
        XCTAssertFalse(head.isMade, "the HTTPURLResponse was made before the monitor's queue ran")
        XCTAssertTrue(
            request.mutableState.read { $0.sessionTasks.isEmpty }, "the task was made before the monitor's queue ran")
        held.resume()
        XCTAssertEqual(told.wait(timeout: .now() + 30), .success)
        XCTAssertEqual(statuses.read(), [200])
        XCTAssertTrue(head.isMade)
        await Task.detached { held.sync {} }.value
        XCTAssertFalse(request.mutableState.read { $0.sessionTasks.isEmpty }, "the monitor's events made the task")
    }

    /// A server's `Content-Length` is untrusted: a negative or malformed one is an unknown length (-1) on the task,
    /// never a negative count of bytes to come.
    func testAHostileContentLengthIsAnUnknownLengthOnTheTask() async throws {
        let transport = StubTransport()
        let session = transport.session()
        for (index, declared) in ["-5", "+7", "5, 5", "", "99999999999999999999", "12"].enumerated() {
            let request = session.request("https://api.example.com/\(index)")
            let response = request.serializingData()
            let attempt = await transport.attempt(index + 1)
            attempt.respond(headers: ["Content-Length": declared])
            attempt.complete()
            _ = await response.response
            let task = try XCTUnwrap(request.task)
            XCTAssertEqual(
                task.countOfBytesExpectedToReceive, declared == "12" ? 12 : -1, "Content-Length: \(declared)")
        }
    }

    func testAFailedAttemptsTaskCarriesItsError() async throws {
        // Nothing listens on port 9 of the loopback interface.
        let request = session.request("http://127.0.0.1:9/")
        _ = await request.serializingData().response
        let task = try XCTUnwrap(request.task)
        XCTAssertEqual(task.state, .completed)
        XCTAssertNotNil(task.error)
        XCTAssertNil(task.response)
    }

    func testARetriedRequestHasOneTaskPerAttempt() async throws {
        let request = session.request(
            url("/status/503"),
            interceptor: RetryPolicy(retryLimit: 1, exponentialBackoffBase: 2, exponentialBackoffScale: 0))
        _ = await request.serializingData().response
        XCTAssertEqual(request.retryCount, 1)
        let tasks = request.tasks
        XCTAssertEqual(tasks.count, 2)
        XCTAssertNotEqual(tasks.first?.taskIdentifier, tasks.last?.taskIdentifier)
        XCTAssertTrue(request.task === tasks.last)
        XCTAssertEqual(tasks.map(\.state), [.completed, .completed])
        XCTAssertEqual(tasks.map { ($0.response as? HTTPURLResponse)?.statusCode }, [503, 503])
    }

    func testUploadAndDownloadTasksAreURLSessionsKinds() async throws {
        let upload = session.upload(Data("body".utf8), to: url("/post"))
        _ = await upload.serializingData().response
        XCTAssertTrue(upload.task is URLSessionUploadTask)
        XCTAssertEqual(upload.task?.countOfBytesSent, 4)
        XCTAssertEqual(upload.task?.countOfBytesExpectedToSend, 4)

        let directory = try TemporaryDirectory()
        let target = directory.url.appendingPathComponent("task.bin")
        let download = session.download(url("/bytes/10?seed=1"), to: { _, _ in (target, []) })
        _ = await download.serializingDownloadedFileURL().response
        XCTAssertTrue(download.task is URLSessionDownloadTask)
        XCTAssertEqual(download.task?.countOfBytesReceived, 10)
    }

    func testTheTaskCreationHandlerGetsATaskWhoseCancelCancelsTheRequest() async throws {
        let request = session.request(url("/delay/30"))
        let created = expectation(description: "task")
        let handed = Recorder<URLSessionTask>()
        request.onURLSessionTaskCreation(on: .global()) { task in
            handed.append(task)
            XCTAssertEqual(task.state, .running)
            created.fulfill()
        }
        request.resume()
        await fulfillment(of: [created], timeout: 30)
        await arrival(of: "/delay/30")
        handed.values.first?.cancel()
        let response = await request.serializingData().response
        XCTAssertEqual(response.error?.isExplicitlyCancelledError, true)
        XCTAssertTrue(handed.values.first === request.task)
        XCTAssertEqual(request.task?.state, .completed)
    }

    func testTheTaskStreamYieldsEachAttemptsTask() async throws {
        let request = session.request(url("/get"))
        var yielded: [URLSessionTask] = []
        for await task in request.urlSessionTasks() { yielded.append(task) }
        XCTAssertEqual(yielded.count, 1)
        XCTAssertTrue(yielded.first === request.task)
    }

    func testAMonitorWrittenForAlamofireIsCalledWithTheRequestsTask() async throws {
        let monitor = AlamofireShapedMonitor()
        let session = Session(eventMonitors: [monitor])
        let request = session.request(url("/redirect-to?url=/bytes/5%3Fseed%3D2&status_code=307"))
        _ = await request.serializingData().response
        session.drain()
        XCTAssertEqual(
            monitor.events.values,
            [
                "create", "resume", "redirect 307 /bytes/5", "response 200", "data 5", "metrics 2",
                "urlSessionComplete", "complete true",
            ])
        XCTAssertTrue(monitor.tasks.values.first === request.task)

        let upload = session.upload(Data(count: 1000), to: url("/post"))
        _ = await upload.serializingData().response
        session.drain()
        XCTAssertTrue(monitor.events.values.contains("sent 1000/1000"), "\(monitor.events.values)")
    }

    func testURLSessionsEventsGoToTheSessionsMonitorsAlone() async throws {
        let sessionMonitor = AlamofireShapedMonitor()
        let requestMonitor = AlamofireShapedMonitor()
        let session = Session(eventMonitors: [sessionMonitor])
        let request = session.request(url("/bytes/5?seed=2")).eventMonitor(requestMonitor)
        _ = await request.serializingData().response
        session.drain()
        requestMonitor.queue.sync {}
        XCTAssertEqual(
            sessionMonitor.events.values,
            ["create", "resume", "response 200", "data 5", "metrics 1", "urlSessionComplete", "complete true"])
        XCTAssertEqual(
            requestMonitor.events.values, ["create", "resume", "metrics 1", "complete true"],
            "as Alamofire's SessionDelegate tells only the session's monitor of URLSession's events")
    }

    func testAnEagerRequestsTaskExistsBeforeResumeAndCompletesWhenItsSessionGoesAway() async throws {
        var session: Session? = Session(startRequestsImmediately: false, requestSetup: .eager)
        let finished = expectation(description: "finished")
        let created = expectation(description: "URLRequest made")
        let request = try XCTUnwrap(session?.request(url("/get")))
        request.onURLRequestCreation(on: .global()) { _ in created.fulfill() }
        request.response(queue: .global()) { _ in finished.fulfill() }
        await fulfillment(of: [created], timeout: 30)
        XCTAssertEqual(request.task?.state, .suspended, "made with the attempt, suspended until resumed")
        session = nil
        await fulfillment(of: [finished], timeout: 30)
        XCTAssertEqual(request.error?.isSessionDeinitializedError, true)
        XCTAssertEqual(request.task?.state, .completed)
    }

    func testAnEagerSessionReleasedAtOnceStillSetsUpItsRequestsAndCompletesTheirTasks() async throws {
        var session: Session? = Session(startRequestsImmediately: false, requestSetup: .eager)
        let finished = expectation(description: "finished")
        finished.expectedFulfillmentCount = 20
        let requests = (0..<20).compactMap { _ in
            session?.request(url("/get")).response(queue: .global()) { _ in finished.fulfill() }
        }
        session = nil
        await fulfillment(of: [finished], timeout: 30)
        for request in requests {
            XCTAssertEqual(request.error?.isSessionDeinitializedError, true)
            XCTAssertEqual(request.task?.state, .completed, "set up before the session went away, as in Alamofire")
        }
    }

    func testATaskCreationHandlerSetLateIsHandedTheCurrentAttemptsTask() async throws {
        let request = session.request(url("/get"))
        _ = await request.serializingData().response
        let handed = expectation(description: "handed")
        let tasks = Recorder<URLSessionTask>()
        request.onURLSessionTaskCreation(on: .global()) { task in
            tasks.append(task)
            handed.fulfill()
        }
        await fulfillment(of: [handed], timeout: 30)
        XCTAssertTrue(tasks.values.first === request.task)
    }

    func testAlamofiresNotificationsMakeNoTask() async throws {
        let session = Session(eventMonitors: [AlamofireNotifications()])
        let request = session.request(url("/get"))
        _ = await request.serializingData().response
        session.drain()
        XCTAssertTrue(request.mutableState.read { $0.sessionTasks.isEmpty }, "no URLSessionTask was made")
        XCTAssertNotNil(request.task, "one is made when asked for")
    }

    func testMetricsAreURLSessionsTypeAndBluebonnetsMeasurementsHaveTheirOwnName() async throws {
        let request = session.request(url("/get"))
        let response = await request.serializingData().response
        XCTAssertNil(response.metrics)
        XCTAssertNil(request.metrics)
        XCTAssertTrue(request.allMetrics.isEmpty)
        XCTAssertEqual(response.taskMetrics?.transactionMetrics.count, 1)
        XCTAssertEqual(request.allTaskMetrics.count, 1)
    }

    func testTheSessionDelegateIsTheURLSessionsAndItsFileManagerMovesDownloads() async throws {
        final class CountingFileManager: FileManager, @unchecked Sendable {
            // @unchecked: `moves` is a `Recorder`, which locks.
            let moves = Recorder<URL>()
            override func moveItem(at srcURL: URL, to dstURL: URL) throws {
                moves.append(dstURL)
                try super.moveItem(at: srcURL, to: dstURL)
            }
        }
        let plain = Session()
        XCTAssertTrue(plain.delegate === plain.session.delegate)

        let fileManager = CountingFileManager()
        let delegate = SessionDelegate(fileManager: fileManager)
        let session = Session(delegate: delegate)
        XCTAssertTrue(session.delegate === delegate)
        XCTAssertTrue(session.session.delegate === delegate)
        let directory = try TemporaryDirectory()
        let target = directory.url.appendingPathComponent("moved.bin")
        let response = await session.download(url("/bytes/10?seed=1"), to: { _, _ in (target, []) })
            .serializingDownloadedFileURL().response
        XCTAssertEqual(response.value, target)
        XCTAssertEqual(fileManager.moves.values, [target])

        let queue = DispatchQueue(label: "given.root")
        let delegateQueue = OperationQueue()
        delegateQueue.underlyingQueue = queue
        let given = URLSession(configuration: .af.default, delegate: delegate, delegateQueue: delegateQueue)
        let fromSession = Session(session: given, delegate: delegate, rootQueue: queue)
        XCTAssertTrue(fromSession.session === given)
        let answered = await fromSession.request(url("/get")).serializingData().response
        XCTAssertEqual(answered.response?.statusCode, 200)
    }
}
