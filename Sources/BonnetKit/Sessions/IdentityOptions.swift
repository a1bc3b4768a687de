import ArgumentParser

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
