import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `401` with a challenge is held in memory in case a credential answers it; when none does, the stream's
/// validators and handlers still see it, as they see any response the request delivers.
final class DataStreamHeldBodyTests: ServerTestCase {
    private var protected: String { url("/token/\(UUID().uuidString)/protected") }

    func testAnUnansweredChallengesBodyReachesTheStreamHandlers() async throws {
        var received = Data()
        var completion: DataStreamRequest.Completion?
        for await stream in session.streamRequest(protected).streamTask().streamingData() {
            if let chunk = stream.value { received.append(chunk) }
            if let end = stream.completion { completion = end }
        }
        XCTAssertEqual(completion?.response?.statusCode, 401)
        XCTAssertNil(completion?.error)
        XCTAssertEqual(try json(received)["error"] as? String, "invalid_token")
    }

    func testAnUnansweredChallengeIsValidatedAndAFailureIsShownToTheRetrier() async throws {
        let retrier = Recorder<Int>()
        let interceptor = Retrier { request, _, _, completion in
            retrier.append(request.response?.statusCode ?? 0)
            completion(.doNotRetry)
        }
        let session = Session(interceptor: interceptor)
        var chunks = 0
        var completion: DataStreamRequest.Completion?
        for await stream in session.streamRequest(protected).validate().streamTask().streamingData() {
            if stream.value != nil { chunks += 1 }
            if let end = stream.completion { completion = end }
        }
        XCTAssertEqual(completion?.error?.responseCode, 401, "\(String(describing: completion?.error))")
        XCTAssertEqual(chunks, 0, "a refused body is not handed over")
        XCTAssertEqual(retrier.values, [401])
    }
}
