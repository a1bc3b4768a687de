import Bluebonnet
import BluebonnetTesting
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `StubTransport` as a user's tests use it: public API only (no `@testable`), the engine events in the test's order.
final class StubTransportTests: XCTestCase {
    func testWhatTheRequestDoesReachesTheAttemptInOrder() async throws {
        let transport = StubTransport()
        let session = transport.session()
        let request = session.request("https://api.example.com/user")
        let response = request.serializingString()
        let attempt = await transport.attempt(1)
        request.suspend()
        request.resume()
        attempt.respond(headers: ["Content-Type": "text/plain"])
        attempt.complete(body: Data("bonnet".utf8))
        let value = try await response.value
        XCTAssertEqual(value, "bonnet")
        request.cancel()
        XCTAssertEqual(attempt.taskCalls, ["suspend", "resume"], "a cancel after the end does not reach the attempt")
    }

    func testEachHopIsAnAttemptWithTheRequestAsSent() async throws {
        let transport = StubTransport()
        let configuration = URLSessionConfiguration.af.default
        configuration.headers = ["X-Session": "yes"]
        let session = transport.session { Session(configuration: configuration) }
        let response = session.request("https://api.example.com/start", headers: ["X-Own": "1"]).serializingString()
        let first = await transport.attempt(1)
        XCTAssertEqual(first.urlRequest.url?.path, "/start")
        XCTAssertEqual(first.headers.first { $0.name == "X-Own" }?.value, "1")
        XCTAssertEqual(first.headers.first { $0.name == "X-Session" }?.value, "yes")
        first.respond(status: 302, headers: ["Location": "/next"])
        first.complete()
        let second = await transport.attempt(2)
        XCTAssertEqual(second.urlRequest.url?.absoluteString, "https://api.example.com/next")
        second.succeed(headers: ["Content-Type": "text/plain"], body: "there")
        let value = try await response.value
        XCTAssertEqual(value, "there")
        XCTAssertEqual(transport.attemptCount, 2)
    }

    func testAFailureIsTheSessionTaskFailureAndACancelCanEndTheAttemptAtOnce() async {
        let transport = StubTransport()
        let session = transport.session()
        let failed = session.request("https://api.example.com/a").serializingData()
        await transport.attempt(1).complete(error: URLError(.networkConnectionLost))
        let failure = await failed.response
        XCTAssertEqual((failure.error?.underlyingError as? URLError)?.code, .networkConnectionLost)

        let request = session.request("https://api.example.com/b")
        let cancelled = request.serializingData()
        let attempt = await transport.attempt(2)
        attempt.respond()
        attempt.completeWhenCancelled()
        request.cancel()
        let result = await cancelled.response
        XCTAssertEqual(result.error?.isExplicitlyCancelledError, true)
        XCTAssertEqual(attempt.taskCalls, ["cancel"])
    }
}
