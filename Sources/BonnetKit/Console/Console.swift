import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a command reads from and writes to, and where it runs: the process's standard streams, environment and
/// working directory (`Console.process`), or memory (`Console.captured`), so that a test runs a whole command in its
/// own process and reads every byte it wrote.
public struct Console: Sendable {
    /// Standard output: the response.
    public let output: ConsoleStream
    /// Standard error: errors, warnings, progress and a download's head.
    public let errors: ConsoleStream
    /// Standard input: a piped request body, or a WebSocket's lines.
    public let input: ConsoleInput
    /// Whether standard output is a terminal (colours, formatting and escaping by default).
    public let outputIsTerminal: Bool
    /// Whether standard error is a terminal (progress bars are drawn only there).
    public let errorsIsTerminal: Bool
    /// The environment variables the command reads (`NO_COLOR`, `BONNET_CACHE_DIR`, `XDG_CONFIG_HOME`, ...).
    public let environment: [String: String]
    /// Where relative file names are resolved and downloads are saved.
    public let directory: URL
    /// Asks for a secret (a password) on the terminal without echo; `nil` when there is no terminal to ask on.
    public let askSecret: (@Sendable (_ prompt: String) -> String?)?
    /// Ctrl-C and `SIGTERM`: the process's, or a test's.
    public let interruptions: Interruptions

    public init(
        output: ConsoleStream, errors: ConsoleStream, input: ConsoleInput, outputIsTerminal: Bool = false,
        errorsIsTerminal: Bool = false, environment: [String: String], directory: URL,
        askSecret: (@Sendable (_ prompt: String) -> String?)? = nil, interruptions: Interruptions = Interruptions()
    ) {
        self.output = output
        self.errors = errors
        self.input = input
        self.outputIsTerminal = outputIsTerminal
        self.errorsIsTerminal = errorsIsTerminal
        self.environment = environment
        self.directory = directory
        self.askSecret = askSecret
        self.interruptions = interruptions
    }

    /// The process's own standard streams, environment and working directory.
    public static var process: Console {
        let inputIsTerminal = isatty(STDIN_FILENO) != 0
        return Console(
            output: ConsoleStream(descriptor: STDOUT_FILENO), errors: ConsoleStream(descriptor: STDERR_FILENO),
            input: .descriptor(STDIN_FILENO, isTerminal: inputIsTerminal),
            outputIsTerminal: isatty(STDOUT_FILENO) != 0, errorsIsTerminal: isatty(STDERR_FILENO) != 0,
            environment: ProcessInfo.processInfo.environment,
            directory: URL(fileURLWithPath: FileManager.default.currentDirectoryPath),
            askSecret: inputIsTerminal ? askOnTerminal : nil, interruptions: .process)
    }

    /// Asks on the controlling terminal, without echo.
    @Sendable private static func askOnTerminal(_ prompt: String) -> String? {
        guard let typed = getpass(prompt) else { return nil }
        return String(cString: typed)
    }

    /// A console in memory: `input` as standard input (`nil`: a terminal with nothing typed), and what the command
    /// writes kept in `output` and `errors`, which stop taking bytes after `closeOutputAfter` as a reader that went
    /// away (`| head -c N`) does.
    public static func captured(
        input: Data? = nil, environment: [String: String], directory: URL, closeOutputAfter: Int? = nil
    ) -> Console {
        Console(
            output: ConsoleStream(capacity: closeOutputAfter), errors: ConsoleStream(capacity: nil),
            input: input.map(ConsoleInput.bytes) ?? .terminal, environment: environment, directory: directory)
    }

    /// `path` (`~` expanded) as a file URL, relative to `directory` unless absolute.
    public func file(_ path: String) -> URL {
        let expanded = (path as NSString).expandingTildeInPath
        return expanded.hasPrefix("/")
            ? URL(fileURLWithPath: expanded) : directory.appendingPathComponent(expanded).standardizedFileURL
    }

    /// The user's home folder: `$HOME`, else the account's.
    public var homeDirectory: URL {
        if let home = environment["HOME"], !home.isEmpty { return URL(fileURLWithPath: home) }
        return FileManager.default.homeDirectoryForCurrentUser
    }

    /// Writes `bonnet: <text>` as a line on standard error, where a failure to write is not worth more.
    public func warn(_ text: String) {
        try? errors.write(line: "bonnet: " + text)
    }
}

/// Standard output or error: a descriptor written in full, or bytes kept in memory.
public final class ConsoleStream: Sendable {
    private enum Sink {
        case descriptor(Int32)
        case memory(capacity: Int?)
    }

    private let sink: Sink
    private let kept = Mutex(Data())

    /// Writes to `descriptor`.
    public init(descriptor: Int32) {
        sink = .descriptor(descriptor)
    }

    /// Keeps what is written, at most `capacity` bytes (`nil`: all); beyond that, writing fails as a closed pipe.
    public init(capacity: Int?) {
        sink = .memory(capacity: capacity)
    }

    /// What was written to a stream in memory.
    public var bytes: Data { kept.withLock { $0 } }

    /// What was written to a stream in memory, as UTF-8.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    /// Writes all of `data`.
    ///
    /// - Throws: `CommandExit.readerWentAway` when the reader went away (a closed pipe), and a `CommandExit` with
    ///   status 1 for any other failure to write.
    public func write(_ data: Data) throws {
        switch sink {
        case let .descriptor(descriptor):
            do {
                try FileDescriptors.write(data, to: descriptor)
            } catch let error as POSIXError where error.code == .EPIPE {
                throw CommandExit.readerWentAway
            } catch {
                throw CommandExit(status: 1, message: "cannot write the output: \(error.localizedDescription)")
            }
        case let .memory(capacity):
            let whole = kept.withLock { kept in
                let room = capacity.map { max(0, $0 - kept.count) } ?? data.count
                kept.append(data.prefix(room))
                return room >= data.count
            }
            if !whole { throw CommandExit.readerWentAway }
        }
    }

    /// Writes `text` as UTF-8, then `terminator`.
    public func write(_ text: String, terminator: String = "") throws {
        try write(Data((text + terminator).utf8))
    }

    /// Writes `text` and a newline.
    public func write(line text: String) throws {
        try write(text, terminator: "\n")
    }
}

/// Standard input: a descriptor (a terminal, or something piped in), bytes in memory, or a terminal where nothing is
/// typed. A request body is never read from a terminal; lines (`bonnet ws`) are read from any descriptor.
public final class ConsoleInput: Sendable {
    private enum Source {
        case terminal
        case descriptor(Int32, isTerminal: Bool)
        case bytes(Data)
    }

    private let source: Source
    /// For lines: what was read past the last line handed out, how much of it is known to hold no line end, and
    /// whether the input ended.
    private let pending = Mutex((buffer: Data(), offset: 0, searched: 0, ended: false))

    private init(_ source: Source) {
        self.source = source
    }

    /// A terminal where nothing is typed: no body is piped in, and there are no lines.
    public static let terminal = ConsoleInput(.terminal)

    /// Reads `descriptor`, a terminal or not.
    public static func descriptor(_ descriptor: Int32, isTerminal: Bool = false) -> ConsoleInput {
        ConsoleInput(.descriptor(descriptor, isTerminal: isTerminal))
    }

    /// `data`, as if piped in.
    public static func bytes(_ data: Data) -> ConsoleInput { ConsoleInput(.bytes(data)) }

    /// Whether the input is a terminal rather than something piped in.
    public var isTerminal: Bool {
        switch source {
        case .terminal: true
        case let .descriptor(_, isTerminal): isTerminal
        case .bytes: false
        }
    }

    /// Up to `limit` bytes of the input, and whether it ended within them; `nil` from a terminal.
    func readPrefix(upTo limit: Int) -> (Data, ended: Bool)? {
        switch source {
        case .terminal, .descriptor(_, isTerminal: true):
            return nil
        case let .bytes(data):
            return (Data(data.prefix(limit)), ended: data.count <= limit)
        case let .descriptor(descriptor, _):
            var prefix = Data()
            var buffer = [UInt8](repeating: 0, count: 64 * 1024)
            while prefix.count < limit {
                let count = buffer.withUnsafeMutableBytes {
                    read(descriptor, $0.baseAddress, min($0.count, limit - prefix.count))
                }
                if count < 0, errno == EINTR { continue }
                if count <= 0 { return (prefix, ended: true) }
                prefix.append(contentsOf: buffer[..<count])
            }
            return (prefix, ended: false)
        }
    }

    /// The whole input as a stream, of which `prefix` was read already (`readPrefix(upTo:)`).
    func remainder(after prefix: Data) -> InputStream {
        switch source {
        case let .descriptor(descriptor, _):
            return DescriptorInputStream(prefix: prefix, descriptor: descriptor)
        case let .bytes(data):
            return InputStream(data: data)
        case .terminal:
            return InputStream(data: prefix)
        }
    }

    /// All of the input, read to its end; `nil` from a terminal.
    public func readAll() -> Data? {
        switch source {
        case .terminal, .descriptor(_, isTerminal: true): nil
        case let .descriptor(descriptor, _):
            FileHandle(fileDescriptor: descriptor, closeOnDealloc: false).readDataToEndOfFile()
        case let .bytes(data): data
        }
    }

    /// The next line without its line end, or `nil` at the end of the input (at once from a terminal where nothing
    /// is typed). One reader at a time: it waits for the input while holding the state.
    public func readLine() -> String? {
        readLineBytes().map { String(decoding: $0, as: UTF8.self) }
    }

    /// The next line's bytes as they came, without its line end (`\n` or `\r\n`), or `nil` at the end of the
    /// input: `bonnet ws --binary` sends them untouched. A long line costs time linear in its length: each piece read
    /// is searched for the line end once.
    public func readLineBytes() -> Data? {
        pending.withLock { state in
            while true {
                let start = state.buffer.startIndex + state.offset
                let unread = state.buffer[start...]
                if let newline = unread[(start + state.searched)...].firstIndex(of: 0x0A) {
                    state.offset = newline + 1 - state.buffer.startIndex
                    state.searched = 0
                    var line = unread[..<newline]
                    if line.last == 0x0D { line = line.dropLast() }
                    return Data(line)
                }
                state.searched = unread.count
                if state.ended {
                    state.buffer = Data()
                    state.offset = 0
                    state.searched = 0
                    return unread.isEmpty ? nil : Data(unread)
                }
                if state.offset > 0 {
                    state.buffer = Data(unread)
                    state.offset = 0
                }
                switch source {
                case .terminal:
                    state.ended = true
                case let .bytes(data):
                    state.buffer.append(data)
                    state.ended = true
                case let .descriptor(descriptor, _):
                    let piece = FileHandle(fileDescriptor: descriptor, closeOnDealloc: false).availableData
                    if piece.isEmpty { state.ended = true } else { state.buffer.append(piece) }
                }
            }
        }
    }
}
