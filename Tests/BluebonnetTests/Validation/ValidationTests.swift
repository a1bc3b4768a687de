import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class ValidationTests: ServerTestCase {
    func testValidateFailsOnAnUnacceptableStatusAndKeepsTheResponse() async {
        let response = await session.request(url("/status/404")).validate().serializingData(emptyResponseCodes: [404])
            .response
        XCTAssertEqual(response.error?.responseCode, 404)
        XCTAssertEqual(response.response?.statusCode, 404)
    }

    /// `validate()` is Alamofire's two validators: a monitor hears of the status check and, when it passed, of the
    /// content type check; after a failed status, the content type is not checked. For each kind of request.
    func testValidateTellsAMonitorOfEachOfItsTwoChecks() async throws {
        let events = Recorder<String>()
        let monitor = ClosureEventMonitor(queue: DispatchQueue(label: "validation.monitor"))
        @Sendable func record(_ kind: String, _ result: Request.ValidationResult) {
            if case .success = result { events.append("\(kind) ok") } else { events.append("\(kind) failed") }
        }
        monitor.requestDidValidateRequestResponseDataWithResult = { _, _, _, _, result in record("data", result) }
        monitor.requestDidValidateRequestResponseWithResult = { _, _, _, result in record("stream", result) }
        monitor.requestDidValidateRequestResponseFileURLWithResult = { _, _, _, _, result in record("download", result)
        }
        let session = Session(eventMonitors: [monitor])
        for (path, expected) in [("/json", "ok"), ("/status/404", "failed")] {
            _ = await session.request(url(path)).validate().serializingData(emptyResponseCodes: [404]).response
            var streamed = 0
            for await _ in session.streamRequest(url(path)).validate().streamTask().streamingData() { streamed += 1 }
            _ = await session.download(url(path)).validate().serializingDownloadedFileURL().response
            let count = expected == "ok" ? 6 : 3
            try await waitUntil { events.values.count == count }
            let each = expected == "ok" ? ["ok", "ok"] : ["failed"]
            for kind in ["data", "stream", "download"] {
                XCTAssertEqual(
                    events.values.filter { $0.hasPrefix(kind + " ") }, each.map { "\(kind) \($0)" }, "\(path)")
            }
            events.removeAll()
        }
    }

    func testValidateStatusCodeAcceptsAnySequence() async {
        let ok = await session.request(url("/status/404")).validate(statusCode: [404]).serializingResponse().response
        XCTAssertNil(ok.error)
        let range = await session.request(url("/status/500")).validate(statusCode: 200..<300).serializingResponse()
            .response
        XCTAssertEqual(range.error?.responseCode, 500)
    }

    func testValidateContentTypeMatchesWildcardsAndIgnoresParameters() async {
        let json = await session.request(url("/json")).validate(contentType: ["application/*"]).serializingData()
            .response
        XCTAssertNil(json.error)
        let html = await session.request(url("/html")).validate(contentType: ["text/html"]).serializingData().response
        XCTAssertNil(html.error)
        let wrong = await session.request(url("/html")).validate(contentType: ["application/json"]).serializingData()
            .response
        XCTAssertEqual(wrong.error?.responseContentType, "text/html")
    }

    func testValidateUsesTheAcceptHeader() async {
        let wrong = await session.request(url("/html"), headers: [.accept("application/json")]).validate()
            .serializingData().response
        XCTAssertEqual(wrong.error?.acceptableContentTypes, ["application/json"])
        let right = await session.request(url("/json"), headers: [.accept("application/json")]).validate()
            .serializingData().response
        XCTAssertNil(right.error)
    }

    func testEmptyBodyPassesContentTypeValidation() async {
        let response = await session.request(url("/status/204")).validate(contentType: ["application/json"])
            .serializingData().response
        XCTAssertNil(response.error)
    }

    func testValidatorsRunInOrderAndStopAtTheFirstFailure() async {
        struct First: Error {}
        let calls = Recorder<Int>()
        let response = await session.request(url("/get"))
            .validate { _, _, _ in
                calls.append(1); return .failure(First())
            }
            .validate { _, _, _ in
                calls.append(2); return .success(())
            }
            .serializingData().response
        guard case .responseValidationFailed(.customValidationFailed(let error)) = response.error else {
            return XCTFail("\(String(describing: response.error))")
        }
        XCTAssertTrue(error is First)
        XCTAssertEqual(calls.values, [1])
    }

    func testValidationRunsOnceEvenWithSeveralHandlers() async {
        let calls = Recorder<Int>()
        let request = session.request(url("/get")).validate { _, _, _ in
            calls.append(1); return .success(())
        }
        _ = await request.serializingData().response
        _ = await request.serializingString().response
        XCTAssertEqual(calls.values, [1])
    }

    func testTheAcceptableTypesInAContentTypeErrorAreSortedAsInAlamofire() async {
        let response = await session.request(url("/html"))
            .validate(contentType: ["text/plain", "application/xml", "application/json"]).serializingData().response
        XCTAssertEqual(
            response.error?.acceptableContentTypes, ["application/json", "application/xml", "text/plain"],
            "\(String(describing: response.error))")
    }
}
