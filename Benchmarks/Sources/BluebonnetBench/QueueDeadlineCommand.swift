import ArgumentParser
import Bluebonnet
import BluebonnetTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Many requests to one host that answers slowly: how long after their deadline (`timeoutIntervalForRequest`) the
/// queued ones end.
struct QueueDeadlineCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "queue-deadline",
        abstract: "Time how long requests queued to one slow host take to end after their deadline.")

    @Option(help: "How many requests.")
    var requests = 10_000

    @Option(help: "timeoutIntervalForRequest, in seconds.")
    var timeout = 2.0

    func run() async throws {
        let server = try await TestServer.start()
        let configuration = URLSessionConfiguration.af.default
        configuration.timeoutIntervalForRequest = timeout
        let session = Session(configuration: configuration)
        let url = server.url("/delay/10").absoluteString
        let start = Date()
        let ends = await withTaskGroup(of: (TimeInterval, Bool).self) { group in
            for _ in 0..<requests {
                group.addTask {
                    let response = await session.request(url).serializingData().response
                    return (Date().timeIntervalSince(start), response.error?.isSessionTaskError == true)
                }
            }
            return await group.reduce(into: [(TimeInterval, Bool)]()) { $0.append($1) }
        }
        await server.stop()
        let times = ends.map(\.0).sorted()
        print(
            String(
                format: "%d requests, deadline %.1f s: ended after median %.2f s, p99 %.2f s, last %.2f s; %d failed",
                requests, timeout, times[times.count / 2], times[times.count * 99 / 100], times.last ?? 0,
                ends.filter(\.1).count))
    }
}
