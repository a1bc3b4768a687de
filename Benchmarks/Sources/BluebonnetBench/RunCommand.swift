import ArgumentParser
import BluebonnetTestServer
import Foundation

/// `run`: one client, one workload, one JSON line.
struct RunCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "run", abstract: "Run one client on one workload and print a JSON line.")

    @Option(help: "\(ClientKind.allCases.map(\.rawValue).joined(separator: ", ")).")
    var client: String

    @Option(help: "\(Workload.allCases.map(\.rawValue).joined(separator: ", ")).")
    var workload: String

    @Option(help: "The server's base URL, e.g. http://127.0.0.1:18089.")
    var baseURL: String

    @Option(help: "Document paths: nginx (generated files) or builtin (the test server's routes).")
    var paths: String = "nginx"

    @Option(help: "Requests (default: the workload's).")
    var count: Int?

    @Option(help: "Bytes of the W4 body on the builtin server.")
    var bigBytes: Int = 256 * 1024 * 1024

    func run() async throws {
        guard let kind = ClientKind(rawValue: client) else { throw ValidationError("unknown client \(client)") }
        guard let load = Workload(rawValue: workload) else { throw ValidationError("unknown workload \(workload)") }
        let serverPaths = paths == "builtin" ? ServerPaths.builtin(bigBytes: bigBytes) : ServerPaths.nginx
        guard let url = URL(string: baseURL + serverPaths.path(for: load)) else { throw ValidationError("bad URL") }
        let benchClient = kind.make(connectionLimit: load.connectionLimit)
        let result = try await WorkloadRunner.run(
            client: benchClient, kind: kind, workload: load, url: url,
            count: count ?? load.defaultCount, inFlight: load.inFlight)
        try await benchClient.shutdown()
        try result.printJSONLine()
    }
}

/// `generate`: the nginx documents, byte for byte what the test server's `/json-array` serves.
struct GenerateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "generate", abstract: "Write the small and large JSON documents into a directory.")

    @Argument(help: "Directory to write small.json and large.json into.")
    var directory: String

    func run() throws {
        let base = URL(fileURLWithPath: directory)
        try BenchmarkDocuments.records(Documents.smallRecords).write(to: base.appendingPathComponent("small.json"))
        try BenchmarkDocuments.records(Documents.largeRecords).write(to: base.appendingPathComponent("large.json"))
    }
}

/// `smoke`: every client on every workload with tiny counts against the in-process test server, so the harness
/// never rots. Measures nothing worth reading.
struct SmokeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "smoke", abstract: "Tiny runs of every client and workload against the in-process test server.")

    func run() async throws {
        let server = try await TestServer.start()
        let paths = ServerPaths.builtin(bigBytes: 1 << 20)
        var failures: [String] = []
        for load in Workload.allCases {
            for kind in ClientKind.allCases {
                let count = load.shape == .w4 ? 1 : (load.inFlight > 1 ? 128 : 8)
                let client = kind.make(connectionLimit: load.connectionLimit)
                do {
                    let result = try await WorkloadRunner.run(
                        client: client, kind: kind, workload: load,
                        url: server.url(paths.path(for: load)), count: count,
                        inFlight: min(load.inFlight, 16))
                    let expected = load == .w3 ? Documents.largeRecords * count : nil
                    if let expected, result.bytes != expected {
                        failures.append("\(kind.rawValue) \(load.rawValue): \(result.bytes) != \(expected)")
                    }
                    print(
                        "smoke \(load.rawValue) \(kind.rawValue): \(result.requests) requests, \(result.bytes) \(load == .w3 ? "records" : "bytes")"
                    )
                } catch {
                    failures.append("\(kind.rawValue) \(load.rawValue): \(error)")
                }
                try await client.shutdown()
            }
        }
        failures += await uploadSmoke(server: server)
        await server.stop()
        guard failures.isEmpty else {
            failures.forEach { print("smoke failed: \($0)") }
            throw ExitCode.failure
        }
        print("smoke: every client ran every workload")
    }

    /// W5 in miniature: a 3 MiB file, through both upload modes.
    private func uploadSmoke(server: TestServer) async -> [String] {
        let fileURL = FileManager.default.temporaryDirectory.appendingPathComponent(
            "bluebonnet-w5-smoke-\(UUID().uuidString).bin")
        defer { try? FileManager.default.removeItem(at: fileURL) }
        do {
            try Data((0..<(3 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7) }).write(to: fileURL)
        } catch {
            return ["w5: cannot write the smoke file: \(error)"]
        }
        var failures: [String] = []
        for mode in UploadWorkload.Mode.allCases {
            do {
                let result = try await UploadWorkload.run(
                    mode: mode, fileURL: fileURL, drainURL: server.url(DrainRoute.path))
                print("smoke w5 \(result.client): \(result.bytes) bytes drained")
            } catch {
                failures.append("w5 \(mode.rawValue): \(error)")
            }
        }
        return failures
    }
}
