import ArgumentParser

/// The benchmark harness: one client and one workload per process, so every run starts cold and alone.
@main
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "BluebonnetBench",
        abstract: "Measure Bluebonnet against raw AsyncHTTPClient and URLSession on the same workloads.",
        subcommands: [RunCommand.self, SmokeCommand.self, GenerateCommand.self, UploadCommand.self, DrainServerCommand.self, DownloadCommand.self,
                      CacheStoreCommand.self, CookieFloodCommand.self, QueueDeadlineCommand.self]
    )
}
