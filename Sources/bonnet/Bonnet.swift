import ArgumentParser
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
        subcommands: [RequestCommand.self, DemoCommand.self, ServeCommand.self, ReachabilityCommand.self],
        defaultSubcommand: RequestCommand.self,
        // `-h` is httpie's --headers, so help is `--help` only.
        helpNames: [.long]
    )
}
