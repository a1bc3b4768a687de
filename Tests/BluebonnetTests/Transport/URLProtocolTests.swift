import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A Mocker-style stub, as users write them: responses registered by URL, served through the `URLProtocolClient`.
final class StubProtocol: URLProtocol {
    struct Stub: Sendable {
        var status = 200
        var headers: [String: String] = [:]
        var chunks: [Data] = []
        var error: URLError?
        var redirect: URL?
        /// Never answers, for cancellation and timeouts.
        var hangs = false
        /// Declares a cached response valid instead of loading.
        var cached = false
    }

    /// What the stubs answer and what they saw; a lock guards it, for `startLoading` runs on Bluebonnet's queue.
    final class Registry: @unchecked Sendable {
        // @unchecked: every field is behind `lock`.
        private let lock = NSLock()
        private var stubs: [String: [Stub]] = [:]
        private var received: [URLRequest] = []
        private var bodies: [Data] = []
        private var stops = 0

        func register(_ url: String, _ stubs: Stub...) { lock.withLock { self.stubs[url] = stubs } }
        func accepts(_ url: URL?) -> Bool { lock.withLock { url.map { stubs[$0.absoluteString] != nil } ?? false } }

        /// The next stub of `url`; the last one repeats.
        func next(for url: URL?) -> Stub? {
            lock.withLock {
                guard let key = url?.absoluteString, var queue = stubs[key], let first = queue.first else { return nil }
                if queue.count > 1 { queue.removeFirst() }
                stubs[key] = queue
                return first
            }
        }

        func record(_ request: URLRequest, body: Data) {
            lock.withLock {
                received.append(request)
                bodies.append(body)
            }
        }
        func stopped() { lock.withLock { stops += 1 } }
        var requests: [URLRequest] { lock.withLock { received } }
        var requestBodies: [Data] { lock.withLock { bodies } }
        var stopCount: Int { lock.withLock { stops } }
    }

    static let registry = Registry()

    override class func canInit(with request: URLRequest) -> Bool { registry.accepts(request.url) }
    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        var body = request.httpBody ?? Data()
        if let stream = request.httpBodyStream {
            stream.open()
            var buffer = [UInt8](repeating: 0, count: 4096)
            while case let count = stream.read(&buffer, maxLength: buffer.count), count > 0 {
                body.append(contentsOf: buffer[..<count])
            }
            stream.close()
        }
        Self.registry.record(request, body: body)
        guard let stub = Self.registry.next(for: request.url), let url = request.url, let client else { return }
        if stub.hangs { return }
        if let target = stub.redirect {
            let response = HTTPURLResponse(url: url, statusCode: 302, httpVersion: nil, headerFields: [:])!
            client.urlProtocol(self, wasRedirectedTo: URLRequest(url: target), redirectResponse: response)
            return
        }
        if stub.cached {
            let response = HTTPURLResponse(
                url: url, statusCode: stub.status, httpVersion: "HTTP/1.1", headerFields: stub.headers)!
            let cached = CachedURLResponse(response: response, data: stub.chunks.reduce(Data(), +))
            client.urlProtocol(self, cachedResponseIsValid: cached)
            return
        }
        if let error = stub.error {
            client.urlProtocol(self, didFailWithError: error)
            return
        }
        let response = HTTPURLResponse(
            url: url, statusCode: stub.status, httpVersion: "HTTP/1.1", headerFields: stub.headers)!
        client.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        for chunk in stub.chunks { client.urlProtocol(self, didLoad: chunk) }
        client.urlProtocolDidFinishLoading(self)
    }

    override func stopLoading() {
        Self.registry.stopped()
    }
}

/// `URLSessionConfiguration.protocolClasses` answering requests through Bluebonnet, with everything downstream
/// (validation, serializers, retry, redirects, downloads, streams, limits, cancellation) as with a real server.
final class URLProtocolTests: ServerTestCase {
    private var registry: StubProtocol.Registry { StubProtocol.registry }

    /// A URL of this test's own, so stubs never collide.
    private func stubURL(_ path: String = "/") -> String {
        "https://stubs.example/\(UUID().uuidString)\(path)"
    }

    private func stubbedSession(_ configure: (URLSessionConfiguration) -> Void = { _ in }) -> Session {
        session { configuration in
            configuration.protocolClasses = [StubProtocol.self] + (configuration.protocolClasses ?? [])
            configure(configuration)
        }
    }

    func testAStubAnswersWithItsHeadAndChunksAndTheResponseIsSerializedAndValidated() async throws {
        struct Item: Decodable, Equatable, Sendable { let name: String; let count: Int }
        let url = stubURL("/item")
        registry.register(
            url,
            .init(
                headers: ["Content-Type": "application/json", "X-Stub": "yes"],
                chunks: [Data(#"{"name":"#.utf8), Data(#""bonnet","count":3}"#.utf8)]))
        let request = stubbedSession().request(url).validate()
        let response = await request.serializingDecodable(Item.self).response
        XCTAssertEqual(response.value, Item(name: "bonnet", count: 3), String(describing: response.error))
        XCTAssertEqual(response.response?.statusCode, 200)
        XCTAssertEqual(response.response?.value(forHTTPHeaderField: "X-Stub"), "yes")
        XCTAssertEqual(response.taskMetrics?.transactionMetrics.first?.networkProtocolName, "StubProtocol")
    }

    func testTheStubSeesTheRequestAsSentAndRequestsItDeclinesGoToTheNetwork() async throws {
        let url = stubURL("/seen")
        registry.register(url, .init(chunks: [Data("ok".utf8)]))
        let session = stubbedSession { configuration in
            configuration.headers.add(name: "X-Session", value: "s")
            let cookies = URLSessionConfiguration.ephemeral.httpCookieStorage
            cookies?.setCookie(
                HTTPCookie(properties: [
                    .domain: "stubs.example", .path: "/", .name: "flavour", .value: "oat", .secure: "TRUE",
                ])!)
            configuration.httpCookieStorage = cookies
        }
        let adapter = Adapter { request, _, completion in
            var adapted = request
            adapted.headers.add(name: "X-Adapted", value: "a")
            completion(.success(adapted))
        }
        _ = try await session.upload(Data("payload".utf8), to: url, interceptor: adapter).serializingData().value
        let seen = try XCTUnwrap(registry.requests.last)
        XCTAssertEqual(seen.value(forHTTPHeaderField: "X-Adapted"), "a")
        XCTAssertEqual(seen.value(forHTTPHeaderField: "X-Session"), "s")
        XCTAssertEqual(seen.value(forHTTPHeaderField: "Cookie"), "flavour=oat")
        XCTAssertEqual(seen.httpMethod, "POST")
        XCTAssertEqual(registry.requestBodies.last, Data("payload".utf8))

        let directory = try TemporaryDirectory()
        let file = try directory.file("upload.bin", contents: patternedData(count: 100_000))
        _ = try await session.upload(file, to: url).serializingData().value
        XCTAssertEqual(registry.requestBodies.last, patternedData(count: 100_000), "a file as httpBodyStream")

        let network = try json(try await session.request(self.url("/get")).serializingData().value)
        XCTAssertNotNil(network["url"], "the test server answered a request no stub accepts")
    }

    func testACompressedUploadReachesTheStubCompressed() async throws {
        let url = stubURL("/compressed")
        registry.register(url, .init(chunks: [Data("ok".utf8)]))
        let payload = Data(String(repeating: "compress me ", count: 2000).utf8)
        let session = stubbedSession()
        _ = try await session.upload(InputStream(data: payload), to: url, interceptor: .deflateCompressor)
            .serializingData().value
        let seen = try XCTUnwrap(registry.requests.last)
        XCTAssertEqual(seen.value(forHTTPHeaderField: "Content-Encoding"), "deflate")
        let body = try XCTUnwrap(registry.requestBodies.last)
        XCTAssertEqual(body.first, 0x78, "a zlib stream")
        XCTAssertLessThan(body.count, payload.count / 10)
    }

    func testARedirectTheStubReportsIsFollowedThroughTheSessionsRules() async throws {
        let first = stubURL("/from")
        let second = stubURL("/to")
        registry.register(first, .init(redirect: URL(string: second)!))
        registry.register(second, .init(chunks: [Data("arrived".utf8)]))
        let session = stubbedSession()
        let followed = await session.request(first).serializingString().response
        XCTAssertEqual(followed.value, "arrived", String(describing: followed.error))
        XCTAssertEqual(followed.response?.url?.absoluteString, second)

        let stopped = await session.request(first).redirect(using: .doNotFollow).serializingData(
            emptyResponseCodes: [302]
        ).response
        XCTAssertEqual(stopped.response?.statusCode, 302)
        XCTAssertEqual(stopped.response?.value(forHTTPHeaderField: "Location"), second)
    }

    func testAFailureIsASessionTaskFailureWithTheStubsErrorAndRetryAndValidationApply() async throws {
        let failing = stubURL("/offline")
        registry.register(failing, .init(error: URLError(.notConnectedToInternet)))
        let session = stubbedSession()
        let failed = await session.request(failing).serializingData().response
        XCTAssertTrue(failed.error?.isSessionTaskError == true, String(describing: failed.error))
        XCTAssertEqual((failed.error?.underlyingError as? URLError)?.code, .notConnectedToInternet)

        let flaky = stubURL("/flaky")
        registry.register(flaky, .init(status: 503), .init(chunks: [Data("fine".utf8)]))
        let retrying = await session.request(
            flaky, interceptor: RetryPolicy(retryLimit: 2, exponentialBackoffScale: 0.01)
        ).validate().serializingString().response
        XCTAssertEqual(retrying.value, "fine", String(describing: retrying.error))
        XCTAssertEqual(registry.requests.filter { $0.url?.absoluteString == flaky }.count, 2, "asked again on retry")
    }

    func testADownloadAndAStreamReceiveTheStubsBody() async throws {
        let url = stubURL("/file")
        let chunks = (0..<5).map { patternedData(count: 10_000, seed: UInt8($0)) }
        registry.register(url, .init(chunks: chunks))
        let session = stubbedSession()
        let download = await session.download(url).serializingDownloadedFileURL().response
        let fileURL = try XCTUnwrap(download.value, String(describing: download.error))
        XCTAssertEqual(try Data(contentsOf: fileURL), chunks.reduce(Data(), +))
        try? FileManager.default.removeItem(at: fileURL)

        var streamed = Data()
        for await stream in session.streamRequest(url).streamTask().streamingData() {
            if case let .success(chunk)? = stream.result { streamed.append(chunk) }
        }
        XCTAssertEqual(streamed, chunks.reduce(Data(), +))
    }

    func testACachedResponseTheStubDeclaresValidIsServedAsFromTheCache() async throws {
        let url = stubURL("/cached")
        registry.register(
            url, .init(headers: ["Content-Type": "text/plain"], chunks: [Data("kept".utf8)], cached: true))
        let response = await stubbedSession().request(url).serializingString().response
        XCTAssertEqual(response.value, "kept", String(describing: response.error))
        XCTAssertEqual(response.taskMetrics?.transactionMetrics.first?.resourceFetchType, .localCache)
    }

    func testProgressAndEventMonitorsSeeAStubbedRequestAsAnyOther() async throws {
        let url = stubURL("/progress")
        let chunks = (0..<4).map { patternedData(count: 25_000, seed: UInt8($0)) }
        registry.register(url, .init(headers: ["Content-Length": "100000"], chunks: chunks))
        let queue = DispatchQueue(label: "monitor")
        let events = Recorder<String>()
        let monitor = ClosureEventMonitor(queue: queue)
        monitor.requestDidResume = { _ in events.append("resumed") }
        monitor.requestDidFinish = { _ in events.append("finished") }
        monitor.requestDidParseResponse = { _, response in
            events.append("parsed \(response.response?.statusCode ?? 0)")
        }
        let configuration = URLSessionConfiguration.af.default
        configuration.protocolClasses = [StubProtocol.self]
        let monitored = Session(configuration: configuration, eventMonitors: [monitor])
        let progress = Recorder<Double>()
        let response = await monitored.request(url).downloadProgress(queue: queue) {
            progress.append($0.fractionCompleted)
        }.response(queue: queue) { _ in }.serializingData().response
        monitored.drain()
        XCTAssertEqual(response.value?.count, 100_000, String(describing: response.error))
        XCTAssertEqual(progress.values.last, 1.0)
        XCTAssertGreaterThan(progress.values.count, 1, "progress per chunk: \(progress.values)")
        XCTAssertEqual(Set(events.values), ["resumed", "parsed 200", "finished"])
    }

    func testCancellingOrTimingOutStopsTheProtocolAndALargeBodyIsRefused() async throws {
        let hanging = stubURL("/hang")
        registry.register(hanging, .init(hangs: true))
        let session = stubbedSession { $0.timeoutIntervalForRequest = 0.3 }
        let stopsBefore = registry.stopCount
        let timedOut = await session.request(hanging).serializingData().response
        XCTAssertEqual(timedOut.error?.urlErrorCode, .timedOut, String(describing: timedOut.error))
        XCTAssertEqual(registry.stopCount, stopsBefore + 1)

        let patient = stubbedSession()
        let request = patient.request(hanging)
        let started = registry.requests.count
        let task = Task { await request.serializingData().response }
        while registry.requests.count == started { await Task.yield() }
        request.cancel()
        let cancelled = await task.value
        XCTAssertTrue(cancelled.error?.isExplicitlyCancelledError == true, String(describing: cancelled.error))

        let large = stubURL("/large")
        registry.register(large, .init(chunks: [Data(count: 600), Data(count: 600)]))
        let limited = Session(
            configuration: {
                let configuration = URLSessionConfiguration.af.default
                configuration.protocolClasses = [StubProtocol.self]
                return configuration
            }(), maximumResponseSize: 1000)
        let refused = await limited.request(large).serializingData().response
        guard case .responseLimitExceeded? = refused.error else {
            return XCTFail(String(describing: refused.error))
        }
    }
}
