import ArgumentParser

import Dispatch
import Foundation

/// The process's entry point, synchronous: valgrind 3.19 crashes on an async `main` (and in `dispatchMain()`), so
/// the commands run from a detached task while the main thread sleeps, and the task ends the process.
@main
enum BenchMain {
    static func main() {
        Task.detached {
            await Bench.main()
            exit(0)
        }
        while true { sleep(3600) }
    }
}

/// The benchmark harness: one client and one workload per process, so every run starts cold and alone.
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "BluebonnetBench",
        abstract: "Measure Bluebonnet against raw AsyncHTTPClient and URLSession on the same workloads.",
        subcommands: [
            RunCommand.self, SmokeCommand.self, GenerateCommand.self, UploadCommand.self, DrainServerCommand.self,
            DownloadCommand.self,
            CacheStoreCommand.self, CookieFloodCommand.self, QueueDeadlineCommand.self,
            FloodCommand.self, HangServerCommand.self, H2Command.self,
        ]
    )
}
