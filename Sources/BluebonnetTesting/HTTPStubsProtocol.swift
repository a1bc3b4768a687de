import Bluebonnet
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The `URLProtocol` that carries requests to the active `HTTPStubs`.
final class HTTPStubsProtocol: URLProtocol {
    // `connection` is behind `lock`: `stopLoading()` may come from another thread than `startLoading()`.
    private let lock = NSLock()
    private var connection: StubConnection?

    override class func canInit(with request: URLRequest) -> Bool {
        let active = StubRegistry.shared.active
        return active.contains { $0.matches(request) } || active.contains { $0.unmatchedRequests == .fail }
    }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        let recorded = RecordedRequest(request, body: Self.body(of: request))
        let active = StubRegistry.shared.active
        var answer: StubResponse?
        // Asked one at a time: answering records the request and moves the stub's sequence on.
        for stubs in active where answer == nil { answer = stubs.answer(recorded) }
        guard let response = answer else {
            active.first { $0.unmatchedRequests == .fail }?.recordUnmatched(recorded)
            client?.urlProtocol(
                self,
                didFailWithError: URLError(
                    .resourceUnavailable,
                    userInfo: [
                        NSLocalizedDescriptionKey: "No stub matches \(recorded)."
                    ]))
            return
        }
        let connection = StubConnection(loader: self, request: recorded)
        lock.withLock { self.connection = connection }
        let serve = { @Sendable in Self.serve(response, on: connection) }
        if response.delay > 0 {
            DispatchQueue.global().asyncAfter(deadline: .now() + response.delay, execute: serve)
        } else {
            DispatchQueue.global().async(execute: serve)
        }
    }

    override func stopLoading() {
        lock.withLock { connection }?.didStop()
    }

    private static func serve(_ response: StubResponse, on connection: StubConnection) {
        guard !connection.isStopped else { return }
        switch response.kind {
        case let .respond(status, headers, body):
            var headers = headers
            if case let .chunks(chunks) = body, chunks.count == 1, headers.value(for: "Content-Length") == nil {
                headers.add(name: "Content-Length", value: String(chunks[0].count))
            }
            connection.respond(status: status, headers: headers)
            switch body {
            case let .chunks(chunks):
                for chunk in chunks where !chunk.isEmpty { connection.send(chunk) }
            case let .file(url):
                do {
                    let handle = try FileHandle(forReadingFrom: url)
                    defer { try? handle.close() }
                    while !connection.isStopped, let chunk = try handle.read(upToCount: 64 * 1024), !chunk.isEmpty {
                        connection.send(chunk)
                    }
                } catch {
                    return connection.fail(error)
                }
            }
            connection.finish()
        case let .fail(error):
            connection.fail(error)
        case let .redirect(url, status):
            connection.redirect(to: url, status: status)
        case let .script(script):
            Task { await script(connection) }
        }
    }

    /// The request's body: `httpBody`, or all of `httpBodyStream`.
    private static func body(of request: URLRequest) -> Data? {
        if let body = request.httpBody { return body }
        guard let stream = request.httpBodyStream else { return nil }
        stream.open()
        defer { stream.close() }
        var body = Data()
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while case let count = stream.read(&buffer, maxLength: buffer.count), count > 0 {
            body.append(contentsOf: buffer[..<count])
        }
        return body
    }
}
