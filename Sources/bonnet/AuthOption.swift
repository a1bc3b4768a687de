import ArgumentParser
import Bluebonnet
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `--auth-type`, in httpie's spelling.
enum AuthType: String, CaseIterable, ExpressibleByArgument {
    case basic
    case digest
    case bearer
}

/// What `--auth` turns into: a header sent up front, or a credential that answers the server's challenge.
enum AuthOption {
    case header(HTTPHeader)
    case challenge(URLCredential)

    /// Why `--auth` could not be used.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Reads `value` for `type`, asking for a missing password on the terminal.
    ///
    /// - Parameters:
    ///   - value:          `USER[:PASSWORD]`, or a token for bearer.
    ///   - type:           The scheme.
    ///   - askPassword:    Asks for the password of a user; `nil` when there is no terminal to ask on.
    init(_ value: String, type: AuthType, askPassword: ((String) -> String?)? = AuthOption.terminalPrompt) throws {
        if type == .bearer {
            guard !value.isEmpty else { throw Failure(description: "--auth needs a token for --auth-type bearer") }
            self = .header(.authorization(bearerToken: value))
            return
        }
        let parts = value.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let user = String(parts[0])
        guard !user.isEmpty else { throw Failure(description: "--auth needs a user name before the colon") }
        let password: String
        if parts.count == 2 {
            password = String(parts[1])
        } else if let askPassword, let typed = askPassword(user) {
            password = typed
        } else {
            throw Failure(description: "--auth \(user) has no password and there is no terminal to ask for it on; give \(user):PASSWORD")
        }
        switch type {
        case .basic: self = .header(.authorization(username: user, password: password))
        case .digest: self = .challenge(URLCredential(user: user, password: password, persistence: .none))
        case .bearer: preconditionFailure("handled above")
        }
    }

    /// Asks on the controlling terminal, without echo; `nil` when stdin is not a terminal.
    static func terminalPrompt(for user: String) -> String? {
        guard isatty(STDIN_FILENO) == 1, let typed = getpass("bonnet: password for \(user): ") else { return nil }
        return String(cString: typed)
    }
}
