import AsyncHTTPClient
import Benchmark
import Bluebonnet
import BluebonnetTestServer
import Foundation
import Synchronization

/// Names use underscores: package-benchmark writes threshold files with spaces replaced but reads them back by the
/// raw name, so a name with spaces could never be checked.
///
/// Allocations per small GET: Bluebonnet's async API and completion handlers against raw AsyncHTTPClient, on the
/// same in-process server. Thresholds in `Thresholds/` make a regression fail `benchmark thresholds check`.
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        // Allocations only: they repeat exactly run to run, where wall clock on these shared machines does not.
        metrics: [.mallocCountTotal],
        timeUnits: .microseconds,
        warmupIterations: 20,
        scalingFactor: .one,
        maxDuration: .seconds(5),
        maxIterations: 2000,
        thresholds: [.mallocCountTotal: .init(relative: [.p50: 5.0], absolute: [.p50: 20])]
    )

    let holder = ServerHolder()

    Benchmark(
        "Bluebonnet_serializingData_GET",
        configuration: .init(setup: { try await holder.start() }, teardown: { await holder.stop() })
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(try await holder.session.request(holder.url).serializingData().value)
        }
    }

    Benchmark(
        "Bluebonnet_responseData_GET",
        configuration: .init(setup: { try await holder.start() }, teardown: { await holder.stop() })
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            let data: Data = try await withCheckedThrowingContinuation { continuation in
                holder.session.request(holder.url).responseData(queue: holder.queue) {
                    continuation.resume(with: $0.result)
                }
            }
            blackHole(data)
        }
    }

    Benchmark(
        "AsyncHTTPClient_execute_GET",
        configuration: .init(setup: { try await holder.start() }, teardown: { await holder.stop() })
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            let response = try await holder.client.execute(
                HTTPClientRequest(url: holder.url.absoluteString), timeout: .seconds(10))
            blackHole(try await response.body.collect(upTo: 1 << 20))
        }
    }
}

/// The in-process server and the clients, made once per benchmark.
final class ServerHolder: Sendable {
    private let server = Mutex<TestServer?>(nil)
    let session = Session()
    let client = HTTPClient(eventLoopGroupProvider: .singleton)
    let queue = DispatchQueue(label: "allocations.completion")
    var url: URL { server.withLock { $0! }.url("/json-array/10") }

    func start() async throws {
        guard server.withLock({ $0 == nil }) else { return }
        let started = try await TestServer.start()
        server.withLock { $0 = started }
    }

    func stop() async {
        let running = server.withLock { server -> TestServer? in
            defer { server = nil }
            return server
        }
        await running?.stop()
    }
}
