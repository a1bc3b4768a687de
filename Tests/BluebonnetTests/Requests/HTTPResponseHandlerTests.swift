import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `onHTTPResponse` in every form: the final head arrives before the body is read, `.allow` reads it, `.cancel`
/// cancels without reading it, and what the request follows itself (redirects, challenges) is never shown.
final class HTTPResponseHandlerTests: ServerTestCase {
    private let queue = DispatchQueue(label: "http-response-tests")

    func testTheHandlerSeesTheFinalResponseBeforeTheRequestCompletes() async throws {
        let seen = Recorder<String>()
        let done = expectation(description: "response")
        let initial = Recorder<HTTPURLResponse>()
        let final = Recorder<AFDataResponse<Data?>>()
        session.request(url("/get?foo=bar"))
            .onHTTPResponse(on: queue) { response in
                initial.append(response)
                seen.append("head")
            }
            .response(queue: queue) { response in
                final.append(response)
                seen.append("complete")
                done.fulfill()
            }
        await fulfillment(of: [done], timeout: 30)
        XCTAssertEqual(seen.values, ["head", "complete"])
        XCTAssertEqual(initial.values.first, final.values.first?.response)
        XCTAssertNotNil(final.values.first?.data)
        XCTAssertNil(final.values.first?.error)
    }

    func testAllowReadsTheBodyOnlyOnceTheHandlerAnswers() async throws {
        let done = expectation(description: "response")
        let answeredAt = Recorder<Date>()
        let received = Recorder<AFDataResponse<Data>>()
        let receivedBeforeAnswer = Recorder<Int64>()
        let queue = self.queue
        let holder = Recorder<DataRequest>()
        let request = session.request(url("/bytes/200000?seed=4"))
            .onHTTPResponse(on: queue) { response, completionHandler in
                XCTAssertEqual(response.statusCode, 200)
                queue.asyncAfter(deadline: .now() + 0.3) {
                    // The body waited for the answer: not one byte of it was read in those 300 ms.
                    receivedBeforeAnswer.append(holder.values.first?.downloadProgress.completedUnitCount ?? -1)
                    answeredAt.append(Date())
                    completionHandler(.allow)
                }
            }
        holder.append(request)
        request.responseData(queue: queue) { response in
            received.append(response)
            done.fulfill()
        }
        await fulfillment(of: [done], timeout: 30)
        XCTAssertEqual(receivedBeforeAnswer.values, [0])
        XCTAssertEqual(received.values.first?.value, SeededBytes.bytes(seed: 4, offset: 0, count: 200_000))
        XCTAssertEqual(answeredAt.values.count, 1)
    }

    func testCancelEndsTheRequestAsExplicitlyCancelledWithoutReadingTheBody() async throws {
        let done = expectation(description: "response")
        let initial = Recorder<HTTPURLResponse>()
        let final = Recorder<AFDataResponse<Data?>>()
        let request = session.request(url("/bytes/4000000?seed=1"))
            .onHTTPResponse(on: queue) { response, completionHandler in
                initial.append(response)
                completionHandler(.cancel)
            }
            .response(queue: queue) { response in
                final.append(response)
                done.fulfill()
            }
        await fulfillment(of: [done], timeout: 30)
        let response = try XCTUnwrap(final.values.first)
        XCTAssertTrue(request.isCancelled)
        XCTAssertEqual(response.error?.isExplicitlyCancelledError, true)
        XCTAssertEqual(initial.values.first, response.response)
        XCTAssertNil(response.data)
        XCTAssertEqual(response.taskMetrics?.transactionMetrics.last?.countOfResponseBodyBytesReceived ?? 0, 0)
    }

    func testRedirectsAndChallengesTheRequestFollowsAreNotShown() async throws {
        let heads = Recorder<Int>()
        let done = expectation(description: "both")
        done.expectedFulfillmentCount = 2
        session.request(url("/redirect/2"))
            .onHTTPResponse(on: queue) { heads.append($0.statusCode) }
            .response(queue: queue) { response in
                XCTAssertEqual(response.response?.url?.path, "/get")
                done.fulfill()
            }
        session.request(url("/basic-auth/user/pass"))
            .authenticate(username: "user", password: "pass")
            .onHTTPResponse(on: queue) { heads.append($0.statusCode) }
            .response(queue: queue) { response in
                XCTAssertEqual(response.response?.statusCode, 200)
                done.fulfill()
            }
        await fulfillment(of: [done], timeout: 30)
        XCTAssertEqual(heads.values, [200, 200])
    }

    func testTimeSpentDecidingDoesNotCountAsTheServerBeingIdle() async throws {
        let idle = session(configuring: { $0.timeoutIntervalForRequest = 0.3 })
        let done = expectation(description: "response")
        let received = Recorder<AFDataResponse<Data>>()
        let queue = self.queue
        idle.request(url("/bytes/1000?seed=2"))
            .onHTTPResponse(on: queue) { _, completionHandler in
                queue.asyncAfter(deadline: .now() + 1) { completionHandler(.allow) }
            }
            .responseData(queue: queue) { response in
                received.append(response)
                done.fulfill()
            }
        await fulfillment(of: [done], timeout: 30)
        XCTAssertNil(received.values.first?.error)
        XCTAssertEqual(received.values.first?.value?.count, 1000)
    }

    func testTheAsyncHandlerCanCancel() async throws {
        let request = session.request(url("/bytes/1000"))
            .onHTTPResponse { response async -> Request.ResponseDisposition in
                response.statusCode == 200 ? .cancel : .allow
            }
        let response = await request.serializingData().response
        XCTAssertEqual(response.error?.isExplicitlyCancelledError, true)
        XCTAssertTrue(request.isCancelled)
    }

    func testTheAsyncVoidHandlerAllowsOnceItReturns() async throws {
        let seen = Recorder<Int>()
        let request = session.request(url("/bytes/1000")).onHTTPResponse { response async in
            try? await Task.sleep(nanoseconds: 100_000_000)
            seen.append(response.statusCode)
        }
        let response = await request.serializingData().response
        XCTAssertEqual(response.value?.count, 1000)
        XCTAssertEqual(seen.values, [200])
    }

    func testHTTPResponsesYieldsTheResponseAndEnds() async throws {
        let request = session.request(url("/redirect/1"))
        var statuses: [Int] = []
        for await response in request.httpResponses() { statuses.append(response.statusCode) }
        XCTAssertEqual(statuses, [200])
        XCTAssertTrue(request.isFinished)
    }

    func testAStreamRequestCancelledFromItsHeadStreamsNothing() async throws {
        let done = expectation(description: "complete")
        let chunks = Recorder<Int>()
        let cancelled = Recorder<Bool>()
        let request = session.streamRequest(url("/bytes/2000000"))
            .onHTTPResponse(on: queue) { _, completionHandler in completionHandler(.cancel) }
            .responseStream(on: queue) { stream in
                switch stream.event {
                case let .stream(.success(data)): chunks.append(data.count)
                case let .complete(ended):
                    cancelled.append(ended.error?.isExplicitlyCancelledError == true); done.fulfill()
                }
            }
        await fulfillment(of: [done], timeout: 30)
        XCTAssertTrue(request.isCancelled)
        XCTAssertEqual(cancelled.values, [true])
        XCTAssertEqual(chunks.values, [])
    }

    func testAStreamRequestAllowedFromItsHeadStreamsEverything() async throws {
        let task = session.streamRequest(url("/bytes/300000?seed=9"))
            .onHTTPResponse { response async -> Request.ResponseDisposition in .allow }
            .streamTask()
        var body = Data()
        for await stream in task.streamingData() {
            if case let .stream(.success(data)) = stream.event { body.append(data) }
        }
        XCTAssertEqual(body, SeededBytes.bytes(seed: 9, offset: 0, count: 300_000))
    }
}
