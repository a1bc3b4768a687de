import Foundation

/// The workloads of issue 5, by name.
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

    var defaultCount: Int {
        switch self {
        case .w1: return 2000
        case .w2, .w2Raised: return 20_000
        case .w3: return 200
        case .w4: return 1
        }
    }

    var inFlight: Int {
        switch self {
        case .w2, .w2Raised: return 64
        default: return 1
        }
    }

    /// The per-host connection limit the client is given; `nil` keeps the client's own default.
    var connectionLimit: Int? { self == .w2Raised ? 64 : nil }
}

/// Where each workload's document lives on the server under test.
struct ServerPaths: Sendable {
    var small: String
    var large: String
    var big: String

    /// Files the driver generates for nginx.
    static let nginx = ServerPaths(small: "/small.json", large: "/large.json", big: "/big.bin")

    /// The test server's generated routes, the same JSON bytes as the nginx files.
    static func builtin(bigBytes: Int) -> ServerPaths {
        ServerPaths(
            small: "/json-array/\(Documents.smallRecords)", large: "/json-array/\(Documents.largeRecords)",
            big: "/bytes/\(bigBytes)?seed=1")
    }

    func path(for workload: Workload) -> String {
        switch workload {
        case .w1, .w2, .w2Raised: return small
        case .w3: return large
        case .w4: return big
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
