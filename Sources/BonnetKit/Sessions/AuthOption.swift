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
    init(_ value: String, type: AuthType, askPassword: ((String) -> String?)?) throws {
        switch type {
        case .bearer:
            guard !value.isEmpty else { throw Failure(description: "--auth needs a token for --auth-type bearer") }
            self = .header(.authorization(bearerToken: value))
        case .basic, .digest:
            let (user, password) = try Self.userAndPassword(value, askPassword: askPassword)
            self =
                type == .basic
                ? .header(.authorization(username: user, password: password))
                : .challenge(URLCredential(user: user, password: password, persistence: .none))
        }
    }

    /// `USER:PASSWORD`, or `USER` with the password asked for.
    private static func userAndPassword(_ value: String, askPassword: ((String) -> String?)?) throws -> (String, String)
    {
        let parts = value.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let user = String(parts[0])
        // `:token` is an empty user name with a password, as httpie sends it (some APIs take a token so).
        if parts.count == 2 { return (user, String(parts[1])) }
        guard !user.isEmpty else { throw Failure(description: "--auth needs a user name") }
        guard let askPassword, let typed = askPassword(user) else {
            throw Failure(
                description:
                    "--auth \(user) has no password and there is no terminal to ask for it on; give \(user):PASSWORD")
        }
        return (user, typed)
    }
}

extension Console {
    /// Asks for the password of a user on the terminal, without echo; `nil` when there is no terminal to ask on.
    var askPassword: ((String) -> String?)? {
        askSecret.map { ask in { user in ask("bonnet: password for \(user): ") } }
    }
}
