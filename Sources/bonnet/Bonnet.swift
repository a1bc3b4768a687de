import ArgumentParser
import BonnetKit
import Bluebonnet
import Foundation

/// `bonnet`: an httpie-style HTTP client built on Bluebonnet. The client's commands are `BonnetKit`'s; this program
/// adds the embedded test server's (`demo`, `serve`) and runs them against the process's own streams.
@main
struct Bonnet: AsyncParsableCommand {
    static let configuration = BonnetCommandLine.configuration(adding: [DemoCommand.self, ServeCommand.self])

    /// Runs the command line and exits with its status: never a trap, a usage error exits 1 (httpie's status).
    static func main() async {
        // A reader that goes away (`| head`) is then an EPIPE the output sees, which ends the run quietly with 141, not
        // a signal at whatever moment (NIO ignores the signal too, but only once it has started).
        signal(SIGPIPE, SIG_IGN)
        let status = await BonnetCommandLine.run(
            Bonnet.self, arguments: Array(CommandLine.arguments.dropFirst()), console: .process)
        Foundation.exit(status)
    }
}
