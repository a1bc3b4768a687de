@testable import Bluebonnet
import BluebonnetTestServer
import Foundation
import InMemoryTracing
import Logging
import Tracing
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The span tree a request makes, with a tracer given to the session (bootstrapping is once per process): a client
/// span per request parented on the caller's span, a client span per hop under it, the hop's context at the server,
/// OpenTelemetry's attributes, and errors.
final class TracingTests: ServerTestCase {
    private var tracer: InMemoryTracer!
    private var traced: Session!

    override func setUp() async throws {
        try await super.setUp()
        tracer = InMemoryTracer()
        traced = Session(tracer: tracer)
    }

    /// Runs `body` inside a caller's span, as a server handler runs inside its request's span.
    private func inCallerSpan<T>(_ body: () async throws -> T) async rethrows -> (T, caller: String) {
        let caller = tracer.startSpan("caller", context: .topLevel, ofKind: .server)
        let result = try await ServiceContext.$current.withValue(caller.context) { try await body() }
        caller.end()
        return (result, caller.spanID)
    }

    private func spans(named name: String) -> [FinishedInMemorySpan] {
        tracer.finishedSpans.filter { $0.operationName == name }
    }

    /// The request's span (parented outside the request) and its hop spans, in order.
    private func tree(file: StaticString = #filePath, line: UInt = #line) throws -> (
        request: FinishedInMemorySpan, hops: [FinishedInMemorySpan]
    ) {
        let spans = tracer.finishedSpans.filter { $0.operationName != "caller" }
        let ids = Set(spans.map(\.spanID))
        let roots = spans.filter { !ids.contains($0.parentSpanID ?? "") }
        XCTAssertEqual(roots.count, 1, "one span per request: \(spans.map(\.operationName))", file: file, line: line)
        let request = try XCTUnwrap(roots.first, file: file, line: line)
        let hops = spans.filter { $0.parentSpanID == request.spanID }
        XCTAssertEqual(hops.count + 1, spans.count, "every other span is a hop under it", file: file, line: line)
        return (request, hops)
    }

    func testAPlainRequestIsAClientSpanUnderTheCallerWithOneHopWhoseContextReachesTheServer() async throws {
        let (echo, caller) = try await inCallerSpan {
            try json(
                try await traced.request(
                    url("/headers").replacingOccurrences(of: "://", with: "://user:secret@") + "?token=abc&x=1"
                )
                .serializingData().value)
        }
        let (request, hops) = try tree()
        XCTAssertEqual(request.parentSpanID, caller, "parented on the caller's span")
        XCTAssertEqual(request.operationName, "GET")
        XCTAssertEqual(request.kind, .client)
        XCTAssertEqual(hops.count, 1)
        let hop = try XCTUnwrap(hops.first)
        XCTAssertEqual(hop.kind, .client)
        XCTAssertEqual(hop.traceID, request.traceID)
        XCTAssertEqual(request.attributes.get("http.request.method")?.toSpanAttribute(), "GET")
        XCTAssertEqual(request.attributes.get("http.response.status_code")?.toSpanAttribute(), 200)
        XCTAssertEqual(hop.attributes.get("http.response.status_code")?.toSpanAttribute(), 200)
        XCTAssertEqual(hop.attributes.get("network.protocol.version")?.toSpanAttribute(), "1.1")
        XCTAssertEqual(request.attributes.get("server.address")?.toSpanAttribute(), "127.0.0.1")
        let port = try XCTUnwrap(URL(string: url("/"))?.port)
        XCTAssertEqual(request.attributes.get("server.port")?.toSpanAttribute(), .int64(Int64(port)))
        guard case let .string(full)? = request.attributes.get("url.full")?.toSpanAttribute() else {
            return XCTFail("no url.full")
        }
        XCTAssertTrue(full.hasSuffix("/headers?token=REDACTED&x=REDACTED"), full)
        XCTAssertFalse(full.contains("secret") || full.contains("user"), "no user info: \(full)")
        XCTAssertNil(request.attributes.get("error.type"))
        XCTAssertNil(request.status)
        let headers = try XCTUnwrap(echo["headers"] as? [String: String])
        XCTAssertEqual(headers["In-Memory-Span-Id"], hop.spanID, "the server continues the hop's span: \(headers)")
        XCTAssertEqual(headers["In-Memory-Trace-Id"], hop.traceID)
    }

    func testARedirectAndARetryAreHopsWithTheirResendCount() async throws {
        _ = try await traced.request(url("/redirect-to?url=/get&status_code=302")).serializingData().value
        var (request, hops) = try tree()
        XCTAssertEqual(hops.count, 2)
        XCTAssertEqual(hops.map { $0.attributes.get("http.response.status_code")?.toSpanAttribute() }, [302, 200])
        XCTAssertNil(hops[0].attributes.get("http.request.resend_count"))
        XCTAssertEqual(hops[1].attributes.get("http.request.resend_count")?.toSpanAttribute(), 1)
        XCTAssertEqual(request.attributes.get("http.request.resend_count")?.toSpanAttribute(), 1)
        XCTAssertEqual(request.attributes.get("http.response.status_code")?.toSpanAttribute(), 200)

        tracer.clearAll()
        let retried = await traced.request(
            url("/status/503"), interceptor: RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0.01)
        ).validate().serializingData().response
        XCTAssertNotNil(retried.error)
        (request, hops) = try tree()
        XCTAssertEqual(hops.count, 2, "the first attempt and its retry")
        XCTAssertEqual(hops.map { $0.status?.code }, [.error, .error], "a 503 is an error on the hop")
        XCTAssertEqual(hops.map { $0.attributes.get("error.type")?.toSpanAttribute() }, ["503", "503"])
        XCTAssertEqual(request.status?.code, .error, "a validation failure is the request's error")
        XCTAssertEqual(request.attributes.get("error.type")?.toSpanAttribute(), "responseValidationFailed")
    }

    func testAnAnsweredChallengeIsAHopAndARefusedConnectionStillRecordsSpans() async throws {
        _ = try await traced.request(url("/basic-auth/user/pass")).authenticate(username: "user", password: "pass")
            .validate().serializingData().value
        let (_, hops) = try tree()
        XCTAssertEqual(hops.map { $0.attributes.get("http.response.status_code")?.toSpanAttribute() }, [401, 200])

        tracer.clearAll()
        let closed = try await TestServer.start()
        let port = closed.port
        await closed.stop()
        let refused = await traced.request("http://127.0.0.1:\(port)/get").serializingData().response
        XCTAssertEqual(refused.error?.urlErrorCode, .cannotConnectToHost)
        let (request, refusedHops) = try tree()
        XCTAssertEqual(refusedHops.count, 1)
        XCTAssertEqual(refusedHops.first?.status?.code, .error)
        XCTAssertEqual(refusedHops.first?.attributes.get("error.type")?.toSpanAttribute(), "URLError(-1004)")
        XCTAssertEqual(request.status?.code, .error)
        XCTAssertEqual(refusedHops.first?.errors.count, 1)
    }

    func testTheCompletionHandlerAPIKeepsTheCallersContextAndACancelledRequestEndsItsSpans() async throws {
        let (_, caller) = await inCallerSpan {
            await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
                // Handled later, on the main queue, where the caller's task-local context is long gone.
                traced.request(url("/delay/0.2")).response { _ in done.resume() }
            }
        }
        let (request, _) = try tree()
        XCTAssertEqual(request.parentSpanID, caller)

        tracer.clearAll()
        let request2 = traced.request(url("/delay/10"))
        let task = Task { await request2.serializingData().response }
        await arrival(of: "/delay/10")
        request2.cancel()
        _ = await task.value
        let (cancelled, hops) = try tree()
        XCTAssertEqual(cancelled.attributes.get("error.type")?.toSpanAttribute(), "cancelled")
        XCTAssertEqual(hops.count, 1, "the hop on the wire ended with the request")
        XCTAssertTrue(tracer.activeSpans.isEmpty, "no span is left open")
    }

    func testARetryASerializerAsksForAfterTheRequestFinishedIsASecondRequestSpanLinkedToTheFirst() async throws {
        struct Missing: Decodable, Sendable { let absent: Int }
        let retrier = Retrier { request, _, error, completion in
            let serialization = error.asAFError?.isResponseSerializationError == true
            completion(request.retryCount == 0 && serialization ? .retry : .doNotRetry)
        }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            traced.request(url("/get"), interceptor: retrier).responseDecodable(of: Missing.self) { _ in done.resume() }
        }
        let spans = tracer.finishedSpans
        let requests = spans.filter { $0.parentSpanID == nil }
        XCTAssertEqual(requests.count, 2, "\(spans.map { ($0.operationName, $0.parentSpanID) })")
        XCTAssertEqual(requests.last?.links.count, 1, "the reopened request links to the span that ended")
        for request in requests {
            XCTAssertEqual(spans.filter { $0.parentSpanID == request.spanID }.count, 1, "one hop under each")
        }
        XCTAssertEqual(
            spans.filter { $0.parentSpanID != nil }.map {
                $0.attributes.get("http.request.resend_count")?.toSpanAttribute()
            },
            [nil, 1], "the second hop is a resend")
        XCTAssertTrue(tracer.activeSpans.isEmpty)
    }

    func testTheErrorRecordedForAURLThatDoesNotParseHoldsNeitherItsPasswordNorItsQueryValues() async throws {
        let lines = Recorder<String>()
        var logger = Logger(label: "test") { _ in CapturingLogHandler(lines: lines) }
        logger.logLevel = .trace
        let logged = Session(logger: logger, tracer: tracer)
        // The space in the host makes it no URL: the `AFError` holds the string as the caller gave it.
        let response = await logged.request("http://user:secret@exa mple.com/get?token=abc").serializingData().response
        XCTAssertEqual(response.error?.isInvalidURLError, true, "\(String(describing: response.error))")
        let (request, hops) = try tree()
        XCTAssertTrue(hops.isEmpty)
        XCTAssertEqual(request.attributes.get("error.type")?.toSpanAttribute(), "invalidURL")
        XCTAssertEqual(request.errors.count, 1)
        let recorded = try XCTUnwrap(request.errors.first?.error)
        // What exporters write: swift-otel's `exception.message` is the error interpolated.
        XCTAssertTrue("\(recorded)".contains("URL is not valid"), "\(recorded)")
        for text in ["\(recorded)", String(reflecting: recorded), recorded.localizedDescription] {
            XCTAssertFalse(text.contains("secret"), "the password was recorded: \(text)")
            XCTAssertFalse(text.contains("abc"), "a query value was recorded: \(text)")
        }
        let log = lines.values.joined(separator: "\n")
        XCTAssertFalse(log.isEmpty)
        XCTAssertFalse(log.contains("secret") || log.contains("abc"), log)
        withExtendedLifetime(logged) {}
    }

    func testAMethodOutsideTheKnownSetIsOtherWithTheMethodKeptAsTheOriginal() async throws {
        _ = await traced.request(url("/anything"), method: HTTPMethod(rawValue: "FROBNICATE")).serializingData()
            .response
        let spans = tracer.finishedSpans
        XCTAssertGreaterThanOrEqual(spans.count, 2, "the request and its hop")
        for span in spans {
            XCTAssertEqual(span.operationName, "HTTP", "OpenTelemetry's name for a span of an unknown method")
            XCTAssertEqual(span.attributes.get("http.request.method")?.toSpanAttribute(), "_OTHER")
            XCTAssertEqual(span.attributes.get("http.request.method_original")?.toSpanAttribute(), "FROBNICATE")
        }

        tracer.clearAll()
        _ = await traced.request(url("/get"), method: HTTPMethod(rawValue: "get")).serializingData().response
        for span in tracer.finishedSpans {
            // `URLRequest` sends a standard method uppercased, so nothing else was sent to keep as the original.
            XCTAssertEqual(span.operationName, "GET", "a known method in another case is that method")
            XCTAssertEqual(span.attributes.get("http.request.method")?.toSpanAttribute(), "GET")
            XCTAssertNil(span.attributes.get("http.request.method_original"))
        }
    }

    func testNothingIsTracedWithoutATracerAndAnAdaptationFailureStillHasASpan() async throws {
        let untraced = Session()
        _ = try await untraced.request(url("/get")).serializingData().value
        XCTAssertTrue(tracer.finishedSpans.isEmpty)
        XCTAssertNil(untraced.request(url("/get")).observer, "no observer, so nothing is paid for tracing")

        struct Refused: Error {}
        let failing = await traced.request(
            url("/get"), interceptor: Adapter { _, _, completion in completion(.failure(Refused())) }
        ).serializingData().response
        XCTAssertNotNil(failing.error)
        let (request, hops) = try tree()
        XCTAssertTrue(hops.isEmpty)
        XCTAssertEqual(request.attributes.get("error.type")?.toSpanAttribute(), "requestAdaptationFailed")
    }
}
