import Foundation
import XCTest

/// How a run of `bonnet` ended, in-process or as a process.
struct BonnetRun {
    let status: Int32
    /// Standard output, as bytes and as UTF-8 text.
    let data: Data
    let output: String
    let errors: String
}

/// Runs the `bonnet` built beside this test bundle as a separate process, as a person runs it.
enum BonnetRunner {
    struct Result {
        /// The exit status; 128 + the signal for a process a signal ended.
        let status: Int32
        let output: Data
        let errors: Data
    }

    /// Runs bonnet, killing it after `timeout` seconds (a hang guard). Its outputs are read while it runs, so they may
    /// be of any size; with `closeOutputAfter`, standard output's reader stops after that many bytes and closes the
    /// pipe, as `head -c` does.
    ///
    /// - Parameters:
    ///   - arguments:   The command line.
    ///   - stdin:       Piped to standard input; `nil` for `/dev/null` (not a terminal, so nothing prompts).
    ///   - timeout:     The longest it may run before the test fails.
    ///   - directory:   Its working directory.
    ///   - environment: Variables added to this process's.
    ///   - unsetting:   Variables of this process's left out (`swift test` sets `NO_COLOR`).
    ///   - closeOutputAfter: Bytes of standard output read before the pipe is closed.
    static func run(
        _ arguments: [String], stdin: Data? = nil, timeout: TimeInterval = 60, in directory: URL? = nil,
        environment: [String: String] = [:], unsetting: [String] = [], closeOutputAfter: Int? = nil
    ) throws -> Result {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
            "bonnet")
        // `swift build --build-tests` builds every product, so a missing binary is a broken build, not a skip.
        guard FileManager.default.isExecutableFile(atPath: binary.path) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: binary.path])
        }
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = directory }
        if !environment.isEmpty || !unsetting.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
                .filter { !unsetting.contains($0.key) }
        }
        let output = Pipe(), errors = Pipe(), input = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = stdin == nil ? FileHandle.nullDevice : input
        // Waited for, not polled.
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        let readers = DispatchGroup()
        let outputBox = DataBox(), errorBox = DataBox()
        DispatchQueue.global().async(group: readers) {
            let reader = output.fileHandleForReading
            if let limit = closeOutputAfter {
                var data = Data()
                while data.count < limit, let piece = try? reader.read(upToCount: limit - data.count), !piece.isEmpty {
                    data.append(piece)
                }
                try? reader.close()
                outputBox.set(data)
            } else {
                outputBox.set(reader.readDataToEndOfFile())
            }
        }
        DispatchQueue.global().async(group: readers) { errorBox.set(errors.fileHandleForReading.readDataToEndOfFile()) }
        if let stdin {
            input.fileHandleForWriting.write(stdin)
            try input.fileHandleForWriting.close()
        }
        if exited.wait(timeout: .now() + timeout) == .timedOut {
            process.terminate()
            XCTFail("bonnet \(arguments.joined(separator: " ")) still ran after \(timeout) s")
        }
        process.waitUntilExit()
        readers.wait()
        let status =
            process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
        return Result(status: status, output: outputBox.value, errors: errorBox.value)
    }

    /// Bytes one reader thread hands to the test's thread.
    private final class DataBox: @unchecked Sendable {
        // @unchecked: `data` is written once by a reader and read after `DispatchGroup.wait()`, under `lock`.
        private let lock = NSLock()
        private var data = Data()
        func set(_ value: Data) { lock.withLock { data = value } }
        var value: Data { lock.withLock { data } }
    }
}
