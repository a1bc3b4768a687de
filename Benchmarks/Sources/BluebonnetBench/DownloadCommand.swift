import ArgumentParser
import AsyncHTTPClient
import Bluebonnet
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// W4b: one large body downloaded to a file, Bluebonnet against AsyncHTTPClient's own `FileDownloadDelegate`, each in
/// a process of its own so peak RSS is the client's alone.
enum DownloadWorkload {
    enum Client: String, CaseIterable, Sendable {
        /// `session.download(url, to:)` then `serializingDownloadedFileURL()`.
        case bluebonnet
        /// `HTTPClient.execute(request:delegate: FileDownloadDelegate(path:))`.
        case ahcFile = "ahc-file"
        /// `streamTask().streamingData()` read by a consumer that sleeps 1 ms per chunk: far slower than loopback,
        /// so only back-pressure keeps memory bounded.
        case slowStream = "bluebonnet-slow-stream"
    }

    static func run(client: Client, url: URL, directory: URL) async throws -> RunResult {
        let target = directory.appendingPathComponent("w4b-\(client.rawValue)-\(UUID().uuidString).bin")
        defer { try? FileManager.default.removeItem(at: target) }
        let before = ResourceUsage.now()
        let start = ContinuousClock.now
        switch client {
        case .bluebonnet:
            let session = Session()
            _ = try await session.download(url, to: { _, _ in (target, [.removePreviousFile]) }).validate()
                .serializingDownloadedFileURL().value
        case .slowStream:
            let session = Session()
            var total = 0
            for await event in session.streamRequest(url).validate().streamTask().streamingData() {
                switch event.event {
                case let .stream(.success(chunk)):
                    total += chunk.count
                    try await Task.sleep(nanoseconds: 1_000_000)
                case let .complete(completion):
                    if let error = completion.error { throw error }
                }
            }
            try Data().write(to: target)
            let elapsed = ContinuousClock.now - start
            let after = ResourceUsage.now()
            return RunResult(
                client: client.rawValue, workload: "w4c", requests: 1, inFlight: 1, bytes: total,
                wallSeconds: elapsed.seconds,
                cpuUserSeconds: after.userSeconds - before.userSeconds,
                cpuSystemSeconds: after.systemSeconds - before.systemSeconds, peakRSSKiB: after.maxRSSKiB)
        case .ahcFile:
            let http = HTTPClient(eventLoopGroupProvider: .singleton)
            do {
                let delegate = try FileDownloadDelegate(path: target.path)
                let request = try HTTPClient.Request(url: url.absoluteString)
                _ = try await http.execute(request: request, delegate: delegate).futureResult.get()
            } catch {
                try await http.shutdown()
                throw error
            }
            try await http.shutdown()
        }
        let elapsed = ContinuousClock.now - start
        let after = ResourceUsage.now()
        let size = try FileManager.default.attributesOfItem(atPath: target.path)[.size] as? Int ?? 0
        return RunResult(
            client: client.rawValue, workload: "w4b", requests: 1, inFlight: 1, bytes: size,
            wallSeconds: elapsed.seconds,
            cpuUserSeconds: after.userSeconds - before.userSeconds,
            cpuSystemSeconds: after.systemSeconds - before.systemSeconds,
            peakRSSKiB: after.maxRSSKiB
        )
    }
}

/// `download`: W4b, one body to a file, one JSON line.
struct DownloadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "download", abstract: "Download one body to a file (W4b) and print a JSON line.")

    @Option(help: "bluebonnet or ahc-file.")
    var client: String = "bluebonnet"

    @Option(help: "The URL of the body.")
    var url: String

    @Option(help: "The directory the file is written to (removed afterwards).")
    var directory: String = NSTemporaryDirectory()

    func run() async throws {
        guard let client = DownloadWorkload.Client(rawValue: client) else {
            throw ValidationError("unknown client \(client)")
        }
        guard let url = URL(string: url) else { throw ValidationError("bad URL") }
        let result = try await DownloadWorkload.run(
            client: client, url: url, directory: URL(fileURLWithPath: directory))
        try result.printJSONLine()
    }
}
