import ArgumentParser
import Bluebonnet
import BluebonnetTestServer
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// W5: one large file uploaded to a `/drain` route, measured for peak RSS. Streaming must keep memory flat.
enum UploadWorkload {
    /// How the file is sent.
    enum Mode: String, CaseIterable, Sendable {
        /// `upload(multipartFormData:)` with the file appended: above the threshold the form is written to a
        /// temporary file, which is then streamed.
        case multipart
        /// `upload(_ fileURL:)`: the file streamed as the raw body.
        case file
    }

    struct Drained: Decodable {
        let bytes: Int
    }

    static func run(mode: Mode, fileURL: URL, drainURL: URL) async throws -> RunResult {
        let session = Session()
        let before = ResourceUsage.now()
        let start = ContinuousClock.now
        let request: UploadRequest
        switch mode {
        case .multipart:
            request = session.upload(multipartFormData: { $0.append(fileURL, withName: "file") }, to: drainURL)
        case .file:
            request = session.upload(fileURL, to: drainURL)
        }
        let drained = try await request.validate().serializingDecodable(Drained.self).value
        let elapsed = ContinuousClock.now - start
        let after = ResourceUsage.now()
        let size = try FileManager.default.attributesOfItem(atPath: fileURL.path)[.size] as? Int ?? 0
        guard drained.bytes >= size else {
            throw BenchError(description: "the server drained \(drained.bytes) bytes of a \(size)-byte file")
        }
        return RunResult(
            client: "bluebonnet-\(mode.rawValue)", workload: "w5", requests: 1, inFlight: 1, bytes: drained.bytes,
            wallSeconds: elapsed.seconds,
            cpuUserSeconds: after.userSeconds - before.userSeconds,
            cpuSystemSeconds: after.systemSeconds - before.systemSeconds,
            peakRSSKiB: after.maxRSSKiB
        )
    }
}

/// `upload`: W5, one file to the drain server, one JSON line.
struct UploadCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "upload", abstract: "Upload one file to a /drain route (W5) and print a JSON line.")

    @Option(help: "multipart or file.")
    var mode: String = "multipart"

    @Option(help: "The file to upload.")
    var file: String

    @Option(help: "The drain server's base URL, e.g. http://127.0.0.1:18090.")
    var baseURL: String

    func run() async throws {
        guard let mode = UploadWorkload.Mode(rawValue: mode) else { throw ValidationError("unknown mode \(mode)") }
        guard let drain = URL(string: baseURL + DrainRoute.path) else { throw ValidationError("bad URL") }
        let result = try await UploadWorkload.run(mode: mode, fileURL: URL(fileURLWithPath: file), drainURL: drain)
        try result.printJSONLine()
    }
}

/// `drain-server`: the test server in its own process, so the upload's client is measured alone.
struct DrainServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "drain-server", abstract: "Serve the test server's routes (with /drain) on a port until killed.")

    @Option(help: "The port to listen on.")
    var port: Int

    func run() async throws {
        try await TestServer.run(port: port) { _ in }
    }
}
