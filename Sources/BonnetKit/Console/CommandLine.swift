import ArgumentParser
import Bluebonnet
import Foundation

/// A command that runs against a `Console` rather than the process's streams: `bonnet`'s own, so that the same
/// code runs as a process and inside a test.
public protocol ConsoleCommand: AsyncParsableCommand {
    /// Runs the command; it ends with status 0 by returning, and with any other by throwing a `CommandExit`.
    func run(console: Console) async throws
}

extension ConsoleCommand {
    public func run() async throws {
        try await run(console: .process)
    }
}

/// Runs a command line: parses it with a root command, runs the command it names against a console, and turns how
/// it ended into an exit status, having written what is to be said (errors, help, the version) to the console.
public enum BonnetCommandLine {
    /// The commands of the HTTP client: `request` (the default), `ws` and `reachability`.
    public static let clientCommands: [any ParsableCommand.Type] = [
        RequestCommand.self, WebSocketCommand.self, ReachabilityCommand.self,
    ]

    /// `bonnet`'s root: its abstract, version and help, the client's commands with `extra` ones, `request` the
    /// default.
    public static func configuration(adding extra: [any ParsableCommand.Type] = []) -> CommandConfiguration {
        CommandConfiguration(
            commandName: "bonnet",
            abstract: "Elegant HTTP from the command line, on Bluebonnet.",
            discussion: """
                bonnet METHOD URL [ITEM ...] sends one request. Items: Header:value, name=value (JSON string field, or a \
                form field with --form), name:=json (raw JSON value), name==value (query parameter).
                """,
            version: bluebonnetVersion,
            subcommands: clientCommands + extra,
            defaultSubcommand: RequestCommand.self,
            // `-h` is httpie's --headers, so help is `--help` only.
            helpNames: [.long]
        )
    }

    /// Runs `arguments` (without the program's name) as `bonnet` would, the client's commands only, and returns the
    /// exit status.
    public static func run(arguments: [String], console: Console) async -> Int32 {
        await run(ClientRoot.self, arguments: arguments, console: console)
    }

    /// Runs `arguments` (without the program's name) with `root`, and returns the exit status.
    ///
    /// A usage error exits 1, as httpie's do (ArgumentParser's status is 64); `--help` and `--version` go to
    /// standard output and exit 0.
    public static func run(_ root: any ParsableCommand.Type, arguments: [String], console: Console) async -> Int32 {
        var arguments = arguments
        do {
            // httpie's `default_options` go before the words of a request (not another command's).
            let first = arguments.first ?? ""
            let request = RequestCommand.configuration.commandName
            let commands = root.configuration.subcommands.compactMap { $0.configuration.commandName }
            if first == request || !commands.contains(first) {
                let defaults = try HTTPieConfiguration.defaultOptions(in: console)
                arguments.insert(contentsOf: defaults, at: first == request ? 1 : 0)
            }
        } catch {
            console.warn("error: \(error)")
            return 1
        }
        do {
            var command = try root.parseAsRoot(emptyValuesSpelledOut(manualAsHelp(arguments)))
            if let command = command as? any ConsoleCommand {
                try await command.run(console: console)
            } else if var command = command as? any AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
            return 0
        } catch let exit as CommandExit {
            if let message = exit.message { console.warn("error: " + message) }
            return exit.status
        } catch {
            let message = root.fullMessage(for: error)
            let code = root.exitCode(for: error)
            if code == .success {
                try? console.output.write(line: message)
                return 0
            }
            guard code == .validationFailure else {
                if !message.isEmpty { try? console.errors.write(line: message) }
                return code.rawValue
            }
            // A usage error: what is wrong and where help is, as httpie says it, not the whole usage block.
            console.warn("error: " + root.message(for: error))
            try? console.errors.write(line: "bonnet: run '\(helpCommand(in: message))' for the options")
            return 1
        }
    }

    /// The `--help` command ArgumentParser's full message points to (`bonnet ws --help`), else `bonnet --help`.
    static func helpCommand(in fullMessage: String) -> String {
        guard let quoted = fullMessage.range(of: #"'[^']*--help'"#, options: .regularExpression) else {
            return "bonnet --help"
        }
        return String(fullMessage[quoted].dropFirst().dropLast())
    }

    /// `arguments` with httpie's `--manual` read as `--help`: the manual is the full help.
    static func manualAsHelp(_ arguments: [String]) -> [String] {
        let end = arguments.firstIndex(of: "--") ?? arguments.endIndex
        return arguments[..<end].map { $0 == "--manual" ? "--help" : $0 } + arguments[end...]
    }
}

extension BonnetCommandLine {
    /// `arguments` with an option given an empty value after `=` (`--raw=`, as httpie takes it) as the option and
    /// an empty word, which ArgumentParser reads as the empty value (it would take the next word instead).
    static func emptyValuesSpelledOut(_ arguments: [String]) -> [String] {
        var spelled: [String] = []
        for (index, word) in arguments.enumerated() {
            if word == "--" { return spelled + arguments[index...] }
            if word.count > 3, word.hasPrefix("--"), word.hasSuffix("="), !word.dropFirst(2).dropLast().contains("=") {
                spelled += [String(word.dropLast()), ""]
            } else {
                spelled.append(word)
            }
        }
        return spelled
    }
}

/// `bonnet` with the client's commands only: what `BonnetCommandLine.run(arguments:console:)` parses with.
private struct ClientRoot: AsyncParsableCommand {
    static let configuration = BonnetCommandLine.configuration()
}
