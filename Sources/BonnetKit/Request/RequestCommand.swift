import ArgumentParser
import Bluebonnet
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `bonnet [METHOD] URL [ITEM ...]`: one request, printed like httpie. It plans the request from the options
/// (`RequestPlan`), sends it (`Exchange`), and prints what came back (`ExchangePrinter`).
public struct RequestCommand: ConsoleCommand {
    public static let configuration = CommandConfiguration(
        commandName: "request",
        abstract: "Send one HTTP request (the default command).",
        discussion: """
            Redirects are followed (up to --max-redirects); httpie's default is not to: use --no-follow for that.
            Exit codes as httpie's: 0 ok, 1 error, 2 timeout, 3/4/5 a 3xx/4xx/5xx with --check-status, 6 too many redirects.
            """,
        helpNames: [.long]
    )

    @Argument(
        help:
            "An optional METHOD, then the URL, then items: Header:value, name=value, name:=json, name==query, name@file."
    )
    var words: [String] = []

    @OptionGroup(title: "Body") var body: BodyOptions
    @OptionGroup(title: "Output") var printing: PrintOptions
    @OptionGroup(title: "Exchange") var exchange: ExchangeOptions
    @OptionGroup(title: "Authentication") var authentication: AuthOptions
    @OptionGroup(title: "Sessions") var sessions: SessionOptions
    @OptionGroup(title: "Downloads and streams") var download: DownloadOptions
    @OptionGroup(title: "Connection") var connection: ConnectionOptions
    @OptionGroup(title: "Troubleshooting") var troubleshooting: TroubleshootingOptions

    public init() {}

    public func validate() throws {
        guard !words.isEmpty else { throw ValidationError("Give a URL, e.g. bonnet GET http://127.0.0.1:8080/get") }
    }

    public func run(console: Console) async throws {
        let tracing = troubleshooting.traceback || troubleshooting.debug
        // What is said of an error may quote what the user typed: the secrets in it are hidden.
        let redaction = SecretRedaction(
            words: words, auth: authentication.auth, proxies: connection.proxy, certKeyPass: connection.certKeyPass,
            environment: console.environment)
        do {
            try await perform(console: console)
        } catch let exit as CommandExit {
            if tracing, let detail = exit.detail { try? console.errors.write(line: redaction.apply(to: detail)) }
            throw CommandExit(
                status: exit.status, message: exit.message.map(redaction.apply(to:)),
                detail: exit.detail.map(redaction.apply(to:)))
        } catch  where tracing {
            try? console.errors.write(line: redaction.apply(to: CommandExit.traceback(of: error)))
            throw error
        }
    }

    private func perform(console: Console) async throws {
        let plan = try RequestPlan(self, console: console)
        if troubleshooting.debug { Self.printDebugInformation(plan, console: console) }
        do {
            try await exchange(plan, console: console)
        } catch let exit as CommandExit
            where exit.message == ErrorMessage.closedBeforeAnswering
            && plan.urlRequest.url?.scheme?.lowercased() == "https"
        {
            // Over TLS, that is how a server that requires a client certificate refuses one it was not given or does
            // not accept: the TLS alert saying so is lost with the connection.
            let hint =
                connection.cert == nil
                ? "; a server that requires a client certificate does this when given none: give one with --cert"
                : "; a server that requires a client certificate does this when it does not accept the one given"
            throw CommandExit(
                status: exit.status, message: ErrorMessage.closedBeforeAnswering + hint, detail: exit.detail)
        }
    }

    /// Sends the planned request and shows what came back, as `plan.mode` says.
    private func exchange(_ plan: RequestPlan, console: Console) async throws {
        let exchange = try Exchange(plan: plan, console: console)
        switch plan.mode {
        case .offline:
            try await exchange.showOffline()
            // As httpie does: the session keeps this request's headers and credentials, though nothing was sent.
            exchange.keepSession()
        case .download:
            try await exchange.download()
            exchange.keepSession()
        case .stream:
            try await exchange.stream()
            exchange.keepSession()
        case .exchange:
            let outcome = try await exchange.send()
            if outcome.response.response != nil { exchange.keepSession() }
            try ExchangePrinter(plan: plan, console: console).print(outcome)
        }
    }

    /// `--debug`: what a bug report needs, on standard error: the versions, the system, and the request planned,
    /// credentials and cookies hidden.
    private static func printDebugInformation(_ plan: RequestPlan, console: Console) {
        let request = plan.urlRequest
        var lines = [
            "bonnet \(bluebonnetVersion) (Bluebonnet \(bluebonnetVersion))",
            "\(ProcessInfo.processInfo.operatingSystemVersionString)",
            "mode: \(plan.mode), printing: \(String(plan.parts.sorted()))",
            ">>> \(request.httpMethod ?? "GET") \(request.url.map(Self.withoutPassword) ?? "")",
        ]
        for (name, value) in (request.allHTTPHeaderFields ?? [:]).sorted(by: { $0.key < $1.key }) {
            let hidden = ["authorization", "proxy-authorization", "cookie"].contains(name.lowercased())
            lines.append("    \(name): \(hidden ? "(hidden)" : value)")
        }
        if let body = request.httpBody { lines.append("    (a body of \(body.count) bytes)") }
        if plan.streamedBody != nil { lines.append("    (a body streamed as it is read)") }
        if let file = plan.bodyFile { lines.append("    (a body sent from \(file.path))") }
        for line in lines { try? console.errors.write(line: line) }
    }

    /// `url` with its password, if any, shown as `(hidden)`: a bug report is meant to be shared.
    static func withoutPassword(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false), components.password != nil
        else { return url.absoluteString }
        components.percentEncodedPassword = "(hidden)"
        return components.string ?? url.absoluteString
    }

    /// The method word, when the first word is one: letters only, and followed by something that is not an item.
    /// As in httpie, `get URL` is a method, while in `localhost a=1` the first word is the URL.
    static func methodWord(in words: [String]) -> String? {
        guard words.count > 1, let first = words.first, !first.isEmpty, first.allSatisfy({ $0.isASCII && $0.isLetter })
        else {
            return nil
        }
        let second = words[1]
        return RequestItems.split(second) == nil || second.hasPrefix(":") || second.contains("://")
            || looksLikeHostAndPort(second) ? first : nil
    }

    /// `host:port`, `host:port/path` or `:port/path`: a URL without its scheme, though it parses as a header item
    /// (`localhost` `8095/get`), so that `GET localhost:8095/get` is a method and a URL, as in httpie.
    static func looksLikeHostAndPort(_ word: String) -> Bool {
        guard let colon = word.firstIndex(of: ":") else { return false }
        let host = word[..<colon]
        let rest = word[word.index(after: colon)...]
        let port = rest.prefix { $0.isASCII && $0.isNumber }
        guard !port.isEmpty, port.count <= 5 else { return false }
        let after = rest.dropFirst(port.count)
        return !host.contains { $0 == "=" || $0 == "@" || $0 == " " }
            && (after.first.map { "/?#".contains($0) } ?? true)
    }
}
