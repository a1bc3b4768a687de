import AsyncHTTPClient
import Bluebonnet
import BluebonnetOpenAPI
import Foundation
import HTTPTypes
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A generated client's view of an HTTP client: one operation sent through a `ClientTransport`, as the code
/// swift-openapi-generator writes calls it (a request with a path, a base URL, an operation ID), its body collected.
/// The generated code's own work is the same above either transport, so the transports are measured directly.
struct OpenAPIClient: BenchClient {
    let transport: any ClientTransport
    let close: @Sendable () async throws -> Void

    /// `BluebonnetTransport` over a session of its own.
    static func bluebonnet(connectionLimit: Int?) -> OpenAPIClient {
        let configuration = URLSessionConfiguration.af.default
        if let connectionLimit { configuration.httpMaximumConnectionsPerHost = connectionLimit }
        let session = Session(configuration: configuration, maximumResponseSize: 1 << 30)
        return OpenAPIClient(transport: BluebonnetTransport(session: session), close: { await session.shutdown() })
    }

    /// swift-openapi-async-http-client's transport over an `HTTPClient` of its own.
    static func asyncHTTPClient(connectionLimit: Int?) -> OpenAPIClient {
        var configuration = HTTPClient.Configuration()
        if let connectionLimit {
            configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = connectionLimit
        }
        let client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        return OpenAPIClient(
            transport: AsyncHTTPClientTransport(configuration: .init(client: client, timeout: .seconds(120))),
            close: { try await client.shutdown() })
    }

    private func body(_ url: URL, checkingType: Bool = false) async throws -> Data {
        guard let scheme = url.scheme, let host = url.host,
            let base = URL(string: "\(scheme)://\(host):\(url.port ?? 80)")
        else { throw BenchError(description: "not a URL with a host: \(url)") }
        let path = url.path + (url.query.map { "?\($0)" } ?? "")
        let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: path)
        let (response, body) = try await transport.send(request, body: nil, baseURL: base, operationID: "getDocument")
        if checkingType {
            try HeadCheck.check(status: response.status.code, contentType: response.headerFields[.contentType])
        } else if response.status != .ok {
            throw BenchError(description: "status \(response.status)")
        }
        guard let body else { return Data() }
        return try await Data(collecting: body, upTo: 1 << 30)
    }

    func fetch(_ url: URL) async throws -> Int {
        try await body(url).count
    }

    func fetchCheckingHead(_ url: URL) async throws -> Int {
        try await body(url, checkingType: true).count
    }

    func fetchRecords(_ url: URL) async throws -> Int {
        try JSONDecoder().decode([Documents.Record].self, from: try await body(url)).count
    }

    func shutdown() async throws {
        try await close()
    }
}
