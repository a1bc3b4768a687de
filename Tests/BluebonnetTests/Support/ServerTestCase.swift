import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A test case with its own test server on a real loopback socket, and a fresh `Session`.
class ServerTestCase: XCTestCase {
    var server: TestServer!
    var session: Session!

    override func setUp() async throws {
        try await super.setUp()
        server = try await TestServer.start()
        session = Session()
    }

    override func tearDown() async throws {
        session = nil
        await server?.stop()
        server = nil
        try await super.tearDown()
    }

    /// A `Session` whose `URLSessionConfiguration.af.default` was changed by `configure`.
    func session(configuring configure: (URLSessionConfiguration) -> Void) -> Session {
        let configuration = URLSessionConfiguration.af.default
        configure(configuration)
        return Session(configuration: configuration)
    }

    /// A barrier instead of a sleep: returns once the server has received `count` requests for `path` (without its
    /// query), so a test acts while they are on the wire. Its 30 s are a hang guard only.
    func arrival(of path: String, count: Int = 1, file: StaticString = #filePath, line: UInt = #line) async {
        let arrived = await server.arrivals.wait(forPath: path, count: count, timeout: 30)
        XCTAssertTrue(arrived, "the server never received \(count) request(s) for \(path)", file: file, line: line)
    }

    /// The absolute URL string of `path` on the test server.
    func url(_ path: String) -> String {
        server.url(path).absoluteString
    }

    /// The JSON object of a response body.
    func json(_ data: Data?, file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let data = try XCTUnwrap(data, file: file, line: line)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any], file: file, line: line)
    }
}

/// Collects values from several threads, in arrival order.
extension DataRequest {
    /// The finished request's response, unserialized (`response(queue:completionHandler:)`): with no serializer, a
    /// failure is shown to the retrier once, not again by the serializer (Alamofire's serializer retry).
    func unserializedResponse() async -> AFDataResponse<Data?> {
        await withCheckedContinuation { continuation in
            response(queue: .global()) { continuation.resume(returning: $0) }
        }
    }
}

final class Recorder<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Value] = []

    func append(_ value: Value) {
        lock.lock(); defer { lock.unlock() }
        storage.append(value)
    }

    var values: [Value] {
        lock.lock(); defer { lock.unlock() }
        return storage
    }

    func removeAll() {
        lock.lock(); defer { lock.unlock() }
        storage.removeAll()
    }
}

extension AFError {
    /// The `URLError` code of a `.sessionTaskFailed` error.
    var urlErrorCode: URLError.Code? {
        (underlyingError as? URLError)?.code
    }
}

/// Carries a non-`Sendable` response (JSON's `Any`, an `XMLDocument`) out of a completion handler in a test.
struct Handed<Value>: @unchecked Sendable {
    let value: Value
}
