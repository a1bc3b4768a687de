import Foundation

/// CPU and memory of this process, from `getrusage`.
struct ResourceUsage {
    let userSeconds: Double
    let systemSeconds: Double
    /// Peak resident set size so far, in KiB (Linux reports `ru_maxrss` in KiB).
    let maxRSSKiB: Int

    static func now() -> ResourceUsage {
        var usage = rusage()
        #if os(Linux)
        getrusage(RUSAGE_SELF.rawValue, &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return ResourceUsage(
            userSeconds: seconds(usage.ru_utime), systemSeconds: seconds(usage.ru_stime),
            maxRSSKiB: Int(usage.ru_maxrss))
    }
}

/// What one run measured, printed as one JSON line for the driver.
struct RunResult: Codable {
    let client: String
    let workload: String
    let requests: Int
    let inFlight: Int
    let bytes: Int
    let wallSeconds: Double
    let cpuUserSeconds: Double
    let cpuSystemSeconds: Double
    let peakRSSKiB: Int

    var cpuSeconds: Double { cpuUserSeconds + cpuSystemSeconds }

    /// Prints the result as the one JSON line the driver reads.
    func printJSONLine() throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        print(String(decoding: try encoder.encode(self), as: UTF8.self))
    }
}

/// Runs a workload and measures only its timed part (warm-up excluded).
enum WorkloadRunner {
    static func run(client: any BenchClient, kind: ClientKind, workload: Workload, url: URL, count: Int, inFlight: Int)
        async throws -> RunResult
    {
        // Warm-up: open connections, touch every code path once.
        for _ in 0..<min(max(inFlight, 4), count) {
            _ = try await workload.reading.fetch(client, url)
        }
        let before = ResourceUsage.now()
        let start = ContinuousClock.now
        let bytes = try await withThrowingTaskGroup(of: Int.self) { group in
            let perWorker = count / inFlight
            let remainder = count % inFlight
            for worker in 0..<inFlight {
                let share = perWorker + (worker < remainder ? 1 : 0)
                group.addTask {
                    var total = 0
                    for _ in 0..<share {
                        total += try await workload.reading.fetch(client, url)
                    }
                    return total
                }
            }
            return try await group.reduce(0, +)
        }
        let elapsed = ContinuousClock.now - start
        let after = ResourceUsage.now()
        let wall = elapsed.seconds
        return RunResult(
            client: kind.rawValue, workload: workload.rawValue, requests: count, inFlight: inFlight, bytes: bytes,
            wallSeconds: wall, cpuUserSeconds: after.userSeconds - before.userSeconds,
            cpuSystemSeconds: after.systemSeconds - before.systemSeconds, peakRSSKiB: after.maxRSSKiB
        )
    }
}

extension Duration {
    /// The duration in seconds, as a `Double`.
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
