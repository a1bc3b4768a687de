import ArgumentParser
import Bluebonnet
import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `bonnet ws URL`: a WebSocket from the command line, as websocat does it. Each line of standard input is sent as a
/// message; each message received is written to standard output (text with a newline, binary as its bytes). At the
/// end of the input the socket is closed (1000) and the server's answer awaited.
public struct WebSocketCommand: ConsoleCommand {
    public static let configuration = CommandConfiguration(
        commandName: "ws",
        abstract: "Open a WebSocket: lines from standard input are sent, messages received are written out.",
        discussion: """
            bonnet ws wss://example.com/socket [Header:value ...]. The end of the input closes the socket with 1000 and \
            waits for the server's close; the server's own close code, when not 1000, is said on standard error. Exit \
            status: 0 after a close handshake, 1 when the socket failed, 2 when the upgrade timed out.
            """,
        helpNames: [.long]
    )

    @Argument(help: "The ws://, wss://, http:// or https:// URL.")
    var url: String

    @Argument(
        help: "Items for the upgrade request, as for requests: Header:value, Header: (leave out), name==value (query).")
    var items: [String] = []

    @Flag(name: .long, help: "Send each line of input as a binary message (text messages by default).")
    var binary = false

    @Option(
        name: .long,
        help: ArgumentHelp("A subprotocol to offer; repeat for several, most preferred first.", valueName: "name"))
    var subprotocol: [String] = []

    @OptionGroup(title: "Authentication") var authentication: AuthOptions

    @Option(name: .long, help: ArgumentHelp("The largest message accepted, in bytes (1 MiB).", valueName: "bytes"))
    var maxMessageSize = 1 << 20

    @Option(name: .long, help: ArgumentHelp("Send a ping every this many seconds.", valueName: "seconds"))
    var pingInterval: Double?

    @Flag(name: .long, help: "Do not offer permessage-deflate compression.")
    var noCompression = false

    @Option(name: .long, help: ArgumentHelp("Seconds the upgrade may take (60).", valueName: "seconds"))
    var timeout: Double?

    @Flag(name: [.customShort("q"), .long], help: "Say nothing on standard error but errors.")
    var quiet = false

    @OptionGroup(title: "Connection") var connection: ConnectionOptions

    public init() {}

    public func run(console: Console) async throws {
        let items: RequestItems
        do {
            items = try RequestItems(self.items, in: console)
        } catch {
            throw ValidationError("\(error)")
        }
        guard items.fields.isEmpty, items.files.isEmpty else {
            throw ValidationError("bonnet ws takes Header:value and name==value items only: a socket has no body")
        }
        let configuration = URLSessionConfiguration.af.default
        var defaults = HTTPHeaders.default
        for name in items.removedHeaders { defaults.remove(name: name) }
        configuration.headers = defaults
        if let timeout, timeout > 0 { configuration.timeoutIntervalForRequest = timeout }
        configuration.connectionProxyDictionary = try connection.proxyDictionary(environment: console.environment)
        let (trustManager, tls) = try connection.tlsChoices(in: console)
        let session = Session(configuration: configuration, serverTrustManager: trustManager, tls: tls)

        guard var components = URLComponents(string: url), components.host?.isEmpty == false else {
            throw ValidationError("\(url) is not a URL with a host")
        }
        if !items.query.isEmpty {
            let added = items.encodedQuery
            components.percentEncodedQuery = components.percentEncodedQuery.map { "\($0)&\(added)" } ?? added
        }
        guard let target = components.url else { throw ValidationError("\(url) is not a URL with a host") }
        var request = URLRequest(url: target)
        for header in items.headers { request.headers.add(header) }
        var credential: URLCredential?
        if let auth = authentication.auth {
            do {
                switch try AuthOption(auth, type: authentication.authType, askPassword: console.askPassword) {
                case let .header(header): request.headers.add(header)
                case let .challenge(challenge): credential = challenge
                }
            } catch {
                throw ValidationError("\(error)")
            }
        } else if request.value(forHTTPHeaderField: "Authorization") == nil,
            let header = authentication.netrcHeader(for: target, in: console)
        {
            request.headers.add(header)
        }
        let socket = session.webSocketRequest(
            performing: request,
            configuration: .init(
                protocol: subprotocol.isEmpty ? nil : subprotocol.joined(separator: ", "),
                maximumMessageSize: maxMessageSize, pingInterval: pingInterval, perMessageDeflate: !noCompression))
        if let credential { socket.authenticate(with: credential) }

        switch try await exchange(on: socket, console: console) {
        case .closed:
            if let close = socket.serverClose, close.code != 1000, !quiet {
                let text = close.reason.map { " (" + String(decoding: $0, as: UTF8.self) + ")" } ?? ""
                console.warn("the server closed the socket with \(close.code)\(text)")
            }
        case let .failed(error):
            throw CommandExit.failure(error)
        }
    }

    private enum Outcome: Sendable {
        case closed
        case failed(AFError)
    }

    /// Sends the input and writes what arrives until the socket ends.
    private func exchange(on socket: WebSocketRequest, console: Console) async throws -> Outcome {
        let closing = ClosingState()
        let binary = binary
        let task = socket.webSocketTask()
        for await event in task.streamingMessageEvents() {
            switch event.kind {
            case .connected:
                // Input is read off the socket's queues, a line at a time: each waits until the last was written.
                let input = console.input
                Thread.detachNewThread { Self.sendInput(input, on: socket, binary: binary, closing: closing) }
            case let .receivedMessage(.string(text)):
                try write(Data((text + "\n").utf8), to: console.output, closing: socket)
            case let .receivedMessage(.data(data)):
                try write(data, to: console.output, closing: socket)
            case .receivedMessage:
                break
            case .disconnected:
                break
            case let .completed(completion):
                if let error = completion.error, !error.isExplicitlyCancelledError || !closing.inputEnded {
                    return .failed(error)
                }
            case .serializerFailed:
                break
            }
        }
        return .closed
    }

    /// Writes a message out; when the reader went away, the socket is cancelled before the command ends.
    private func write(_ data: Data, to output: ConsoleStream, closing socket: WebSocketRequest) throws {
        do {
            try output.write(data)
        } catch {
            socket.cancel()
            throw error
        }
    }

    private static func sendInput(
        _ input: ConsoleInput, on socket: WebSocketRequest, binary: Bool, closing: ClosingState
    ) {
        let written = DispatchSemaphore(value: 0)
        // A line of `--binary` goes as its bytes, never decoded (a byte that is not UTF-8 stays itself).
        while let line = input.readLineBytes() {
            guard !socket.isFinished, !socket.isCancelled else { return }
            let message: URLSessionWebSocketTask.Message =
                binary ? .data(line) : .string(String(decoding: line, as: UTF8.self))
            socket.send(message, queue: .global()) { _ in written.signal() }
            written.wait()
        }
        closing.inputDidEnd()
        socket.close(sending: .normalClosure)
    }
}

/// Whether the input ended, which makes the cancellation of a socket that never answered the close no failure.
private final class ClosingState: Sendable {
    private let ended = Mutex(false)

    func inputDidEnd() {
        ended.withLock { $0 = true }
    }

    var inputEnded: Bool { ended.withLock { $0 } }
}
