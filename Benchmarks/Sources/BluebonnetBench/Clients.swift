import AsyncHTTPClient
import Bluebonnet
import Foundation
import NIOCore
import NIOFoundationCompat
import NIOHTTP1
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One HTTP client under test: fetch a body (returning its size), fetch it checking the status code and
/// `Content-Type` as a careful caller does (returning its size), or fetch and decode records (returning the count).
protocol BenchClient: Sendable {
    func fetch(_ url: URL) async throws -> Int
    func fetchCheckingHead(_ url: URL) async throws -> Int
    func fetchRecords(_ url: URL) async throws -> Int
    func shutdown() async throws
}

enum ClientKind: String, CaseIterable, Sendable {
    /// Bluebonnet's async API: `serializingData()` / `serializingDecodable(_:)`.
    case bluebonnet
    /// Bluebonnet's completion handlers: `responseData` / `responseDecodable`, on a serial queue of the caller's.
    case bluebonnetHandler = "bluebonnet-handler"
    /// Bluebonnet's async API on a session that posts Alamofire's notifications, as `AF` does: the cost of a monitor.
    case bluebonnetNotifications = "bluebonnet-notifications"
    /// Raw AsyncHTTPClient: `execute` + `body.collect`, then `JSONDecoder` on the same bytes.
    case ahc
    /// FoundationNetworking's URLSession.
    case urlsession
    /// AsyncHTTPClient's delegate API (what Bluebonnet's engine uses) with the least delegate: a reference point
    /// that separates the cost of the API from the cost of the layer.
    case ahcDelegate = "ahc-delegate"
    /// A generated OpenAPI client's request through `BluebonnetTransport`.
    case openAPIBluebonnet = "openapi-bluebonnet"
    /// The same through swift-openapi-async-http-client's `AsyncHTTPClientTransport`.
    case openAPIAHC = "openapi-ahc"

    func make(connectionLimit: Int?) -> any BenchClient {
        switch self {
        case .bluebonnet: return BluebonnetClient(connectionLimit: connectionLimit, handlers: false)
        case .bluebonnetHandler: return BluebonnetClient(connectionLimit: connectionLimit, handlers: true)
        case .bluebonnetNotifications:
            return BluebonnetClient(
                connectionLimit: connectionLimit, handlers: false, eventMonitors: [AlamofireNotifications()])
        case .ahc: return AHCClient(connectionLimit: connectionLimit)
        case .urlsession: return URLSessionClient(connectionLimit: connectionLimit)
        case .ahcDelegate: return AHCDelegateClient(connectionLimit: connectionLimit)
        case .openAPIBluebonnet: return OpenAPIClient.bluebonnet(connectionLimit: connectionLimit)
        case .openAPIAHC: return OpenAPIClient.asyncHTTPClient(connectionLimit: connectionLimit)
        }
    }
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
}

/// What `fetchCheckingHead` asks of a response: a 200 with a JSON body.
enum HeadCheck {
    static func check(status: Int?, contentType: String?) throws {
        guard status == 200, contentType?.hasPrefix("application/json") == true else {
            throw BenchError(
                description: "status \(String(describing: status)), type \(String(describing: contentType))")
        }
    }
}

final class BluebonnetClient: BenchClient {
    let session: Session
    let handlers: Bool
    let queue = DispatchQueue(label: "bench.completion")

    init(connectionLimit: Int?, handlers: Bool, eventMonitors: [any EventMonitor] = []) {
        let configuration = URLSessionConfiguration.af.default
        if let connectionLimit { configuration.httpMaximumConnectionsPerHost = connectionLimit }
        // W4 holds a 256 MiB body in memory, past the 100 MiB a session allows by default: raised, as its user would.
        session = Session(configuration: configuration, eventMonitors: eventMonitors, maximumResponseSize: 1 << 30)
        self.handlers = handlers
    }

    func fetch(_ url: URL) async throws -> Int {
        guard handlers else { return try await session.request(url).serializingData().value.count }
        return try await withCheckedThrowingContinuation { continuation in
            session.request(url).responseData(queue: queue) { continuation.resume(with: $0.result.map(\.count)) }
        }
    }

    /// As Alamofire's examples read a response: the status code and a field from `response.response`, which
    /// FoundationNetworking's `HTTPURLResponse` answers, then the body.
    func fetchCheckingHead(_ url: URL) async throws -> Int {
        guard handlers else { return try Self.checked(await session.request(url).serializingData().response) }
        return try await withCheckedThrowingContinuation { continuation in
            session.request(url).responseData(queue: queue) { response in
                continuation.resume(with: Result { try Self.checked(response) })
            }
        }
    }

    static func checked(_ response: AFDataResponse<Data>) throws -> Int {
        try HeadCheck.check(
            status: response.response?.statusCode,
            contentType: response.response?.value(forHTTPHeaderField: "Content-Type"))
        return try response.result.get().count
    }

    func fetchRecords(_ url: URL) async throws -> Int {
        guard handlers else {
            return try await session.request(url).serializingDecodable([Documents.Record].self).value.count
        }
        return try await withCheckedThrowingContinuation { continuation in
            session.request(url).responseDecodable(of: [Documents.Record].self, queue: queue) {
                continuation.resume(with: $0.result.map(\.count))
            }
        }
    }

    func shutdown() async throws {}
}

final class AHCClient: BenchClient {
    let client: HTTPClient

    init(connectionLimit: Int?) {
        var configuration = HTTPClient.Configuration()
        if let connectionLimit {
            configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = connectionLimit
        }
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    init(client: HTTPClient) {
        self.client = client
    }

    func body(_ url: URL) async throws -> ByteBuffer {
        let response = try await client.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(120))
        guard response.status == .ok else { throw BenchError(description: "status \(response.status)") }
        return try await response.body.collect(upTo: 1 << 30)
    }

    func fetch(_ url: URL) async throws -> Int {
        try await body(url).readableBytes
    }

    /// As AsyncHTTPClient's user reads a response: the status and a field from its own head.
    func fetchCheckingHead(_ url: URL) async throws -> Int {
        let response = try await client.execute(HTTPClientRequest(url: url.absoluteString), timeout: .seconds(120))
        try HeadCheck.check(
            status: Int(response.status.code), contentType: response.headers.first(name: "Content-Type"))
        return try await response.body.collect(upTo: 1 << 30).readableBytes
    }

    func fetchRecords(_ url: URL) async throws -> Int {
        let buffer = try await body(url)
        return try JSONDecoder().decode([Documents.Record].self, from: Data(buffer: buffer)).count
    }

    func shutdown() async throws {
        try await client.shutdown()
    }
}

final class URLSessionClient: BenchClient {
    let session: URLSession

    init(connectionLimit: Int?) {
        let configuration = URLSessionConfiguration.default
        if let connectionLimit { configuration.httpMaximumConnectionsPerHost = connectionLimit }
        session = URLSession(configuration: configuration)
    }

    func data(_ url: URL, checkingType: Bool = false) async throws -> Data {
        try await withCheckedThrowingContinuation { continuation in
            session.dataTask(with: url) { data, response, error in
                if let error { return continuation.resume(throwing: error) }
                let response = response as? HTTPURLResponse
                do {
                    if checkingType {
                        try HeadCheck.check(
                            status: response?.statusCode,
                            contentType: response?.value(forHTTPHeaderField: "Content-Type"))
                    } else if response?.statusCode != 200 {
                        throw BenchError(description: "status \(String(describing: response))")
                    }
                } catch {
                    return continuation.resume(throwing: error)
                }
                continuation.resume(returning: data ?? Data())
            }.resume()
        }
    }

    func fetch(_ url: URL) async throws -> Int {
        try await data(url).count
    }

    func fetchCheckingHead(_ url: URL) async throws -> Int {
        try await data(url, checkingType: true).count
    }

    func fetchRecords(_ url: URL) async throws -> Int {
        try JSONDecoder().decode([Documents.Record].self, from: try await data(url)).count
    }

    func shutdown() async throws {
        session.finishTasksAndInvalidate()
    }
}

final class AHCDelegateClient: BenchClient {
    let client: HTTPClient

    init(connectionLimit: Int?) {
        var configuration = HTTPClient.Configuration()
        if let connectionLimit {
            configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = connectionLimit
        }
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// Collects the body on the event loop; AsyncHTTPClient calls a delegate serially on one loop.
    final class Collector: HTTPClientResponseDelegate, @unchecked Sendable {
        typealias Response = ByteBuffer
        let checksType: Bool
        var body = ByteBuffer()
        var status = 0
        var contentType: String?

        init(checksType: Bool = false) {
            self.checksType = checksType
        }

        func didReceiveHead(task: HTTPClient.Task<ByteBuffer>, _ head: HTTPResponseHead) -> EventLoopFuture<Void> {
            status = Int(head.status.code)
            if checksType { contentType = head.headers.first(name: "Content-Type") }
            return task.eventLoop.makeSucceededVoidFuture()
        }

        func didReceiveBodyPart(task: HTTPClient.Task<ByteBuffer>, _ buffer: ByteBuffer) -> EventLoopFuture<Void> {
            var buffer = buffer
            body.writeBuffer(&buffer)
            return task.eventLoop.makeSucceededVoidFuture()
        }

        func didFinishRequest(task: HTTPClient.Task<ByteBuffer>) throws -> ByteBuffer {
            if checksType {
                try HeadCheck.check(status: status, contentType: contentType)
            } else if status != 200 {
                throw BenchError(description: "status \(status)")
            }
            return body
        }
    }

    func body(_ url: URL, checkingType: Bool = false) async throws -> ByteBuffer {
        let request = try HTTPClient.Request(url: url.absoluteString)
        return try await client.execute(request: request, delegate: Collector(checksType: checkingType)).futureResult
            .get()
    }

    func fetch(_ url: URL) async throws -> Int {
        try await body(url).readableBytes
    }

    func fetchCheckingHead(_ url: URL) async throws -> Int {
        try await body(url, checkingType: true).readableBytes
    }

    func fetchRecords(_ url: URL) async throws -> Int {
        try JSONDecoder().decode([Documents.Record].self, from: Data(buffer: try await body(url))).count
    }

    func shutdown() async throws {
        try await client.shutdown()
    }
}
