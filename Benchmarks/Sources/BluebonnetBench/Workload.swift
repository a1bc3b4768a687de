import Foundation

/// The workloads of issue 5, by name, and issue 47's W1 and W2 under realistic response heads.
enum Workload: String, CaseIterable, Sendable {
    /// Sequential GETs of a ~1 KB JSON.
    case w1
    /// GETs with 64 in flight, each client with its default connection settings.
    case w2
    /// As `w2`, with every client allowed 64 connections per host.
    case w2Raised = "w2-raised"
    /// GETs of a ~1 MB JSON decoded into a `Codable` array.
    case w3
    /// One 256 MiB body into memory.
    case w4
    /// W1 under the eight header fields nginx sends for a static file; the body only.
    case w1Nginx = "w1-nginx"
    /// W1 under nginx's head, reading the status code and `Content-Type` as well, as most callers do.
    case w1NginxStatus = "w1-nginx-status"
    /// W1 under a 15-field API head; the body only.
    case w1API = "w1-api"
    /// W1 under the API head, reading the status code and `Content-Type` as well.
    case w1APIStatus = "w1-api-status"
    /// W2 under nginx's head; the body only.
    case w2Nginx = "w2-nginx"
    /// W2 under nginx's head, reading the status code and `Content-Type` as well.
    case w2NginxStatus = "w2-nginx-status"
    /// W2 under the API head; the body only.
    case w2API = "w2-api"
    /// W2 under the API head, reading the status code and `Content-Type` as well.
    case w2APIStatus = "w2-api-status"

    /// The workload whose requests, counts and concurrency this one has: itself, or W1 or W2 for a variant.
    var shape: Workload {
        switch self {
        case .w1Nginx, .w1NginxStatus, .w1API, .w1APIStatus: return .w1
        case .w2Nginx, .w2NginxStatus, .w2API, .w2APIStatus: return .w2
        default: return self
        }
    }

    /// The response head the server is asked for; `nil` for the server's own.
    var head: ResponseHeadKind? {
        switch self {
        case .w1Nginx, .w1NginxStatus, .w2Nginx, .w2NginxStatus: return .nginx
        case .w1API, .w1APIStatus, .w2API, .w2APIStatus: return .api
        default: return nil
        }
    }

    /// What each request takes from its response.
    var reading: Reading {
        switch self {
        case .w3: return .records
        case .w1NginxStatus, .w1APIStatus, .w2NginxStatus, .w2APIStatus: return .bodyStatusAndHeader
        default: return .body
        }
    }

    var defaultCount: Int {
        switch shape {
        case .w1: return 2000
        case .w2, .w2Raised: return 20_000
        case .w3: return 200
        default: return 1
        }
    }

    var inFlight: Int {
        switch shape {
        case .w2, .w2Raised: return 64
        default: return 1
        }
    }

    /// The per-host connection limit the client is given; `nil` keeps the client's own default.
    var connectionLimit: Int? { self == .w2Raised ? 64 : nil }
}

/// A realistic response head, as `RealisticHead` in the test server (and `run.sh`'s nginx) sends it.
enum ResponseHeadKind: String, Sendable {
    /// The eight fields nginx sends for a static JSON file.
    case nginx
    /// nginx's eight and seven an API adds: fifteen.
    case api
}

/// What a request of a workload takes from its response.
enum Reading: Sendable {
    /// The body's bytes.
    case body
    /// The body, the status code and the `Content-Type` field, as a caller that checks what it got does.
    case bodyStatusAndHeader
    /// The body decoded into `[Documents.Record]`.
    case records

    /// One request through `client`: the body's size, or the count of records decoded.
    func fetch(_ client: any BenchClient, _ url: URL) async throws -> Int {
        switch self {
        case .body: return try await client.fetch(url)
        case .bodyStatusAndHeader: return try await client.fetchCheckingHead(url)
        case .records: return try await client.fetchRecords(url)
        }
    }
}

/// Where each workload's document lives on the server under test.
struct ServerPaths: Sendable {
    var small: String
    var large: String
    var big: String
    /// The small document under each realistic head: nginx sends its own for `/small.json` and adds the API's
    /// fields in a location of its own (`run.sh`); the test server takes `?head=` on the same route.
    var smallUnder: [ResponseHeadKind: String]

    /// Files the driver generates for nginx.
    static let nginx = ServerPaths(
        small: "/small.json", large: "/large.json", big: "/big.bin",
        smallUnder: [.nginx: "/small.json", .api: "/api/small.json"])

    /// The test server's generated routes, the same JSON bytes as the nginx files.
    static func builtin(bigBytes: Int) -> ServerPaths {
        let small = "/json-array/\(Documents.smallRecords)"
        return ServerPaths(
            small: small, large: "/json-array/\(Documents.largeRecords)", big: "/bytes/\(bigBytes)?seed=1",
            smallUnder: [.nginx: small + "?head=nginx", .api: small + "?head=api"])
    }

    func path(for workload: Workload) -> String {
        switch workload.shape {
        case .w3: return large
        case .w4: return big
        default: return workload.head.flatMap { smallUnder[$0] } ?? small
        }
    }
}

/// The record type of the JSON documents, and their sizes.
enum Documents {
    /// 10 records: about 1 KB.
    static let smallRecords = 10
    /// 11,000 records: about 1 MB.
    static let largeRecords = 11_000

    struct Record: Codable, Sendable {
        let id: Int
        let name: String
        let score: Double
        let tags: [String]
    }
}
