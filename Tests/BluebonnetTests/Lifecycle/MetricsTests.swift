import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `Request.taskMetrics`, `allTaskMetrics` and `DataResponse.taskMetrics`: what is measured per hop and per attempt, over real
/// sockets.
final class MetricsTests: ServerTestCase {
    func testAGetIsOneTransactionWithItsStagesInOrder() async throws {
        let request = session.request(url("/bytes/1000"))
        let response = await request.serializingData().response
        let metrics = try XCTUnwrap(response.taskMetrics)
        XCTAssertEqual(metrics.transactionMetrics.count, 1)
        XCTAssertEqual(metrics.redirectCount, 0)
        let hop = try XCTUnwrap(metrics.transactionMetrics.first)
        XCTAssertEqual(hop.request.url?.absoluteString, url("/bytes/1000"))
        XCTAssertEqual((hop.response as? HTTPURLResponse)?.statusCode, 200)
        XCTAssertEqual(hop.networkProtocolName, "http/1.1")
        XCTAssertEqual(hop.resourceFetchType, .networkLoad)
        XCTAssertFalse(hop.isProxyConnection)
        let stages = try [
            hop.fetchStartDate, hop.requestStartDate, hop.requestEndDate, hop.responseStartDate,
            hop.responseEndDate,
        ].map { try XCTUnwrap($0) }
        XCTAssertEqual(stages, stages.sorted(), "fetch, request start and end, response start and end, in that order")
        XCTAssertEqual(hop.countOfResponseBodyBytesAfterDecoding, 1000)
        XCTAssertEqual(hop.countOfResponseBodyBytesReceived, 1000)
        XCTAssertEqual(hop.countOfRequestBodyBytesSent, 0)
        // What the engine does not measure is nil, never estimated.
        XCTAssertNil(hop.domainLookupStartDate)
        XCTAssertNil(hop.connectStartDate)
        XCTAssertNil(hop.secureConnectionStartDate)
        XCTAssertNil(hop.remoteAddress)
        XCTAssertEqual(metrics.taskInterval.start, stages[0])
        XCTAssertEqual(metrics.taskInterval.end, stages[4])
        XCTAssertEqual(request.taskMetrics?.transactionMetrics.count, 1)
        XCTAssertEqual(request.allTaskMetrics.count, 1)
    }

    func testEveryRedirectHopIsATransactionOfTheSameAttempt() async throws {
        let request = session.request(url("/redirect/2"))
        let response = await request.serializingData().response
        let metrics = try XCTUnwrap(response.taskMetrics)
        XCTAssertEqual(metrics.redirectCount, 2)
        XCTAssertEqual(
            metrics.transactionMetrics.map { $0.request.url?.path }, ["/redirect/2", "/relative-redirect/1", "/get"])
        XCTAssertEqual(
            metrics.transactionMetrics.map { ($0.response as? HTTPURLResponse)?.statusCode }, [302, 302, 200])
        XCTAssertEqual(request.allTaskMetrics.count, 1)
    }

    func testACompressedBodyCountsTheBytesOnTheWireAndTheBytesDecoded() async throws {
        let response = await session.request(url("/gzip")).serializingData().response
        let hop = try XCTUnwrap(response.taskMetrics?.transactionMetrics.first)
        let declared = try XCTUnwrap(response.response?.value(forHTTPHeaderField: "Content-Length").flatMap(Int64.init))
        XCTAssertEqual(hop.countOfResponseBodyBytesReceived, declared)
        XCTAssertEqual(hop.countOfResponseBodyBytesAfterDecoding, Int64(response.data?.count ?? -1))
        XCTAssertNotEqual(hop.countOfResponseBodyBytesReceived, hop.countOfResponseBodyBytesAfterDecoding)
    }

    func testAnUploadCountsTheBodyBytesSent() async throws {
        let body = Data(repeating: 7, count: 300_000)
        let response = await session.upload(body, to: url("/post")).serializingData().response
        let hop = try XCTUnwrap(response.taskMetrics?.transactionMetrics.first)
        XCTAssertEqual(hop.countOfRequestBodyBytesSent, 300_000)
        XCTAssertEqual(hop.countOfRequestBodyBytesBeforeEncoding, 300_000)
    }

    func testEachRetryIsAnAttemptOfItsOwn() async throws {
        let retryOnce = Retrier { request, _, _, completion in completion(request.retryCount < 1 ? .retry : .doNotRetry)
        }
        let request = session.request(url("/status/500"), interceptor: retryOnce).validate()
        let response = await request.serializingData().response
        XCTAssertEqual(request.retryCount, 1)
        XCTAssertEqual(request.allTaskMetrics.count, 2)
        XCTAssertEqual(request.allTaskMetrics.map { $0.transactionMetrics.count }, [1, 1])
        let first = try XCTUnwrap(request.allTaskMetrics.first?.taskInterval)
        let second = try XCTUnwrap(request.allTaskMetrics.last?.taskInterval)
        XCTAssertLessThanOrEqual(first.end, second.start)
        XCTAssertEqual(response.taskMetrics?.taskInterval, second)
    }

    func testAFailedConnectionStillMeasuresTheHop() async throws {
        let request = session.request("http://127.0.0.1:1/refused")
        let response = await request.serializingData().response
        XCTAssertNotNil(response.error)
        let hop = try XCTUnwrap(response.taskMetrics?.transactionMetrics.first)
        XCTAssertNotNil(hop.fetchStartDate)
        XCTAssertNil(hop.responseStartDate)
        XCTAssertNotNil(hop.responseEndDate, "the end of a failed hop is when it failed")
        XCTAssertNil(hop.response)
    }

    func testARequestThatNeverRanHasNoMetrics() {
        let request = session.request(url("/get"))
        XCTAssertNil(request.taskMetrics)
        XCTAssertEqual(request.allTaskMetrics.count, 0)
    }
}
