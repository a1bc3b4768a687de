import ArgumentParser
import Bluebonnet
import BluebonnetTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A server that floods the default configuration's cookie storage (`HTTPCookieStorage.shared`, which
/// FoundationNetworking persists to a file on every change): responses of many `Set-Cookie` fields, one after
/// another, while a second task sends plain requests on the same session and times them.
struct CookieFloodCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cookie-flood",
        abstract: "Time responses that set many cookies in the shared storage, and requests beside them.")

    @Option(help: "How many responses.")
    var responses = 100

    @Option(help: "Set-Cookie fields in each response.")
    var fields = 50

    func run() async throws {
        let server = try await TestServer.start()
        let storage = HTTPCookieStorage.shared
        for cookie in storage.cookies ?? [] { storage.deleteCookie(cookie) }
        let session = Session(configuration: URLSessionConfiguration.af.default)
        let plain = server.url("/get").absoluteString
        let flooding = ManagedFlag()
        let bystander = Task {
            var latencies: [TimeInterval] = []
            while flooding.isSet {
                let start = Date()
                _ = await session.request(plain).serializingData().response
                latencies.append(Date().timeIntervalSince(start))
            }
            return latencies
        }
        let start = Date()
        for response in 0..<responses {
            let query = (0..<fields).map { index in
                "Set-Cookie=" + "flood-\(response)-\(index)=v; Max-Age=3600; Path=/".addingPercentEncoding(
                    withAllowedCharacters: .alphanumerics)!
            }.joined(separator: "&")
            _ = await session.request(server.url("/response-headers?" + query).absoluteString).serializingData()
                .response
        }
        let flood = Date().timeIntervalSince(start)
        flooding.clear()
        let latencies = await bystander.value.sorted()
        await storage.af.waitForPendingWrites()
        let written = Date().timeIntervalSince(start)
        let stored = (storage.cookies ?? []).count
        for cookie in storage.cookies ?? [] { storage.deleteCookie(cookie) }
        await server.stop()
        print(
            String(
                format:
                    "%d responses × %d Set-Cookie fields: %.3f s; in HTTPCookieStorage.shared after %.3f s (%d cookies)",
                responses, fields, flood, written, stored))
        print(
            String(
                format: "plain requests beside the flood: %d, median %.2f ms, slowest %.2f ms", latencies.count,
                (latencies.isEmpty ? 0 : latencies[latencies.count / 2]) * 1000, (latencies.last ?? 0) * 1000))
    }
}

/// A flag one task clears and another polls.
private final class ManagedFlag: @unchecked Sendable {
    // @unchecked: `value` is only read and written under `lock`.
    private let lock = NSLock()
    private var value = true

    var isSet: Bool { lock.withLock { value } }

    func clear() { lock.withLock { value = false } }
}
