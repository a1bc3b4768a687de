import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `WebSocketRequest` over real sockets: the events in Alamofire's order, sending, closing both ways, cancelling,
/// subprotocols, pings, and the upgrade as a hop like any other (adapters, cookies, redirects, challenges, retries).
final class WebSocketTests: WebSocketTestCase {
    func testMessagesThenTheServersCloseArriveInOrder() async throws {
        let request = session.webSocketRequest(to: server.url("/messages?count=3"))
        let events = await events(of: request)

        XCTAssertEqual(names(events), ["connected", "message", "message", "message", "disconnected", "completed"])
        XCTAssertEqual(messages(events).map(\.text), ["message 0", "message 1", "message 2"])
        guard case let .connected(chosen) = events.first, case let .disconnected(code, reason) = events.at(4) else {
            return XCTFail("\(events)")
        }
        XCTAssertNil(chosen)
        XCTAssertEqual(code, .normalClosure)
        XCTAssertNil(reason)
        let completion = completion(events)
        XCTAssertNil(completion?.error)
        XCTAssertEqual(completion?.response?.statusCode, 101)
        XCTAssertEqual(completion?.request?.url, server.url("/messages?count=3"))
        XCTAssertNotNil(completion?.taskMetrics)
        XCTAssertTrue(request.isFinished)
        XCTAssertNil(request.error)
    }

    func testBinaryMessagesKeepTheirBytes() async throws {
        let request = session.webSocketRequest(to: server.url("/messages?count=2&size=70000"))
        let events = await events(of: request)

        XCTAssertEqual(messages(events).map { $0.bytes?.count }, [70000, 70000])
        XCTAssertEqual(messages(events).last?.bytes, Data(repeating: 1, count: 70000))
    }

    func testSentMessagesAreEchoedAndTheClientsCloseIsAnswered() async throws {
        let request = session.webSocketRequest(to: server.url("/echo"))
        let sent = Recorder<Bool>()
        // A send's completion runs on the queue it names, here a concurrent one: ordered with nothing the socket does
        // after the write (the echo, the close, the completion), so it is waited for, not assumed to have run.
        let bothAnswered = expectation(description: "both sends answered")
        bothAnswered.expectedFulfillmentCount = 2
        let events = await events(of: request) { [unowned request] event in
            switch event.kind {
            case .connected:
                request.send(.string("hello"), queue: .global()) {
                    sent.append((try? $0.get()) != nil)
                    bothAnswered.fulfill()
                }
                request.send(.data(Data([0, 1, 2, 255])), queue: .global()) {
                    sent.append((try? $0.get()) != nil)
                    bothAnswered.fulfill()
                }
            case .receivedMessage:
                if case .data = event.message { event.close(sending: .normalClosure) }
            default:
                break
            }
        }

        XCTAssertEqual(names(events), ["connected", "message", "message", "disconnected", "completed"])
        XCTAssertEqual(messages(events).first?.text, "hello")
        XCTAssertEqual(messages(events).last?.bytes, Data([0, 1, 2, 255]))
        guard case let .disconnected(code, _) = events.at(3) else { return XCTFail("\(events)") }
        XCTAssertEqual(code, .normalClosure)
        XCTAssertNil(completion(events)?.error)
        await fulfillment(of: [bothAnswered], timeout: 60)
        XCTAssertEqual(sent.values, [true, true])
        XCTAssertEqual(server.closeCodesReceived, [1000])
    }

    func testAMessageSentBeforeTheSocketOpensWaitsForIt() async throws {
        let request = session.webSocketRequest(to: server.url("/echo"))
        request.send(.string("early"), queue: .global()) { _ in }
        let events = await events(of: request) { event in
            if event.message != nil { event.close(sending: .goingAway) }
        }

        XCTAssertEqual(messages(events).map(\.text), ["early"])
        XCTAssertEqual(server.closeCodesReceived, [1001])
    }

    func testCancellingEndsWithExplicitlyCancelledAndNoDisconnection() async throws {
        let request = session.webSocketRequest(to: server.url("/echo"))
        let events = await events(of: request) { event in
            if case .connected = event.kind { event.cancel() }
        }

        XCTAssertEqual(names(events), ["connected", "completed"])
        XCTAssertEqual(completion(events)?.error?.isExplicitlyCancelledError, true)
        XCTAssertEqual(request.error?.isExplicitlyCancelledError, true)
        // The socket said it was going away before it closed.
        await eventually("the server heard the close") { server.closeCodesReceived == [1001] }
    }

    func testTheServersCloseCodeAndReasonArePassedOn() async throws {
        let request = session.webSocketRequest(to: server.url("/close?code=1001&reason=bye"))
        let events = await events(of: request)

        XCTAssertEqual(names(events), ["connected", "disconnected", "completed"])
        guard case let .disconnected(code, reason) = events.at(1) else { return XCTFail("\(events)") }
        XCTAssertEqual(code, .goingAway)
        XCTAssertEqual(reason, Data("bye".utf8))
        XCTAssertNil(completion(events)?.error)
        // The close is answered with the same code (the server may read the answer after the client is done).
        await eventually("the server heard the answer") { server.closeCodesReceived == [1001] }
    }

    func testACloseCodeFoundationHasNoNameForComesAsInvalid() async throws {
        let request = session.webSocketRequest(to: server.url("/close?code=4001"))
        let events = await events(of: request)

        guard case let .disconnected(code, _) = events.at(1) else { return XCTFail("\(events)") }
        XCTAssertEqual(code, .invalid)
        XCTAssertNil(completion(events)?.error)
    }

    func testTheSubprotocolIsNegotiated() async throws {
        let request = session.webSocketRequest(
            to: server.url("/subprotocol"), configuration: .protocol("superchat, chat"))
        let events = await events(of: request) { event in
            if case .connected = event.kind { event.close(sending: .normalClosure) }
        }

        guard case let .connected(chosen) = events.first else { return XCTFail("\(events)") }
        XCTAssertEqual(chosen, "superchat")
        XCTAssertTrue(server.upgradeHeads.last?.contains("Sec-WebSocket-Protocol: superchat, chat") == true)
    }

    func testASubprotocolNobodyOfferedFailsTheUpgrade() async throws {
        let request = session.webSocketRequest(to: server.url("/wrong-subprotocol"), configuration: .protocol("chat"))
        let events = await events(of: request)

        XCTAssertEqual(names(events), ["completed"])
        XCTAssertEqual(protocolError(completion(events))?.closeCode, .protocolError)
    }

    func testAnExtensionNobodyOfferedFailsTheUpgrade() async throws {
        let request = session.webSocketRequest(to: server.url("/extension?name=x-webkit-deflate-frame"))
        let events = await events(of: request)

        XCTAssertEqual(names(events), ["completed"])
        XCTAssertEqual(protocolError(completion(events))?.closeCode, .mandatoryExtensionMissing)
        XCTAssertTrue(server.upgradeHeads.last?.contains("Sec-WebSocket-Extensions: permessage-deflate") == true)
    }

    func testCompressionTurnedOffIsNotOfferedAndRefusedWhenImposed() async throws {
        let request = session.webSocketRequest(
            to: server.url("/extension"), configuration: .init(perMessageDeflate: false))
        let events = await events(of: request)

        XCTAssertEqual(names(events), ["completed"])
        XCTAssertEqual(protocolError(completion(events))?.closeCode, .mandatoryExtensionMissing)
        XCTAssertFalse(server.upgradeHeads.last?.contains("Sec-WebSocket-Extensions") == true)
    }

    func testPingsAreAnsweredByTheirPongs() async throws {
        let request = session.webSocketRequest(to: server.url("/echo"))
        let pongs = Recorder<Bool>()
        let allAnswered = expectation(description: "three pongs")
        allAnswered.expectedFulfillmentCount = 3
        let events = await events(of: request) { [unowned request] event in
            guard case .connected = event.kind else { return }
            for index in 0..<3 {
                request.sendPing(respondingOn: .global()) { response in
                    if case let .pong(pong) = response {
                        pongs.append(pong.latency >= 0 && pong.end >= pong.start)
                    } else {
                        pongs.append(false)
                    }
                    allAnswered.fulfill()
                    if index == 2 { request.close(sending: .normalClosure) }
                }
            }
        }
        await fulfillment(of: [allAnswered], timeout: 30)

        XCTAssertEqual(pongs.values, [true, true, true])
        XCTAssertEqual(server.pingsReceived, 3)
        XCTAssertNil(completion(events)?.error)
    }

    func testAPingOnASocketNotResumedIsUnsent() async throws {
        let session = Session(startRequestsImmediately: false)
        let request = session.webSocketRequest(to: server.url("/echo"))
        let answered = expectation(description: "answered")
        request.sendPing(respondingOn: .global()) { response in
            if case .unsent = response { answered.fulfill() }
        }
        await fulfillment(of: [answered], timeout: 30)
        request.cancel()
    }

    func testAutomaticPingsAreSentAtTheInterval() async throws {
        let request = session.webSocketRequest(to: server.url("/echo"), configuration: .pingInterval(0.01))
        request.streamMessages(on: .global()) { _ in }
        await eventually("the server received three pings") { server.pingsReceived >= 3 }
        request.close(sending: .normalClosure)
        let done = expectation(description: "completed")
        request.streamMessageEvents(on: .global()) { event in
            if case .completed = event.kind { done.fulfill() }
        }
        await fulfillment(of: [done], timeout: 30)
    }

    func testAServerThatLeavesAPingUnansweredFailsTheSocketAtThePingTimeout() async throws {
        // Half a frame, then silence: before the ping timeout, the socket stayed open for ever.
        let configuration = WebSocketRequest.Configuration(pingInterval: 0.05, pingTimeout: 0.5)
        let request = session.webSocketRequest(to: server.url("/fault?kind=silent"), configuration: configuration)
        let kinds = Recorder<Kind>()
        let completed = expectation(description: "completed")
        request.streamMessageEvents(on: DispatchQueue(label: "events")) { event in
            kinds.append(event.kind)
            if case .completed = event.kind { completed.fulfill() }
        }
        // Generous: it bounds only a failure, and nothing here depends on how long the timeout took.
        await fulfillment(of: [completed], timeout: 30)

        XCTAssertEqual(names(kinds.values), ["connected", "completed"])
        let error = completion(kinds.values)?.error
        XCTAssertEqual(error?.urlErrorCode, .timedOut, String(describing: error))
        guard case let .sessionTaskFailed(urlError as URLError)? = error,
            let reason = urlError.userInfo[NSUnderlyingErrorKey] as? WebSocketProtocolError
        else { return XCTFail("no reason given: \(String(describing: error))") }
        XCTAssertEqual(reason.closeCode, .goingAway)
        XCTAssertTrue(reason.description.contains("answered no ping"), reason.description)
        XCTAssertGreaterThanOrEqual(server.pingsReceived, 1)
        await eventually("the server heard the client go away") { server.closeCodesReceived == [1001] }
    }

    func testThePingTimeoutIsTenSecondsByDefault() {
        XCTAssertEqual(WebSocketRequest.Configuration.pingInterval(30).pingTimeout, 10)
        XCTAssertEqual(WebSocketRequest.Configuration.default.pingTimeout, 10)
    }

    func testEventsArriveWhenNobodyKeepsTheRequest() async throws {
        // As Alamofire's own tests write it: `session.webSocketRequest(...).streamMessageEvents { ... }`, the request
        // kept by no one. Its events wait on a held serialization queue until it finished and its session let it go;
        // they must still all arrive (they were dropped when the request was gone).
        let serialization = DispatchQueue(label: "serialization")
        let finished = expectation(description: "finished")
        let monitor = ClosureEventMonitor()
        monitor.requestDidFinish = { _ in finished.fulfill() }
        let session = Session(serializationQueue: serialization, eventMonitors: [monitor])
        serialization.suspend()
        let kinds = Recorder<String>()
        let completed = expectation(description: "completed")
        // A serial queue: on `.global()` the handler of the completion could run before a message's handler had
        // recorded it (seen once in CI on a busy machine), an ordering no queue of that kind promises.
        let events = DispatchQueue(label: "events")
        session.webSocketRequest(to: server.url("/messages?count=2")).streamMessageEvents(on: events) { event in
            switch event.kind {
            case .connected: kinds.append("connected")
            case .receivedMessage: kinds.append("message")
            case .disconnected: kinds.append("disconnected")
            case .completed: kinds.append("completed")
            case .serializerFailed: kinds.append("serializerFailed")
            }
            if case .completed = event.kind { completed.fulfill() }
        }
        await fulfillment(of: [finished], timeout: 30)
        serialization.resume()
        await fulfillment(of: [completed], timeout: 30)
        XCTAssertEqual(kinds.values.sorted(), ["completed", "connected", "disconnected", "message", "message"])
    }

    func testMultipleHandlersEachSeeEveryEvent() async throws {
        let request = session.webSocketRequest(to: server.url("/messages?count=2"))
        let first = Recorder<String>()
        let queue = DispatchQueue(label: "first")
        request.streamMessages(on: queue) { first.append($0.text ?? "") }
        let events = await events(of: request)

        XCTAssertEqual(messages(events).map(\.text), ["message 0", "message 1"])
        queue.sync {}
        XCTAssertEqual(first.values, ["message 0", "message 1"])
    }

    func testDecodableMessagesAreDecodedAndFailuresReported() async throws {
        struct Greeting: Decodable, Sendable, Equatable { let hello: String }
        let request = session.webSocketRequest(to: server.url("/echo"))
        let kinds = Recorder<String>()
        let done = expectation(description: "completed")
        request.streamDecodableEvents(Greeting.self, on: DispatchQueue(label: "decodable")) { [unowned request] event in
            switch event.kind {
            case .connected:
                request.send(.string(#"{"hello":"world"}"#), queue: .global()) { _ in }
                request.send(.string("not json"), queue: .global()) { _ in }
            case let .receivedMessage(greeting):
                kinds.append("value \(greeting.hello)")
            case .serializerFailed:
                kinds.append("failed")
                event.close(sending: .normalClosure)
            case .completed:
                done.fulfill()
            default:
                break
            }
        }
        await fulfillment(of: [done], timeout: 30)
        XCTAssertEqual(kinds.values, ["value world", "failed"])
    }

    func testRequestEventsReachTheMonitor() async throws {
        let monitor = ClosureEventMonitor()
        let heard = Recorder<String>()
        monitor.requestDidResume = { _ in heard.append("resume") }
        monitor.requestDidCreateInitialURLRequest = { _, _ in heard.append("initial") }
        monitor.requestDidFinish = { request in heard.append("finish \(request.response?.statusCode ?? 0)") }
        let session = Session(eventMonitors: [monitor])
        let request = session.webSocketRequest(to: server.url("/messages?count=1"))
        let events = await events(of: request)
        await eventually("the monitor heard the end") { heard.values.contains("finish 101") }
        XCTAssertEqual(heard.values.filter { $0 != "resume" }.first, "initial")
        XCTAssertEqual(heard.values.filter { $0 == "resume" }.count, 1)
        XCTAssertNotNil(request.taskMetrics?.transactionMetrics.first?.responseStartDate)
        let timeline = try XCTUnwrap(completion(events)?.timeline)
        XCTAssertGreaterThan(timeline.requestDuration, 0)
        XCTAssertGreaterThan(timeline.initialResponseTime, timeline.requestStartTime)
        XCTAssertGreaterThanOrEqual(timeline.requestCompletedTime, timeline.initialResponseTime)
    }

    // MARK: - The upgrade is a hop like any other

    func testAdaptersTheModifierAndCookiesShapeTheUpgrade() async throws {
        let configuration = URLSessionConfiguration.af.default
        let storage = try XCTUnwrap(URLSessionConfiguration.ephemeral.httpCookieStorage)
        configuration.httpCookieStorage = storage
        storage.setCookie(
            HTTPCookie(properties: [.name: "flavor", .value: "mint", .domain: "127.0.0.1", .path: "/"])!)
        let adapter = Adapter { request, _, completion in
            var request = request
            request.headers.add(name: "X-Adapted", value: "yes")
            completion(.success(request))
        }
        let session = Session(configuration: configuration, interceptor: adapter)
        let request = session.webSocketRequest(
            to: server.url("/messages?count=1"), headers: ["X-Header": "given"],
            requestModifier: { $0.setValue("modified", forHTTPHeaderField: "X-Modified") })
        let events = await events(of: request)

        XCTAssertNil(completion(events)?.error)
        let head = try XCTUnwrap(server.upgradeHeads.last)
        for line in ["X-Adapted: yes", "X-Header: given", "X-Modified: modified", "Cookie: flavor=mint"] {
            XCTAssertTrue(head.contains(line), "\(line) missing from \(head)")
        }
    }

    func testParametersAreEncodedInTheQuery() async throws {
        let request = session.webSocketRequest(
            to: server.url("/messages"), parameters: ["count": "2"], encoder: URLEncodedFormParameterEncoder.default)
        let events = await events(of: request)

        XCTAssertEqual(messages(events).count, 2)
        XCTAssertEqual(server.upgradeHeads.last?.hasPrefix("GET /messages?count=2\n"), true)
    }

    func testARedirectedUpgradeIsFollowed() async throws {
        let request = session.webSocketRequest(to: server.url("/redirect?to=/messages%3Fcount%3D1"))
        let events = await events(of: request)

        XCTAssertEqual(names(events), ["connected", "message", "disconnected", "completed"])
        XCTAssertEqual(
            server.upgradeHeads.map { $0.split(separator: "\n").first.map(String.init) ?? "" },
            [
                "GET /redirect?to=/messages%3Fcount%3D1", "GET /messages?count=1",
            ])
        XCTAssertEqual(completion(events)?.request?.url, server.url("/messages?count=1"))
    }

    func testCredentialsStayWithTheirOriginWhenTheUpgradeIsRedirected() async throws {
        // 127.0.0.1 and localhost are two origins: the redirect drops the Authorization the first one was given.
        let elsewhere = "ws://localhost:\(server.port)/messages?count=1"
        let request = session.webSocketRequest(
            to: server.url("/redirect?to=\(elsewhere.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"),
            headers: [.authorization(username: "walker", password: "s3cret")])
        let events = await events(of: request)

        XCTAssertNil(completion(events)?.error)
        XCTAssertEqual(server.upgradeHeads.count, 2)
        XCTAssertTrue(server.upgradeHeads.first!.contains("Authorization: Basic"))
        XCTAssertFalse(server.upgradeHeads.last!.contains("Authorization"), server.upgradeHeads.last!)
        XCTAssertTrue(server.upgradeHeads.last!.contains("Host: localhost:\(server.port)"))
    }

    func testAnAuthenticationChallengeIsAnsweredOnce() async throws {
        let request = session.webSocketRequest(to: server.url("/basic-auth/walker/s3cret"))
            .authenticate(username: "walker", password: "s3cret")
        let events = await events(of: request) { event in
            if case .connected = event.kind { event.close(sending: .normalClosure) }
        }

        XCTAssertNil(completion(events)?.error)
        XCTAssertEqual(server.upgradeHeads.count, 2)
        XCTAssertFalse(server.upgradeHeads.first!.contains("Authorization"))
        XCTAssertTrue(server.upgradeHeads.last!.contains("Authorization: Basic d2Fsa2VyOnMzY3JldA=="))
    }

    func testWrongCredentialsFailAfterOneAnswer() async throws {
        let request = session.webSocketRequest(to: server.url("/basic-auth/walker/s3cret"))
            .authenticate(username: "walker", password: "wrong")
        let events = await events(of: request)

        XCTAssertEqual(names(events), ["completed"])
        XCTAssertEqual(completion(events)?.response?.statusCode, 401)
        XCTAssertEqual(completion(events)?.error?.urlErrorCode, .badServerResponse)
        XCTAssertEqual(server.upgradeHeads.count, 2)
    }

    func testARefusedUpgradeFailsAsBadServerResponseAndIsRetried() async throws {
        let retrier = CountingRetrier(server: server)
        let request = session.webSocketRequest(to: server.url("/status?code=500"), interceptor: retrier)
        let events = await events(of: request)

        XCTAssertEqual(names(events), ["connected", "message", "disconnected", "completed"])
        XCTAssertNil(completion(events)?.error)
        XCTAssertEqual(retrier.errors.values.map { $0.urlErrorCode }, [.badServerResponse])
        XCTAssertEqual(retrier.statuses.values, [500])
        XCTAssertEqual(request.retryCount, 1)
    }

    func testAChallengeWithCredentialsSentUpFrontThatFailFailsTheSocket() async throws {
        let request = session.webSocketRequest(
            to: server.url("/basic-auth/walker/s3cret"), headers: [.authorization(username: "walker", password: "no")])
        let events = await events(of: request)

        XCTAssertEqual(names(events), ["completed"])
        XCTAssertEqual(completion(events)?.response?.statusCode, 401)
        XCTAssertEqual(completion(events)?.error?.urlErrorCode, .badServerResponse)
    }

    func testAMessageWaitingForASocketThatNeverOpensFails() async throws {
        let port = server.port
        await server.stop()
        let request = session.webSocketRequest(to: "ws://127.0.0.1:\(port)/echo")
        let sent = expectation(description: "the send was answered")
        request.send(.string("never"), queue: .global()) { result in
            if case .failure = result { sent.fulfill() }
        }
        _ = await events(of: request)
        await fulfillment(of: [sent], timeout: 30)
    }

    func testARefusedUpgradeWithoutARetrierFails() async throws {
        let request = session.webSocketRequest(to: server.url("/status?code=403"))
        let events = await events(of: request)

        XCTAssertEqual(names(events), ["completed"])
        XCTAssertEqual(completion(events)?.error?.urlErrorCode, .badServerResponse)
        XCTAssertEqual(completion(events)?.response?.statusCode, 403)
    }

    func testAnUnsupportedSchemeFails() async throws {
        let request = session.webSocketRequest(to: "ftp://127.0.0.1:\(server.port)/echo")
        let events = await events(of: request)

        XCTAssertEqual(names(events), ["completed"])
        XCTAssertNotNil(completion(events)?.error)
    }

    func testAClosedPortFailsAsCannotConnect() async throws {
        let port = server.port
        await server.stop()
        let request = session.webSocketRequest(to: "ws://127.0.0.1:\(port)/echo")
        let events = await events(of: request)

        XCTAssertEqual(completion(events)?.error?.urlErrorCode, .cannotConnectToHost)
    }

    func testASessionGoingAwayClosesItsSockets() async throws {
        var session: Session? = Session()
        let request = session!.webSocketRequest(to: server.url("/echo"))
        let connected = expectation(description: "connected")
        let completed = expectation(description: "completed")
        request.streamMessageEvents(on: .global()) { event in
            if case .connected = event.kind { connected.fulfill() }
            if case .completed = event.kind { completed.fulfill() }
        }
        await fulfillment(of: [connected], timeout: 30)
        session = nil
        await fulfillment(of: [completed], timeout: 30)
        XCTAssertNotNil(request.error)
    }
}

/// Rewrites a refused upgrade's URL to one that upgrades on the retry, and records what it was asked.
private final class CountingRetrier: RequestInterceptor, @unchecked Sendable {
    let errors = Recorder<AFError>()
    let statuses = Recorder<Int>()
    private let target: URL

    init(server: WebSocketServer) {
        target = server.url("/messages?count=1")
    }

    func adapt(
        _ urlRequest: URLRequest, for session: Session, completion: @escaping (Result<URLRequest, any Error>) -> Void
    ) {
        var request = urlRequest
        if !errors.values.isEmpty { request.url = target }
        completion(.success(request))
    }

    func retry(
        _ request: Request, for session: Session, dueTo error: any Error,
        completion: @escaping (RetryResult) -> Void
    ) {
        errors.append(error.asAFError!)
        statuses.append(request.response?.statusCode ?? 0)
        completion(errors.values.count == 1 ? .retry : .doNotRetry)
    }
}
