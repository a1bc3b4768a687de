import Bluebonnet
import Foundation

/// How a command ends other than with status 0: thrown, never `exit()`, so that it ends a process and an in-process
/// run alike. The message, if any, is written to standard error as `bonnet: error: <message>`.
public struct CommandExit: Error, Sendable, Equatable {
    /// The process's exit status.
    public let status: Int32
    /// What went wrong, in the user's terms; `nil` when it was already said (or nothing is to be said).
    public let message: String?
    /// The error in full, for `--traceback`: every underlying error, in the library's and the system's own terms.
    public let detail: String?

    public init(status: Int32, message: String? = nil) {
        self.init(status: status, message: message, detail: nil)
    }

    init(status: Int32, message: String?, detail: String?) {
        self.status = status
        self.message = message
        self.detail = detail
    }

    /// The reader of standard output went away (`bonnet URL | head`): ended quietly with the status of a program
    /// killed by `SIGPIPE` (141), as `cat` is seen to end. NIO ignores the signal, so it never comes by itself.
    public static let readerWentAway = CommandExit(status: 128 + 13)

    /// A usage error: httpie's status 1.
    static func usage(_ message: String) -> CommandExit {
        CommandExit(status: 1, message: message)
    }

    /// A request that failed: httpie's statuses, 2 for a timeout, 6 for too many redirects, 1 for anything else.
    static func failure(_ error: any Error) -> CommandExit {
        CommandExit(status: status(for: error), message: ErrorMessage.describe(error), detail: traceback(of: error))
    }

    /// `error` in full, as `--traceback` prints it: its description, then its structure with every underlying
    /// error.
    static func traceback(of error: any Error) -> String {
        var structure = ""
        dump(error, to: &structure, maxDepth: 12)
        return "Traceback (the error in full):\n  \(String(reflecting: error))\n"
            + structure.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n")
    }

    /// A response with an error status under `--check-status`: 3, 4 or 5; `nil` for any status outside 300–599
    /// (a `600` is not an error to httpie, nor "too many redirects").
    static func status(of response: HTTPURLResponse) -> CommandExit? {
        statusClass(response.statusCode).map { CommandExit(status: $0) }
    }

    /// 3, 4 or 5 for a status from 300 to 599, `nil` for any other.
    static func statusClass(_ code: Int) -> Int32? {
        (300..<600).contains(code) ? Int32(code / 100) : nil
    }

    /// httpie's exit statuses for `error`: 2 for a timeout, 6 for too many redirects, 1 for any other.
    static func status(for error: any Error) -> Int32 {
        guard let error = error.asAFError else { return 1 }
        if case .redirectFailed(reason: .tooManyRedirects) = error { return 6 }
        if let urlError = error.underlyingError as? URLError, urlError.code == .timedOut { return 2 }
        return 1
    }
}
