import ArgumentParser
import Bluebonnet
import Foundation

/// `bonnet reachability [HOST] [--watch]`: whether the network (or a host) can be reached, as Bluebonnet's
/// `NetworkReachabilityManager` sees it.
public struct ReachabilityCommand: ConsoleCommand {
    public static let configuration = CommandConfiguration(
        commandName: "reachability",
        abstract: "Print whether the network, or a host, is reachable; with --watch, every change until interrupted.",
        helpNames: [.long]
    )

    @Argument(help: "A host name or address; the network in general when left out.")
    var host: String?

    @Flag(name: .long, help: "Print each change as it happens (one line each), until interrupted or --for elapses.")
    var watch = false

    @Option(
        name: .customLong("for"),
        help: ArgumentHelp("With --watch, stop after this many seconds.", valueName: "seconds"))
    var duration: Double?

    public init() {}

    public func run(console: Console) async throws {
        let manager: NetworkReachabilityManager?
        if let host { manager = NetworkReachabilityManager(host: host) } else { manager = NetworkReachabilityManager() }
        guard let manager else {
            throw ValidationError("\(host ?? "") is not a host name or address (leave out the scheme)")
        }
        guard watch else {
            try console.output.write(line: Self.describe(manager.status))
            return
        }
        let lines = AsyncStream<String> { continuation in
            manager.startListening(onQueue: .global()) { status in continuation.yield(Self.describe(status)) }
            if let duration {
                DispatchQueue.global().asyncAfter(deadline: .now() + duration) { continuation.finish() }
            }
        }
        defer { manager.stopListening() }
        for await line in lines {
            // Written at once, not buffered: a reader of a pipe sees each change as it happens.
            try console.output.write(line: line)
        }
    }

    static func describe(_ status: NetworkReachabilityManager.NetworkReachabilityStatus) -> String {
        switch status {
        case .unknown: "unknown"
        case .notReachable: "not reachable"
        case .reachable(.ethernetOrWiFi): "reachable (ethernet or wifi)"
        case .reachable(.cellular): "reachable (cellular)"
        }
    }
}
