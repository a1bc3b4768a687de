import AsyncHTTPClient
import Benchmark
import Bluebonnet
import BluebonnetTestServer
import Foundation

/// Allocations per small GET: Bluebonnet's async API and completion handlers against raw AsyncHTTPClient, on the
/// same in-process server. Thresholds in `Thresholds/` make a regression fail `benchmark thresholds check`.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.mallocCountTotal, .instructions, .wallClock],
        timeUnits: .microseconds,
        warmupIterations: 20,
        scalingFactor: .one,
        maxDuration: .seconds(5),
        maxIterations: 2000,
        thresholds: [.mallocCountTotal: .init(relative: [.p50: 5.0], absolute: [.p50: 20])]
    )

    let holder = ServerHolder()

    Benchmark("Bluebonnet serializingData GET", configuration: .init(setup: { try await holder.start() }, teardown: { await holder.stop() })) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try await holder.session.request(holder.url).serializingData().value)
        }
    }

    Benchmark("Bluebonnet responseData GET", configuration: .init(setup: { try await holder.start() }, teardown: { await holder.stop() })) { benchmark in
        for _ in benchmark.scaledIterations {
            let data: Data = try await withCheckedThrowingContinuation { continuation in
                holder.session.request(holder.url).responseData(queue: holder.queue) { continuation.resume(with: $0.result) }
            }
            blackHole(data)
        }
    }

    Benchmark("AsyncHTTPClient execute GET", configuration: .init(setup: { try await holder.start() }, teardown: { await holder.stop() })) { benchmark in
        for _ in benchmark.scaledIterations {
            let response = try await holder.client.execute(HTTPClientRequest(url: holder.url.absoluteString), timeout: .seconds(10))
            blackHole(try await response.body.collect(upTo: 1 << 20))
        }
    }
}

/// The in-process server and the clients, made once per benchmark.
final class ServerHolder: @unchecked Sendable {
    private(set) var server: TestServer!
    let session = Session()
    let client = HTTPClient(eventLoopGroupProvider: .singleton)
    let queue = DispatchQueue(label: "allocations.completion")
    var url: URL { server.url("/json-array/10") }

    func start() async throws {
        if server == nil { server = try await TestServer.start() }
    }

    func stop() async {
        await server?.stop()
        server = nil
    }
}
