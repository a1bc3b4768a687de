import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The events monitors hear of downloads and streams, with Alamofire's names.
final class DownloadAndStreamEventTests: ServerTestCase {
    private final class Monitor: EventMonitor, @unchecked Sendable {
        let queue = DispatchQueue(label: "monitor")
        let events = Recorder<String>()

        func request<Value>(_ request: DataStreamRequest, didParseStream result: Result<Value, AFError>) {
            events.append("parseStream \((try? result.get()).map { "\($0)" } ?? "failure")")
        }

        func request<Value>(_ request: DownloadRequest, didParseResponse response: DownloadResponse<Value, AFError>) {
            events.append("parseDownload \(response.value.map { "\($0)" } ?? "nil")")
        }
    }

    func testDownloadEventsReachClosureMonitors() async throws {
        let destinations = Recorder<URL>()
        let validations = Recorder<URL?>()
        let parsed = Recorder<Int?>()
        let closures = ClosureEventMonitor()
        closures.requestDidCreateDestinationURL = { _, url in destinations.append(url) }
        closures.requestDidValidateRequestResponseFileURLWithResult = { _, _, _, fileURL, _ in
            validations.append(fileURL)
        }
        closures.requestDidParseDownloadResponse = { _, response in parsed.append(response.response?.statusCode) }
        let session = Session(eventMonitors: [closures])
        let directory = try TemporaryDirectory()
        let target = directory.url.appendingPathComponent("events.bin")
        let response = await session.download(url("/bytes/10?seed=1"), to: { _, _ in (target, []) }).validate()
            .serializingDownloadedFileURL().response
        XCTAssertEqual(response.value, target)
        _ = await session.download(url("/bytes/10?seed=1"), to: { _, _ in (target, [.removePreviousFile]) })
            .serializingDownload(using: .url).response
        let request = session.download(url("/bytes/10?seed=1"), to: { _, _ in (target, [.removePreviousFile]) })
        let unserialized = expectation(description: "response")
        request.response { _ in unserialized.fulfill() }
        await fulfillment(of: [unserialized], timeout: 30)
        session.drain()
        XCTAssertEqual(destinations.values, [target, target, target])
        // `validate()` is two validators, as Alamofire's: the status, then the content type.
        XCTAssertEqual(validations.values, [target, target])
        XCTAssertEqual(parsed.values, [200])
    }

    func testDownloadTaskEventsTellEachWriteThenTheFinishedFileThenWhereItWent() async throws {
        let queue = DispatchQueue(label: "download.task.events")
        let monitor = ClosureEventMonitor(queue: queue)
        let writes = Recorder<(Int64, Int64, Int64)>()
        let events = Recorder<String>()
        let temporary = Recorder<URL>()
        let results = Recorder<Result<URL, AFError>>()
        monitor.downloadTaskDidWriteData = { _, _, bytes, total, expected in writes.append((bytes, total, expected)) }
        monitor.downloadTaskDidFinishDownloadingToURL = { _, _, location in
            events.append("finished")
            temporary.append(location)
        }
        monitor.requestDidFinishDownloadingUsingTaskWithResult = { _, _, result in
            events.append("moved")
            results.append(result)
        }
        monitor.requestDidCreateDestinationURL = { _, _ in events.append("destination") }
        let session = Session(eventMonitors: [monitor])
        let response = await session.download(url("/bytes/300000")).serializingDownloadedFileURL().response
        queue.sync {}
        let fileURL = try XCTUnwrap(response.fileURL)
        defer { try? FileManager.default.removeItem(at: fileURL) }
        XCTAssertEqual(writes.values.map(\.0).reduce(0, +), 300_000, "every byte written is told")
        XCTAssertEqual(writes.values.last?.1, 300_000)
        XCTAssertTrue(writes.values.allSatisfy { $0.2 == 300_000 }, "the announced length")
        XCTAssertEqual(events.values, ["finished", "destination", "moved"])
        XCTAssertNotEqual(temporary.values.first, fileURL, "the temporary file, before it is moved")
        XCTAssertEqual(try results.values.first?.get(), fileURL)

        // A destination that cannot be written ends in the failure, told the same way.
        let unwritable = URL(fileURLWithPath: "/nonexistent-dir-\(UUID().uuidString)/file")
        let blocked = await session.download(url("/bytes/10"), to: { _, _ in (unwritable, []) })
            .serializingDownloadedFileURL().response
        queue.sync {}
        XCTAssertNotNil(blocked.error)
        guard case .failure(.downloadedFileMoveFailed)? = results.values.last else {
            return XCTFail("\(results.values)")
        }
    }

    func testStreamEventsReachMonitors() async throws {
        let monitor = Monitor()
        let validations = Recorder<Int>()
        let closures = ClosureEventMonitor()
        closures.requestDidValidateRequestResponseWithResult = { _, _, response, _ in
            validations.append(response.statusCode)
        }
        let session = Session(eventMonitors: [monitor, closures])
        struct Line: Decodable, Sendable { let id: Int }
        var ids: [Int] = []
        for await event in session.streamRequest(url("/stream/2")).validate().streamTask().streamingDecodables(
            Line.self)
        {
            if case let .stream(result) = event.event { ids.append(try result.get().id) }
        }
        XCTAssertEqual(ids, [0, 1])
        session.drain()
        XCTAssertEqual(monitor.events.values.count, 2)
        XCTAssertTrue(
            monitor.events.values.allSatisfy { $0.hasPrefix("parseStream Line(id: ") }, "\(monitor.events.values)")
        XCTAssertEqual(validations.values, [200, 200], "validate() is two validators, as Alamofire's")
    }
}
