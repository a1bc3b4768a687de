import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `maximumResponseSize`: the session's default, a request's own, the boundary, and what does not count.
final class ResponseSizeLimitTests: ServerTestCase {
    /// Sessions made by `limited(_:)`, kept for the test's length: a released session ends its requests.
    var sessions: [Session] = []

    func limited(_ limit: Int64?) -> Session {
        let session = Session(maximumResponseSize: limit)
        sessions.append(session)
        return session
    }

    func testTheDefaultIsOneHundredMebibytes() {
        XCTAssertEqual(Session.defaultMaximumResponseSize, 100 * 1024 * 1024)
        XCTAssertEqual(Session().maximumResponseSize, 100 * 1024 * 1024)
    }

    func testABodyOfExactlyTheLimitArrives() async {
        let response = await limited(1000).request(url("/bytes/1000")).serializingData().response
        XCTAssertNil(response.error)
        XCTAssertEqual(response.data?.count, 1000)
    }

    func testOneByteOverTheLimitFails() async {
        for path in ["/bytes/1001", "/chunked/1001", "/range/1001"] {
            let response = await limited(1000).request(url(path)).serializingData().response
            guard case .responseLimitExceeded(.maximumResponseSizeExceeded(limit: 1000))? = response.error else {
                XCTFail("\(path): \(String(describing: response.error))")
                continue
            }
        }
    }

    func testTheLimitCountsDecodedBytes() async {
        // /gzip's JSON is a few hundred bytes decoded and fewer on the wire.
        let wire = await session.request(url("/gzip")).serializingData().response
        let decoded = Int64(wire.data?.count ?? 0)
        XCTAssertGreaterThan(decoded, 100)
        let response = await limited(decoded - 1).request(url("/gzip")).serializingData().response
        guard case .responseLimitExceeded(.maximumResponseSizeExceeded)? = response.error else {
            return XCTFail("\(String(describing: response.error))")
        }
    }

    func testARequestsOwnLimitOverridesTheSessions() async {
        let session = limited(100)
        let raised = await session.request(url("/bytes/5000")).maximumResponseSize(5000).serializingData().response
        XCTAssertEqual(raised.data?.count, 5000)
        let lifted = await session.request(url("/bytes/5000")).maximumResponseSize(nil).serializingData().response
        XCTAssertEqual(lifted.data?.count, 5000)
        let lowered = await self.session.request(url("/bytes/5000")).maximumResponseSize(10).serializingData().response
        XCTAssertEqual(lowered.error?.isResponseLimitError, true)
    }

    func testNoLimitAtAll() async {
        let response = await limited(nil).request(url("/bytes/100000")).serializingData().response
        XCTAssertEqual(response.data?.count, 100000)
    }

    func testAHEADResponseDeclaringMoreThanTheLimitSucceeds() async {
        let response = await limited(10).request(url("/bytes/5000"), method: .head).serializingData(
            emptyRequestMethods: [.head]).response
        XCTAssertNil(response.error)
        XCTAssertEqual(response.response?.statusCode, 200)
    }

    func testUploadsAreLimitedOnTheirResponse() async {
        let response = await limited(100).upload(Data(repeating: 1, count: 1000), to: url("/post")).serializingData()
            .response
        XCTAssertEqual(response.error?.isResponseLimitError, true, "\(String(describing: response.error))")
    }
}
