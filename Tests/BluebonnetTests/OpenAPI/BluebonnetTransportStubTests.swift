import Bluebonnet
import BluebonnetOpenAPI
import BluebonnetTesting
import Foundation
import HTTPTypes
import OpenAPIFixtureClient
import OpenAPIRuntime
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A generated client tested as a team tests its own: on a session of `HTTPStubs` or of a `StubTransport`, with no
/// server.
final class BluebonnetTransportStubTests: XCTestCase {
    private let serverURL = URL(string: "https://api.example.test/v1")!

    func testHTTPStubsAnswerAGeneratedClientAndRecordItsRequests() async throws {
        let stubs = HTTPStubs()
        defer { stubs.deactivate() }
        stubs.stub(
            .get, "https://api.example.test/v1/get",
            .data(Data(#"{"url":"stubbed","args":{"a":"b"}}"#.utf8), headers: ["Content-Type": "application/json"]))
        stubs.stub(
            .post, "https://api.example.test/v1/echo",
            .data(Data(#"{"title":"teapot"}"#.utf8), status: 418, headers: ["Content-Type": "application/json"]))
        let client = Client(serverURL: serverURL, transport: BluebonnetTransport(session: Session(stubs: stubs)))

        let echo = try await client.getEcho(query: .init(greeting: "hi")).ok.body.json
        XCTAssertEqual(echo.url, "stubbed")
        XCTAssertEqual(echo.args.additionalProperties, ["a": "b"])

        let problem = try await client.echoProblem(query: .init(status: 418), body: .json(.init(title: "sent")))
        guard case let .clientError(418, error) = problem else { return XCTFail("expected the 418, got \(problem)") }
        XCTAssertEqual(try error.body.json.title, "teapot")

        let recorded = stubs.requests
        XCTAssertEqual(
            recorded.map(\.description),
            [
                "GET https://api.example.test/v1/get?greeting=hi", "POST https://api.example.test/v1/echo?status=418",
            ])
        XCTAssertEqual(recorded.last?.headers.value(for: "Content-Type"), "application/json; charset=utf-8")
        let sent = try XCTUnwrap(recorded.last?.body)
        XCTAssertEqual(try JSONDecoder().decode(Components.Schemas.Problem.self, from: sent).title, "sent")
    }

    func testAnOperationsOwnInterceptorAppliesToThatOperationOnly() async throws {
        let stubs = HTTPStubs()
        defer { stubs.deactivate() }
        stubs.stub(.get, "https://api.example.test/v1/status/204", .data(Data(), status: 204))
        stubs.stub(
            .get, "https://api.example.test/v1/get",
            .data(Data(#"{"url":"u","args":{}}"#.utf8), headers: ["Content-Type": "application/json"]))
        let transport = BluebonnetTransport(session: Session(stubs: stubs)) { operationID in
            guard operationID == "getEcho" else { return nil }
            return Adapter { request, _, completion in
                var request = request
                request.setValue(operationID, forHTTPHeaderField: "X-Operation")
                completion(.success(request))
            }
        }
        let client = Client(serverURL: serverURL, transport: transport)
        _ = try await client.getEcho().ok.body.json
        _ = try await client.getStatus(path: .init(code: 204))
        XCTAssertEqual(stubs.requests.map { $0.headers.value(for: "X-Operation") }, ["getEcho", nil])
    }

    /// `StubTransport` plays heads and failures event by event (a body handed to `complete(body:)` is not streamed to a
    /// stream request, which every operation is: answer bodies with `HTTPStubs`).
    func testAStubTransportPlaysTheServerEventByEvent() async throws {
        let engine = StubTransport()
        let client = Client(serverURL: serverURL, transport: BluebonnetTransport(session: engine.session { Session() }))

        let status = Task { try await client.getStatus(path: .init(code: 404)) }
        let first = await engine.attempt(1)
        XCTAssertEqual(first.urlRequest.url?.absoluteString, "https://api.example.test/v1/status/404")
        first.succeed(status: 404)
        guard case .default(404, _) = try await status.value else { return XCTFail("expected the 404") }

        let echo = Task { try await client.getEcho() }
        let second = await engine.attempt(2)
        XCTAssertEqual(second.urlRequest.value(forHTTPHeaderField: "Accept"), "application/json")
        second.completeWhenCancelled()
        echo.cancel()
        do {
            let output = try await echo.value
            XCTFail("expected a cancellation, got \(output)")
        } catch {
            let underlying = (error as? ClientError)?.underlyingError as? AFError
            XCTAssertEqual(underlying?.isExplicitlyCancelledError, true, "\(error)")
        }
        XCTAssertTrue(second.taskCalls.contains("cancel"), "the engine was told: \(second.taskCalls)")
    }
}
