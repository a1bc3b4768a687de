import ArgumentParser
import Foundation

/// What the body is made of and how it is sent: httpie's content types, `--raw`, `--chunked`, `--compress`.
struct BodyOptions: ParsableArguments {
    /// `--json`, `--form` and `--multipart`: as in httpie, the one given last wins.
    enum Kind: String, EnumerableFlag {
        case json
        case form
        case multipart

        static func name(for value: Kind) -> NameSpecification {
            switch value {
            case .json: [.customShort("j"), .long]
            case .form: [.customShort("f"), .long]
            case .multipart: .long
            }
        }

        static func help(for value: Kind) -> ArgumentHelp? {
            switch value {
            case .json: "Send data items as a JSON object (the default)."
            case .form:
                "Send data items as a URL-encoded form instead of JSON (multipart when there are name@file items)."
            case .multipart: "Send data and file items as a multipart/form-data form."
            }
        }
    }

    @Flag(exclusivity: .chooseLast) var kind: Kind?

    /// `--json` is the last of the three given.
    var json: Bool { kind == .json }
    /// `--form` is the last of the three given.
    var form: Bool { kind == .form }
    /// `--multipart` is the last of the three given.
    var multipart: Bool { kind == .multipart }

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The boundary of a multipart form (--multipart, or --form with name@file items), instead of a random one.",
            valueName: "boundary"))
    var boundary: String?

    @Option(
        name: .long,
        help: ArgumentHelp("The request body, as given (instead of data items or stdin).", valueName: "data"))
    var raw: String?

    @Flag(
        name: [.customShort("I"), .long],
        help: "Do not read a request body from standard input, even when it is not a terminal.")
    var ignoreStdin = false

    @Flag(name: .long, help: "Send the body with chunked transfer encoding, without a Content-Length.")
    var chunked = false

    @Flag(
        name: [.customShort("x"), .customLong("compress")],
        help:
            "Send the body deflated (Content-Encoding: deflate), when that makes it smaller; -xx deflates it anyway."
    )
    var compress: Int

    func validate() throws {
        // RFC 2046 §5.1.1: 1 to 70 characters of its set, not ending with a space.
        let allowed = Set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ'()+_,-./:=? ")
        if let boundary,
            boundary.isEmpty || boundary.count > 70 || !boundary.allSatisfy(allowed.contains)
                || boundary.hasSuffix(" ")
        {
            throw ValidationError(
                "--boundary takes 1 to 70 letters, digits or '()+_,-./:=? (not ending with a space), not \(boundary)")
        }
    }
}

/// What is shown, and how: httpie's `--print` and its shorthands, `--pretty`, `--style`, sorting and formatting.
struct PrintOptions: ParsableArguments {
    @Flag(name: [.customShort("v"), .long], help: "Print the request as well as the response.")
    var verbose = false

    @Flag(name: [.customShort("h"), .long], help: "Print only the response headers (--print=h).")
    var headers = false

    @Flag(name: [.customShort("b"), .long], help: "Print only the response body (--print=b).")
    var body = false

    @Flag(
        name: [.customShort("m"), .long],
        help: "Print only the response's metadata (--print=m): the request's timeline, with how long it took.")
    var meta = false

    @Option(
        name: [.customShort("p"), .customLong("print")],
        help: ArgumentHelp(
            "What to print: H request headers, B request body, h response headers, b response body, m metadata. "
                + "Default: hb on a terminal, b when piped; -v is HBhb.", valueName: "what"))
    var printSpec: String?

    @Flag(
        name: .long,
        help: "Also show the intermediary exchanges (redirects followed, challenges answered), before the final one.")
    var all = false

    @Option(
        name: [.customShort("P"), .customLong("history-print")],
        help: ArgumentHelp(
            "What to print of intermediary exchanges with --all, as --print (the same as --print by default).",
            valueName: "what"))
    var historyPrint: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "all (colours and formatting: the default on a terminal), colors, format, or none (the default when piped).",
            valueName: "style"))
    var pretty: PrettyStyle?

    @Option(
        name: [.customShort("s"), .long],
        help: ArgumentHelp(
            "The output's colours, by any of httpie's style names: \(ColorStyle.allValueStrings.joined(separator: ", ")) "
                + "(auto by default: the terminal's own); each is shown with the nearest of bonnet's palettes (auto, "
                + "monokai, solarized, fruity, bw).",
            valueName: "style"),
        transform: ColorStyle.named)
    var style: ColorStyle = .auto

    @Flag(name: .long, help: "Sort headers and JSON keys (the default, as httpie).")
    var sorted = false

    @Flag(name: .long, help: "Keep headers and JSON keys in the order the server sent them.")
    var unsorted = false

    @Flag(name: .long, help: "Never colour the output.")
    var noColor = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Formatting choices, as httpie's: headers.sort:BOOL, json.sort_keys:BOOL, json.indent:N, json.format:BOOL.",
            valueName: "key:value,..."))
    var formatOptions: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Render the body as this media type (e.g. application/json), whatever the server says.", valueName: "type"))
    var responseMime: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Decode the body shown with this charset (utf-8, latin1, utf-16, ...), whatever the server says.",
            valueName: "charset"))
    var responseCharset: String?

    @Flag(
        name: [.customShort("q"), .customLong("quiet")],
        help: "Print nothing but errors and warnings (the response is still saved with -o); -qq: errors only.")
    var quiet: Int

    @Flag(name: .long, help: "Print the request's Timeline after the response.")
    var timeline = false

    @Flag(name: .long, help: "Print the request as a cURL command instead of only sending it.")
    var curl = false

    func validate() throws {
        for (option, spec) in [("--print", printSpec), ("--history-print", historyPrint)] {
            if let spec, spec.isEmpty || !spec.allSatisfy("HBhbm".contains) {
                throw ValidationError("\(option) takes letters of HBhbm, e.g. \(option)=Hh")
            }
        }
        if sorted, unsorted { throw ValidationError("--sorted and --unsorted contradict each other") }
        do { _ = try FormatOptions(formatOptions) } catch { throw ValidationError("\(error)") }
        if let responseCharset, Output.encoding(ofContentType: "text/plain; charset=\(responseCharset)") == nil {
            throw ValidationError("--response-charset: unknown charset \(responseCharset)")
        }
        if let responseMime, !responseMime.contains("/") || responseMime.contains(";") {
            throw ValidationError("--response-mime takes a media type such as application/json")
        }
    }
}

/// How the exchange goes: redirects, timeouts, status checks, the cache, and not sending at all (`--offline`).
struct ExchangeOptions: ParsableArguments {
    @Flag(
        name: .long,
        help:
            "Print the request that would be sent (--print=HB unless given), and do not send it; with --cache, answer from the cache instead."
    )
    var offline = false

    @Flag(
        name: .long,
        help:
            "Keep responses in bonnet's HTTP cache (~/.cache/bonnet, or $BONNET_CACHE_DIR) and answer from it by RFC 9111."
    )
    var cache = false

    @Flag(name: .long, help: "Exit with 3, 4 or 5 for a 3xx, 4xx or 5xx response.")
    var checkStatus = false

    @Flag(name: .long, help: "Follow redirects (the default here, unlike httpie).")
    var follow = false

    @Flag(name: .long, help: "Do not follow redirects: a 3xx is the response.")
    var noFollow = false

    @Option(name: .long, help: "The most redirects followed before the request fails with exit code 6 (16 by default).")
    var maxRedirects: Int?

    @Option(name: .long, help: "Seconds of silence allowed from the server.")
    var timeout: Double?

    @Flag(name: .long, help: "Send the URL's path as given: do not resolve its . and .. segments.")
    var pathAsIs = false

    @Option(
        name: .long,
        help: ArgumentHelp(
            "The scheme of a URL given without one (http by default; https as the `https` entry point of httpie).",
            valueName: "scheme"))
    var defaultScheme: String = "http"

    @Option(
        name: .long,
        help: "Fail (exit 1) when the response has more header fields than this; 0, the default, is no limit.")
    var maxHeaders: Int = 0

    @Flag(name: .customLong("http1"), help: "Speak HTTP/1.1 only: do not offer HTTP/2 in the TLS handshake.")
    var http1 = false

    func validate() throws {
        if follow, noFollow { throw ValidationError("--follow and --no-follow contradict each other") }
        if let maxRedirects, maxRedirects < 0 { throw ValidationError("--max-redirects cannot be negative") }
        if maxHeaders < 0 { throw ValidationError("--max-headers cannot be negative") }
        if defaultScheme.range(of: "^[A-Za-z][A-Za-z0-9+.-]*$", options: .regularExpression) == nil {
            throw ValidationError("--default-scheme takes a scheme such as http or https, not \(defaultScheme)")
        }
    }
}

/// Where the body goes instead of standard output: a file (`--download`, `-o`, `--continue`), or out as it arrives.
struct DownloadOptions: ParsableArguments {
    @Flag(
        name: [.customShort("d"), .long],
        help:
            "Save the body to a file (named by -o, the server, or the URL) with a progress bar, headers on standard error."
    )
    var download = false

    @Option(
        name: [.customShort("o"), .long],
        help: ArgumentHelp("The file the body is saved to (implies --download).", valueName: "file"))
    var output: String?

    @Flag(
        name: [.customShort("c"), .customLong("continue")],
        help: "Resume a partial download of the -o file with a Range request.")
    var resume = false

    @Flag(
        name: [.customShort("S"), .long],
        help: "Print the body as it arrives (Server-Sent Events one by one) rather than when it is complete.")
    var stream = false

    /// Whether the body goes to a file.
    var savesToFile: Bool { download || output != nil }

    func validate() throws {
        if resume, output == nil { throw ValidationError("--continue needs -o FILE, the partial download to resume") }
        if stream, savesToFile { throw ValidationError("--stream and --download contradict each other") }
    }
}

/// What helps find out what went wrong: `--traceback`, `--debug`, and `--manual` (read before parsing, by
/// `BonnetCommandLine`).
struct TroubleshootingOptions: ParsableArguments {
    @Flag(name: .long, help: "On failure, print the error in full (every underlying error), then the message.")
    var traceback = false

    @Flag(
        name: .long,
        help: "Print bonnet's version, the system and the request planned on standard error first; implies --traceback."
    )
    var debug = false

    @Flag(name: .long, help: "Print the manual: the full help of every option.")
    var manual = false
}
