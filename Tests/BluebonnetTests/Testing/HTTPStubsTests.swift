import Bluebonnet
import BluebonnetTesting
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `BluebonnetTesting`'s stubs, used as a user's tests use them: answers by URL, method and predicate, bodies from
/// data, files and chunks, delays, errors and redirects, the record of what was sent, and a scripted server for
/// exact orderings.
final class HTTPStubsTests: ServerTestCase {
    private struct User: Codable, Equatable, Sendable {
        let name: String
    }

    func testAJSONStubIsDecodedAndTheRequestIsRecordedAsSent() async throws {
        let stubs = HTTPStubs()
        try stubs.stub(.post, "https://api.example.com/users", .json(User(name: "bonnet"), status: 201))
        let configuration = URLSessionConfiguration.af.default
        configuration.headers.add(name: "X-Session", value: "s")
        let session = Session(stubs: stubs, configuration: configuration)
        let created = try await session.request(
            "https://api.example.com/users?source=test", method: .post, parameters: User(name: "new"),
            encoder: JSONParameterEncoder.default
        ).validate().serializingDecodable(User.self).value
        XCTAssertEqual(created, User(name: "bonnet"))
        let sent = try XCTUnwrap(stubs.requests.first)
        XCTAssertEqual(stubs.requests.count, 1)
        XCTAssertEqual(sent.method, .post)
        XCTAssertEqual(sent.url.absoluteString, "https://api.example.com/users?source=test")
        XCTAssertEqual(sent.headers["X-Session"], "s")
        XCTAssertEqual(sent.headers["Content-Type"], "application/json")
        XCTAssertEqual(try JSONDecoder().decode(User.self, from: try XCTUnwrap(sent.body)), User(name: "new"))
    }

    func testResponsesComeInTurnTheLastRepeatsAndTheNewestStubWins() async throws {
        let stubs = HTTPStubs()
        stubs.stub(.get, "https://api.example.com/flaky", .string("down", status: 503), .string("up"))
        let session = Session(stubs: stubs, interceptor: RetryPolicy(retryLimit: 3, exponentialBackoffScale: 0.01))
        let first = try await session.request("https://api.example.com/flaky").validate().serializingString().value
        let again = try await session.request("https://api.example.com/flaky").validate().serializingString().value
        XCTAssertEqual([first, again], ["up", "up"])
        XCTAssertEqual(stubs.requests.count, 3, "503, then up, then up again")

        stubs.stub(where: { $0.url?.path == "/flaky" && $0.headers["X-Special"] != nil }, .string("special"))
        let special = try await session.request("https://api.example.com/flaky", headers: ["X-Special": "1"])
            .serializingString().value
        XCTAssertEqual(special, "special")
        let post = await session.request("https://api.example.com/flaky", method: .post).serializingData().response
        XCTAssertEqual((post.error?.underlyingError as? URLError)?.code, .resourceUnavailable, "GET only")
        XCTAssertEqual(stubs.unmatched.map(\.method), [.post])
    }

    func testUnmatchedRequestsGoToTheNetworkWhenAskedAndNothingIsStubbedAfterDeactivation() async throws {
        let passing = HTTPStubs(unmatchedRequests: .network)
        passing.stub(.get, url("/get"), .string("stubbed"))
        let session = Session(stubs: passing)
        let stubbed = try await session.request(url("/get")).serializingString().value
        XCTAssertEqual(stubbed, "stubbed")
        let network = try json(try await session.request(url("/headers")).serializingData().value)
        XCTAssertNotNil(network["headers"], "the test server answered")
        passing.deactivate()
        let real = try json(try await session.request(url("/get")).serializingData().value)
        XCTAssertNotNil(real["url"])
    }

    func testBodiesFromFilesAndChunksReachDownloadsAndStreamsAndErrorsAndRedirectsBehave() async throws {
        let directory = try TemporaryDirectory()
        let payload = patternedData(count: 300_000)
        let file = try directory.file("payload.bin", contents: payload)
        let stubs = HTTPStubs()
        stubs.stub(
            .get, "https://files.example.com/payload",
            .file(file, headers: ["Content-Type": "application/octet-stream"]))
        stubs.stub(.get, "https://files.example.com/chunks", .chunks([Data("a".utf8), Data("b".utf8), Data("c".utf8)]))
        stubs.stub("https://files.example.com/old", .redirect(to: URL(string: "https://files.example.com/chunks")!))
        stubs.stub("https://files.example.com/down", .error(URLError(.networkConnectionLost)))
        let session = Session(stubs: stubs)

        let download = await session.download("https://files.example.com/payload").serializingDownloadedFileURL()
            .response
        let saved = try XCTUnwrap(download.value, String(describing: download.error))
        XCTAssertEqual(try Data(contentsOf: saved), payload)
        try? FileManager.default.removeItem(at: saved)

        var chunks: [Data] = []
        for await stream in session.streamRequest("https://files.example.com/chunks").streamTask().streamingData() {
            if case let .success(chunk)? = stream.result { chunks.append(chunk) }
        }
        XCTAssertEqual(chunks.reduce(Data(), +), Data("abc".utf8))

        let redirected = await session.request("https://files.example.com/old").serializingString().response
        XCTAssertEqual(redirected.value, "abc")
        XCTAssertEqual(redirected.response?.url?.absoluteString, "https://files.example.com/chunks")

        let failed = await session.request("https://files.example.com/down").serializingData().response
        XCTAssertEqual((failed.error?.underlyingError as? URLError)?.code, .networkConnectionLost)
    }

    func testAChallengeFromAStubIsAnsweredOnceWithTheCredential() async throws {
        let stubs = HTTPStubs()
        stubs.stub(
            .get, "https://auth.example.com/private",
            .string("who?", status: 401, headers: ["WWW-Authenticate": #"Basic realm="stubs""#]), .string("welcome"))
        let session = Session(stubs: stubs)
        let body = try await session.request("https://auth.example.com/private")
            .authenticate(username: "user", password: "pass").validate().serializingString().value
        XCTAssertEqual(body, "welcome")
        XCTAssertEqual(stubs.requests.count, 2)
        XCTAssertNil(stubs.requests[0].headers["Authorization"])
        XCTAssertEqual(stubs.requests[1].headers["Authorization"], "Basic dXNlcjpwYXNz")
    }

    func testADelayIsHonouredAndATimeoutStopsTheStub() async throws {
        let stubs = HTTPStubs()
        // Answered ten seconds late: the request ends timed out only if its 0.2 s timeout stops the wait, which the
        // error tells whatever the machine's speed.
        stubs.stub("https://slow.example.com/a", StubResponse.string("late").delayed(by: 10))
        let configuration = URLSessionConfiguration.af.default
        configuration.timeoutIntervalForRequest = 0.2
        let session = Session(stubs: stubs, configuration: configuration)
        let response = await session.request("https://slow.example.com/a").serializingString().response
        XCTAssertEqual(response.error?.urlErrorCode, .timedOut, String(describing: response.error))
    }

    func testAScriptedServerPlaysEventsInTheOrderTheTestChooses() async throws {
        let stubs = HTTPStubs()
        let connected = AsyncStream<StubConnection>.makeStream()
        stubs.stub(
            "https://script.example.com/race", .script { connection in connected.continuation.yield(connection) })
        let session = Session(stubs: stubs)
        let received = Recorder<Int>()
        let request = session.streamRequest("https://script.example.com/race").responseStream { stream in
            if case let .success(chunk)? = stream.result { received.append(chunk.count) }
        }
        var connections = connected.stream.makeAsyncIterator()
        let next = await connections.next()
        let connection = try XCTUnwrap(next)
        connection.respond(status: 200)
        connection.send(Data(count: 3))
        // The request is cancelled with the head and one chunk delivered and the body unfinished.
        while received.values.isEmpty { await Task.yield() }
        request.cancel()
        await connection.waitUntilStopped()
        connection.send(Data(count: 5))
        connection.finish()
        let completion = await request.streamTask().streamingData().first { $0.completion != nil }?.completion
        XCTAssertTrue(completion?.error?.isExplicitlyCancelledError == true, String(describing: completion?.error))
        XCTAssertEqual(received.values, [3], "nothing sent after the stop arrives")
        XCTAssertTrue(connection.isStopped)
    }
}
