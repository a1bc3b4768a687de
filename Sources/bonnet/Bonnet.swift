import ArgumentParser
import Foundation
import Bluebonnet

/// `bonnet`: an httpie-style HTTP client built on Bluebonnet.
@main
struct Bonnet: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bonnet",
        abstract: "Elegant HTTP from the command line, on Bluebonnet.",
        discussion: """
            bonnet METHOD URL [ITEM ...] sends one request. Items: Header:value, name=value (JSON string field, or a form
            field with --form), name:=json (raw JSON value), name==value (query parameter).
            """,
        version: bluebonnetVersion,
        subcommands: [
            RequestCommand.self, WebSocketCommand.self, DemoCommand.self, ServeCommand.self, ReachabilityCommand.self,
        ],
        defaultSubcommand: RequestCommand.self,
        // `-h` is httpie's --headers, so help is `--help` only.
        helpNames: [.long]
    )

    /// ArgumentParser's `main`, but a usage error exits 1, as httpie's do (ArgumentParser's code is 64).
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            guard exitCode(for: error) == .validationFailure else { exit(withError: error) }
            var standardError = FileHandle.standardError
            print(fullMessage(for: error), to: &standardError)
            Foundation.exit(1)
        }
    }
}
