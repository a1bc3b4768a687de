import ArgumentParser
import Bluebonnet
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The store behind a session's cache: `HTTPCache` against FoundationNetworking's `URLCache`, on disk, through the
/// `URLCache` API both share (store, then look up in memory, then look up from a reopened store).
struct CacheStoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cache-store",
        abstract: "Time HTTPCache and FoundationNetworking's URLCache storing and reading responses.")

    @Option(help: "How many responses.")
    var count = 1000

    @Option(help: "Bytes in each body.")
    var size = 10_000

    func run() throws {
        let body = Data(repeating: 65, count: size)
        let requests = (0..<count).map { URLRequest(url: URL(string: "http://example.com/item/\($0)")!) }
        let responses = requests.map { request in
            CachedURLResponse(
                response: HTTPURLResponse(
                    url: request.url!, statusCode: 200, httpVersion: "HTTP/1.1",
                    headerFields: ["Cache-Control": "max-age=60", "ETag": "\"x\""])!, data: body)
        }
        print("store   \(count) × \(size) B, disk-backed, per operation:")
        for kind in ["HTTPCache", "URLCache"] {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
                "bench-cache-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: directory) }
            let make: (Int) -> URLCache = { memory in
                kind == "HTTPCache"
                    ? Session.HTTPCache(memoryCapacity: memory, diskCapacity: 1 << 30, directory: directory)
                    : URLCache(memoryCapacity: memory, diskCapacity: 1 << 30, diskPath: directory.path)
            }
            let cache = make(64 << 20)
            let store = time {
                for (request, response) in zip(requests, responses) {
                    cache.storeCachedResponse(response, for: request)
                }
            }
            var hits = 0
            let memory = time { for request in requests where cache.cachedResponse(for: request) != nil { hits += 1 } }
            let reopened = make(0)
            var diskHits = 0
            let disk = time {
                for request in requests where reopened.cachedResponse(for: request) != nil { diskHits += 1 }
            }
            print(
                String(
                    format:
                        "  %-10@ store %8.3f ms   lookup %8.3f ms (%d hits)   lookup after reopening %8.3f ms (%d hits)",
                    kind as NSString, store / Double(count) * 1000, memory / Double(count) * 1000, hits,
                    disk / Double(count) * 1000, diskHits))
        }
    }

    private func time(_ body: () -> Void) -> Double {
        let start = Date()
        body()
        return Date().timeIntervalSince(start)
    }
}
