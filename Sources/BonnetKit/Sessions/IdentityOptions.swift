import ArgumentParser
import Bluebonnet
import Foundation

/// `--auth` and `--auth-type`, for requests and `bonnet ws` alike.
struct AuthOptions: ParsableArguments {
    @Option(
        name: [.customShort("a"), .long],
        help: ArgumentHelp(
            "USER[:PASSWORD], or TOKEN for --auth-type bearer. Without :PASSWORD, it is asked for on the terminal.",
            valueName: "credentials"))
    var auth: String?

    @Option(
        name: [.customShort("A"), .customLong("auth-type")],
        help: ArgumentHelp(
            "basic (sent up front, as httpie does), digest (answers the server's Digest or Basic challenge) or bearer.",
            valueName: "type"))
    var authType: AuthType = .basic

    @Flag(
        name: .long,
        help: "Do not send the credentials ~/.netrc (or $NETRC) holds for the host when --auth gives none.")
    var ignoreNetrc = false

    /// `.netrc`'s credentials for `url`'s host, as Basic, when nothing else gives any: `nil` with `--auth` or
    /// `--ignore-netrc`, or when the file has no entry for the host.
    func netrcHeader(for url: URL?, in console: Console) -> HTTPHeader? {
        guard auth == nil, !ignoreNetrc, let host = url?.host, !host.isEmpty,
            let (user, password) = Netrc.file(in: console)?.credentials(for: host)
        else { return nil }
        return .authorization(username: user, password: password)
    }
}

/// The session file that keeps headers, credentials and cookies between runs.
struct SessionOptions: ParsableArguments {
    @Option(
        name: .customLong("session"),
        help: ArgumentHelp(
            "Keep headers, --auth and cookies between runs: a NAME (kept per host under ~/.config/bonnet/sessions) or a file PATH.",
            valueName: "name|path"))
    var sessionName: String?

    @Option(
        name: .customLong("session-read-only"),
        help: ArgumentHelp(
            "Use a --session without saving what this run changes.", valueName: "name|path"))
    var sessionReadOnly: String?

    func validate() throws {
        if sessionName != nil, sessionReadOnly != nil {
            throw ValidationError("--session and --session-read-only contradict each other")
        }
    }
}
