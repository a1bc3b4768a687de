import Foundation

/// The httpie oracle (issue 43, "The method: httpie as the oracle"): each case of `HTTPieOracle.corpus` is a command
/// line run by httpie 3.2.4 and by bonnet against a raw echo server of its own; what they send, how they exit, what
/// they print of a body and the files they leave must agree, but for the differences `HTTPieOracle.differences`
/// lists with their reasons.
enum HTTPieOracle {}

/// Which program runs a step.
enum OracleTool: String, Sendable {
    case httpie
    case bonnet
}

/// One command line of the corpus, with what it needs around it.
///
/// In a command line, `{u}` is `http://127.0.0.1:PORT`, `{h}` is `127.0.0.1:PORT` and `{p}` is `PORT`, the port of
/// the case's own echo server. Every case runs in a folder of its own holding the `HTTPieOracle.fixtures` its command
/// lines name and its own files, with a home folder of its own (`$HOME`).
struct OracleCase: Sendable {
    struct Step: Sendable {
        let line: String
        var stdin: Data?
        /// `nil`: the program under test; else always this one (a session file made or read by httpie itself).
        var tool: OracleTool?
    }

    let name: String
    var steps: [Step]
    /// Files made in the working folder before the first step.
    var files: [(path: String, contents: Data)] = []
    /// Files made in the home folder (`.netrc`).
    var homeFiles: [(path: String, contents: Data)] = []
    var responses: [CannedResponse] = [.ok]
    /// Whether standard output is a terminal (httpie writes `-d` to a piped standard output instead of a file).
    var terminal = false
    /// Variables added to the environment (proxy variables); the placeholders are replaced in them too.
    var environment: [String: String] = [:]

    init(_ name: String, _ line: String) {
        self.name = name
        steps = [Step(line: line)]
    }

    /// The first part of the name: what the case is about.
    var category: String { String(name.prefix { $0 != "-" }) }

    /// Standard input of the last step added: piped bytes.
    func stdin(_ text: String) -> OracleCase { stdin(Data(text.utf8)) }

    func stdin(_ data: Data) -> OracleCase {
        var copy = self
        copy.steps[copy.steps.count - 1].stdin = data
        return copy
    }

    /// Another command in the same folder, after the ones before it.
    func then(_ line: String, tool: OracleTool? = nil) -> OracleCase {
        var copy = self
        copy.steps.append(Step(line: line, tool: tool))
        return copy
    }

    /// The first step run by `tool` whichever program is tested (it made, or reads, a session file).
    func first(by tool: OracleTool) -> OracleCase {
        var copy = self
        copy.steps[0].tool = tool
        return copy
    }

    func file(_ path: String, _ text: String) -> OracleCase { file(path, Data(text.utf8)) }

    func file(_ path: String, _ data: Data) -> OracleCase {
        var copy = self
        copy.files.append((path, data))
        return copy
    }

    func homeFile(_ path: String, _ text: String) -> OracleCase {
        var copy = self
        copy.homeFiles.append((path, Data(text.utf8)))
        return copy
    }

    func responds(_ responses: CannedResponse...) -> OracleCase {
        var copy = self
        copy.responses = responses
        return copy
    }

    func onTerminal() -> OracleCase {
        var copy = self
        copy.terminal = true
        return copy
    }

    func environment(_ name: String, _ value: String) -> OracleCase {
        var copy = self
        copy.environment[name] = value
        return copy
    }

    /// `line` with the placeholders filled in for `port`.
    static func resolve(_ line: String, port: Int) -> String {
        line.replacingOccurrences(of: "{u}", with: "http://127.0.0.1:\(port)")
            .replacingOccurrences(of: "{h}", with: "127.0.0.1:\(port)")
            .replacingOccurrences(of: "{p}", with: "\(port)")
    }

    /// The words of step `index` for `port`.
    func arguments(step index: Int, port: Int) throws -> [String] {
        try ShellWords.split(steps[index].line).map { Self.resolve($0, port: port) }
    }

    /// Whether a step only prints the request (`--offline`): its standard output is what would be sent.
    static func isOffline(_ arguments: [String]) -> Bool { arguments.contains("--offline") }

    /// Whether standard output is the response body only (no `-v`, `-h`, `--print`, `--all`, meta, quiet, download),
    /// so that it can be compared byte for byte.
    static func printsBodyOnly(_ arguments: [String]) -> Bool {
        for word in arguments {
            if word == "--" { break }
            if word.hasPrefix("--") {
                let name = String(word.prefix { $0 != "=" })
                if [
                    "--verbose", "--headers", "--print", "--all", "--history-print", "--meta", "--quiet", "--download",
                    "--output", "--offline", "--continue", "--style", "--format-options",
                ].contains(name) || name == "--pretty" && word != "--pretty=none" {
                    return false
                }
            } else if word.hasPrefix("-"), word.count > 1, word.dropFirst().allSatisfy(\.isLetter) {
                if word.dropFirst().contains(where: { "vhpPmqdocs".contains($0) }) { return false }
            }
        }
        return true
    }
}

/// Where two runs of a case differ.
enum OracleAspect: Hashable, Sendable, CustomStringConvertible {
    /// The exit status of a step.
    case status
    /// How many requests reached the server.
    case requests
    /// A request line (method, target, version).
    case line
    /// A header field, by its name in lowercase; absent on one side counts.
    case header(String)
    /// A request body.
    case body
    /// Standard output: the body printed, or (`--offline`) what could not be read as a request.
    case output
    /// The files left in the working folder.
    case files

    var description: String {
        switch self {
        case .status: "status"
        case .requests: "requests"
        case .line: "line"
        case let .header(name): "header \(name)"
        case .body: "body"
        case .output: "output"
        case .files: "files"
        }
    }
}

/// The normalisations applied to both sides before comparing: differences by nature, each named in the reviewed
/// list (`HTTPieOracle.differences`) with its reason, and applied only when listed there.
enum OracleNormalisation: String, Hashable, Sendable, CaseIterable {
    /// Each program's own `User-Agent`, when it is the program's default.
    case userAgent
    /// Each program's own `Accept-Encoding`, when it is the program's default.
    case acceptEncoding
    /// Header field names compared without case.
    case headerNameCase
    /// Header fields compared in name order (the order among fields of one name kept).
    case headerOrder
    /// `Connection: keep-alive` left out.
    case keepAlive
    /// `Accept: */*` left out.
    case acceptAnything
    /// A multipart body's boundary replaced by `BOUNDARY`, in the body and in `Content-Type`.
    case multipartBoundary
    /// A chunked body compared by its content, not its chunk sizes.
    case chunkSizes
    /// A JSON body compared token by token (white space and string escapes are the writer's).
    case jsonLayout
    /// A Digest answer's parameters compared as a set, unquoted; its `cnonce` and `response`, made fresh by each
    /// client, blanked.
    case digestParameters
    /// `Content-Length: 0` on a request without a body left out.
    case emptyContentLength
    /// A `Content-Encoding: deflate` body compared inflated.
    case deflatedBody
    /// Session files compared by meaning: headers and cookies as lists, credentials as one raw value.
    case sessionLayout
    /// `Content-Length` compared as the length of the normalised body, once it is checked against the body sent.
    case contentLength
}

/// An entry of the reviewed list of differences.
struct OracleDifference: Sendable {
    enum Category: String, Sendable, CaseIterable {
        /// A difference by nature, normalised away in every case.
        case nature
        /// A choice of bonnet's, documented.
        case deliberate
        /// A bonnet bug not fixed yet (or an httpie feature bonnet lacks).
        case bug
    }

    let category: Category
    /// The normalisation it stands for (`.nature`), else the cases and where they differ.
    let normalisation: OracleNormalisation?
    let cases: [String]
    let aspects: [OracleAspect]
    let reason: String

    /// A difference by nature, normalised in every case.
    static func nature(_ normalisation: OracleNormalisation, _ reason: String) -> OracleDifference {
        OracleDifference(category: .nature, normalisation: normalisation, cases: [], aspects: [], reason: reason)
    }

    /// A choice of bonnet's: these cases differ there, for this reason.
    static func deliberate(_ cases: [String], _ aspects: [OracleAspect], _ reason: String) -> OracleDifference {
        OracleDifference(category: .deliberate, normalisation: nil, cases: cases, aspects: aspects, reason: reason)
    }

    /// A bug of bonnet's (or a missing httpie feature): these cases differ there until it is fixed.
    static func bug(_ cases: [String], _ aspects: [OracleAspect], _ reason: String) -> OracleDifference {
        OracleDifference(category: .bug, normalisation: nil, cases: cases, aspects: aspects, reason: reason)
    }
}
