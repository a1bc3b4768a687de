import Bluebonnet
import BluebonnetOpenAPI
import BluebonnetTestServer
import Foundation
import HTTPTypes
import OpenAPIFixtureClient
import OpenAPIRuntime
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A client swift-openapi-generator wrote (`Tests/OpenAPIFixtureClient`) on `BluebonnetTransport`, against the test
/// server: every operation, retries, authentication, streams both ways, cancellation.
final class BluebonnetTransportTests: ServerTestCase {
    private func client(_ session: Session? = nil, timeout: Duration? = nil) -> Client {
        Client(
            serverURL: server.url("/"),
            transport: BluebonnetTransport(session: session ?? self.session, timeout: timeout))
    }

    // MARK: - Each operation

    func testAJSONOperationDecodesItsResponse() async throws {
        let output = try await client().getEcho(query: .init(greeting: "howdy"))
        let echo = try output.ok.body.json
        XCTAssertEqual(echo.args.additionalProperties["greeting"], "howdy")
        XCTAssertTrue(echo.url.hasSuffix("/get?greeting=howdy"), echo.url)
    }

    func testAClientErrorStatusIsATypedResponseNotAnError() async throws {
        let output = try await client().echoProblem(
            query: .init(status: 422), body: .json(.init(title: "unprocessable", status: 422)))
        guard case let .clientError(statusCode, error) = output else {
            return XCTFail("expected the typed 4XX response, got \(output)")
        }
        XCTAssertEqual(statusCode, 422)
        XCTAssertEqual(try error.body.json, .init(title: "unprocessable", status: 422))
        let success = try await client().echoProblem(query: .init(status: 200), body: .json(.init(title: "fine")))
        XCTAssertEqual(try success.ok.body.json.title, "fine")
    }

    func testAMultipartFormIsUploaded() async throws {
        let output = try await client().uploadForm(
            body: .multipartForm([
                .name(.init(payload: .init(body: HTTPBody("Bluebonnet")))),
                .file(.init(payload: .init(body: HTTPBody("the file's text\n")), filename: "notes.txt")),
            ]))
        let echo = try output.ok.body.json
        XCTAssertEqual(echo.form.additionalProperties["name"], "Bluebonnet")
        XCTAssertEqual(echo.files.additionalProperties["file"], "the file's text\n")
    }

    func testABinaryDownloadStreamsEveryByte() async throws {
        let count = 3 * 1024 * 1024 + 17
        let output = try await client().downloadBytes(path: .init(count: count), query: .init(seed: 42))
        let body = try output.ok.body.binary
        var received = Data()
        var chunks = 0
        for try await chunk in body {
            received.append(contentsOf: chunk)
            chunks += 1
        }
        XCTAssertEqual(received.count, count)
        XCTAssertEqual(received, SeededBytes.bytes(seed: 42, offset: 0, count: count))
        XCTAssertGreaterThan(chunks, 1, "the body arrives as it is read, not as one piece")
    }

    /// A body four times the bound, read slowly: the connection waits for the reader, so memory stays bounded.
    func testALargeBodyReadSlowlyPassesInBoundedMemory() async throws {
        let count = 128 * 1024 * 1024
        let sampler = ResidentMemorySampler()
        let output = try await client().downloadBytes(path: .init(count: count), query: .init(seed: 9))
        var received = 0
        var tail = Data()
        for try await chunk in try output.ok.body.binary {
            received += chunk.count
            // The last 4 KiB, in a fresh buffer each time (a `Data` trimmed at the front keeps its storage).
            tail = Data((tail + Data(chunk)).suffix(4096))
            // A slow consumer: other work runs between reads.
            for _ in 0..<10 { await Task.yield() }
        }
        let growth = sampler.stop()
        XCTAssertEqual(received, count)
        XCTAssertEqual(tail, SeededBytes.bytes(seed: 9, offset: count - 4096, count: 4096))
        XCTAssertLessThan(
            growth, 32 * 1024 * 1024 + ResidentMemorySampler.sanitizerAllowance,
            "resident memory grew \(growth / 1024 / 1024) MiB for a \(count / 1024 / 1024) MiB body")
        print("BluebonnetTransport: \(count / 1024 / 1024) MiB read slowly, resident growth \(growth / 1024) KiB")
    }

    func testServerSentEventsArriveAsTheyAreDecoded() async throws {
        let output = try await client().streamEvents(query: .init(count: 4))
        let events = try await Array(
            output.ok.body.text_event_hyphen_stream.asDecodedServerSentEvents().filter { $0.event == "tick" })
        XCTAssertEqual(events.map(\.id), ["0", "1", "2", "3"])
        XCTAssertEqual(events.first?.data, "line one 0\nline two")
    }

    func testEmptyResponsesAreResponses() async throws {
        guard case let .default(statusCode, _) = try await client().getStatus(path: .init(code: 404)) else {
            return XCTFail("expected the documented default response")
        }
        XCTAssertEqual(statusCode, 404)
        guard case .ok = try await client().getStatus(path: .init(code: 200)) else { return XCTFail("expected 200") }
    }

    // MARK: - Request bodies

    /// A body of unknown length streams (chunked) as it is produced; one known to be long streams with its length.
    func testRequestBodiesStreamWithAndWithoutALength() async throws {
        let chunk = Data((0..<65_536).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let chunks = 40
        var expected = Data()
        for _ in 0..<chunks { expected.append(chunk) }
        let produced = Recorder<Int>()
        let unknown = HTTPBody(
            AsyncStream<ArraySlice<UInt8>> { continuation in
                for index in 0..<chunks {
                    produced.append(index)
                    continuation.yield(ArraySlice(chunk))
                }
                continuation.finish()
            }, length: .unknown, iterationBehavior: .single)
        let drained = try await client().drain(body: .binary(unknown)).ok.body.json
        XCTAssertEqual(drained.bytes, Int64(expected.count))
        XCTAssertEqual(drained.crc32, Int64(Self.crc32(expected)))

        let known = HTTPBody(expected)
        XCTAssertEqual(known.length, .known(Int64(expected.count)))
        let drainedKnown = try await client().drain(body: .binary(known)).ok.body.json
        XCTAssertEqual(drainedKnown.bytes, Int64(expected.count))
        XCTAssertEqual(drainedKnown.crc32, Int64(Self.crc32(expected)))
    }

    // MARK: - Retry

    func testA503WithRetryAfterIsRetriedUnderTheSessionsRetryPolicy() async throws {
        let faults = try await FaultServer.start()
        let retrying = Session(interceptor: RetryPolicy())
        let client = Client(serverURL: faults.url("/"), transport: BluebonnetTransport(session: retrying))
        let output = try await client.getFlaky(
            query: .init(key: UUID().uuidString, failures: 1, fail: "503", retry_after: "1"))
        await faults.stop()
        XCTAssertEqual(try output.ok.body.json.attempt, 2, "the 503 was resent after its Retry-After")
    }

    func testWhenRetriesRunOutTheLastResponseIsReturned() async throws {
        let retrying = Session(interceptor: RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0.01))
        let output = try await client(retrying).getStatus(path: .init(code: 503))
        guard case let .default(statusCode, _) = output else { return XCTFail("expected the 503, got \(output)") }
        XCTAssertEqual(statusCode, 503)
        XCTAssertEqual(server.arrivals.targets.filter { $0 == "/status/503" }.count, 3, "sent, then retried twice")
    }

    func testAReplayableBodyIsResentAndASingleUseBodyNever() async throws {
        let retrying = Session(interceptor: RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0.01))
        let replayable = HTTPBody(Data(repeating: 7, count: 1000))
        XCTAssertEqual(replayable.iterationBehavior, .multiple)
        let first = try await client(retrying).putStatus(path: .init(code: 503), body: .binary(replayable))
        guard case .default(503, _) = first else { return XCTFail("expected the last 503, got \(first)") }
        XCTAssertEqual(server.arrivals.targets.filter { $0 == "/status/503" }.count, 3)

        let once = HTTPBody(
            AsyncStream<ArraySlice<UInt8>> { continuation in
                continuation.yield(ArraySlice(repeating: 7, count: 1000))
                continuation.finish()
            }, length: .known(1000), iterationBehavior: .single)
        let second = try await client(retrying).putStatus(path: .init(code: 502), body: .binary(once))
        guard case .default(502, _) = second else { return XCTFail("expected the 502 itself, got \(second)") }
        XCTAssertEqual(
            server.arrivals.targets.filter { $0 == "/status/502" }.count, 1, "a body read once is never resent")
    }

    // MARK: - Authentication

    func testA401IsRefreshedOnceForConcurrentCalls() async throws {
        let space = UUID().uuidString
        let refresh = server.url("/token/\(space)/refresh")
        // The server issues two tokens: the credential holds the first, which it no longer accepts.
        let first = try json(try await session.request(refresh, method: .post).validate().serializingData().value)
        _ = try await session.request(refresh, method: .post).validate().serializingData().value
        let authenticator = TokenAuthenticator(refreshURL: server.url("/token/\(space)/refresh?delay_ms=200"))
        let interceptor = AuthenticationInterceptor(
            authenticator: authenticator, credential: TokenCredential(token: first["token"] as? String ?? ""))
        let client = client(Session(interceptor: interceptor))
        let tokens = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<8 {
                group.addTask { try await client.getProtected(path: .init(space: space)).ok.body.json.token }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        XCTAssertEqual(tokens.count, 8)
        XCTAssertEqual(Set(tokens), ["token-3"])
        XCTAssertEqual(authenticator.refreshes.values.count, 1, "one refresh served every call")
    }

    /// A `401` with a challenge no credential answers is held in memory in case it is followed; its body still
    /// reaches the generated code.
    func testAnUnansweredChallengeIsATypedResponseWithItsBody() async throws {
        let output = try await client().getProtected(path: .init(space: UUID().uuidString))
        guard case let .unauthorized(refused) = output else { return XCTFail("expected the 401, got \(output)") }
        XCTAssertEqual(try refused.body.json.error, "invalid_token")
    }

    // MARK: - Time and cancellation

    /// A stream lasts longer than the session's idle timeout while it keeps arriving, and is read at the consumer's
    /// pace: the idle timeout is not a total deadline.
    func testAStreamOutlivesTheIdleTimeoutAndIsReadAtTheConsumersPace() async throws {
        let idle = session { $0.timeoutIntervalForRequest = 1.5 }
        let output = try await client(idle).streamEvents(query: .init(count: 30, delay_ms: 100))
        let events = try output.ok.body.text_event_hyphen_stream.asDecodedServerSentEvents()
        var ids: [String] = []
        for try await event in events where event.event == "tick" {
            ids.append(event.id ?? "")
            // A slow consumer: other work runs between reads.
            for _ in 0..<50 { await Task.yield() }
        }
        // The server paused 100 ms between events, so the stream lasted at least 2.9 s, twice the idle timeout.
        XCTAssertEqual(ids, (0..<30).map(String.init))
    }

    func testCancellingTheCallingTaskCancelsTheRequest() async throws {
        let client = client()
        let call = Task { try await client.getDelayed(path: .init(seconds: 10)) }
        await arrival(of: "/delay/10")
        call.cancel()
        do {
            let output = try await call.value
            XCTFail("expected a cancellation, got \(output)")
        } catch {
            XCTAssertEqual(Self.afError(error)?.isExplicitlyCancelledError, true, "\(error)")
        }
    }

    func testCancellingTheTaskReadingABodyCancelsTheRequest() async throws {
        let output = try await client().streamEvents(query: .init(count: 100_000, delay_ms: 1000))
        let body = try output.ok.body.text_event_hyphen_stream
        let reader = Task {
            var events = 0
            for try await _ in body.asDecodedServerSentEvents() { events += 1 }
            return events
        }
        reader.cancel()
        do {
            let events = try await reader.value
            XCTFail("expected a cancellation after \(events) events")
        } catch {
            XCTAssertEqual(Self.afError(error)?.isExplicitlyCancelledError, true, "\(error)")
        }
    }

    func testATotalTimeoutEndsAStreamThatKeepsArriving() async throws {
        let client = client(timeout: .milliseconds(300))
        do {
            let output = try await client.streamEvents(query: .init(count: 100_000, delay_ms: 1000))
            for try await _ in try output.ok.body.text_event_hyphen_stream {}
            XCTFail("the stream ended without the deadline")
        } catch {
            let underlying = Self.afError(error)?.underlyingError as? URLError
            XCTAssertEqual(underlying?.code, .timedOut, "\(error)")
        }
    }

    // MARK: - Errors

    func testATransportFailureReachesTheClientAsItsAFError() async throws {
        let closed = Client(
            serverURL: URL(string: "http://127.0.0.1:1")!, transport: BluebonnetTransport(session: session))
        do {
            let output = try await closed.getEcho()
            XCTFail("expected a failure, got \(output)")
        } catch let error as ClientError {
            XCTAssertEqual(error.operationID, "getEcho")
            let afError = try XCTUnwrap(error.underlyingError as? AFError, "\(error.underlyingError)")
            XCTAssertTrue(afError.isSessionTaskError, "\(afError)")
        }
    }

    func testValidationIsOffUnlessAsked() async throws {
        let validating = Client(
            serverURL: server.url("/"), transport: BluebonnetTransport(session: session, validatesResponses: true))
        do {
            let output = try await validating.getStatus(path: .init(code: 404))
            XCTFail("expected a validation failure, got \(output)")
        } catch {
            XCTAssertEqual(Self.afError(error)?.responseCode, 404, "\(error)")
        }
    }

    // MARK: - Helpers

    static func afError(_ error: any Error) -> AFError? {
        if let error = error as? AFError { return error }
        return (error as? ClientError)?.underlyingError as? AFError
    }

    static func crc32(_ data: Data) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data {
            crc ^= UInt32(byte)
            for _ in 0..<8 { crc = (crc >> 1) ^ (0xEDB8_8320 & (0 &- (crc & 1))) }
        }
        return ~crc
    }
}
