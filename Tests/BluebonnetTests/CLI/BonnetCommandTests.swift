import BonnetKit
import Foundation
import XCTest

/// `bonnet`'s commands run inside this process, through the same entry point the program uses, against the test
/// server: standard input, output and error in memory (none a terminal), the environment and folder as given. What
/// only a process shows (a terminal, a real pipe, the program's own exit) is in `BonnetProcessTests`.
final class BonnetCommandTests: ServerTestCase {
    typealias Run = BonnetRun

    /// Runs `bonnet ARGUMENTS`, failing the test if it still runs after `timeout` seconds.
    ///
    /// - Parameters:
    ///   - arguments:   The command line, without the program's name.
    ///   - stdin:       Piped to standard input; `nil` for a terminal with nothing typed (so nothing prompts).
    ///   - directory:   The working directory (relative files, downloads); this process's by default.
    ///   - environment: Variables added to this process's.
    ///   - unsetting:   Variables of this process's left out (`swift test` sets `NO_COLOR`).
    ///   - closeOutputAfter: Bytes of standard output taken before it behaves as a closed pipe (`| head -c N`).
    ///   - outputIsTerminal: Whether standard output counts as a terminal (`--download` saves a file only then).
    func bonnet(
        _ arguments: [String], stdin: Data? = nil, timeout: TimeInterval = 60, in directory: URL? = nil,
        environment: [String: String] = [:], unsetting: [String] = [], closeOutputAfter: Int? = nil,
        outputIsTerminal: Bool = false
    ) async throws -> Run {
        let console = Console(
            output: ConsoleStream(capacity: closeOutputAfter), errors: ConsoleStream(capacity: nil),
            input: stdin.map(ConsoleInput.bytes) ?? .terminal, outputIsTerminal: outputIsTerminal,
            // The machine's own proxy variables stay out: bonnet honours them, and the tests talk to loopback servers.
            environment: ProcessInfo.processInfo.environment
                .filter { !["http_proxy", "https_proxy", "all_proxy", "no_proxy"].contains($0.key.lowercased()) }
                .merging(environment) { $1 }
                .filter { !unsetting.contains($0.key) },
            directory: directory ?? URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
        let status = try await withThrowingTaskGroup(of: Int32?.self) { group in
            group.addTask { await BonnetCommandLine.run(arguments: arguments, console: console) }
            group.addTask {
                try await Task.sleep(for: .seconds(timeout))
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        guard let status else {
            XCTFail("bonnet \(arguments.joined(separator: " ")) still ran after \(timeout) s")
            return Run(status: -1, data: console.output.bytes, output: console.output.text, errors: console.errors.text)
        }
        return Run(status: status, data: console.output.bytes, output: console.output.text, errors: console.errors.text)
    }
}
