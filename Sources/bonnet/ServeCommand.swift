import ArgumentParser
import BluebonnetTestServer
import BonnetKit
import Foundation

/// `bonnet serve`: the embedded httpbin-style test server in the foreground.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the embedded httpbin-style test server until interrupted."
    )

    @Option(name: .long, help: "Port to listen on, 1 to 65535 (0 picks a free one).")
    var port: Int = 8080

    @Option(name: .long, help: "Address to bind.")
    var host: String = "127.0.0.1"

    @Option(
        name: .long,
        help: "Also serve the WebSocket test routes (/echo, /messages, /close, ...) on this port (0 picks a free one).")
    var websocketPort: Int?

    func validate() throws {
        for (name, value) in [("--port", port), ("--websocket-port", websocketPort)] {
            guard let value, !(0...65535).contains(value) else { continue }
            throw ValidationError("\(name) takes a port from 1 to 65535, or 0 for a free one; \(value) is none")
        }
    }

    func run() async throws {
        let host = self.host
        // The banner is for a person; a reader that went away (`| true`) is no reason to stop serving.
        let output = ConsoleStream(descriptor: STDOUT_FILENO)
        if let websocketPort {
            let sockets = try await listening(on: websocketPort) {
                try await WebSocketServer.start(host: host, port: websocketPort)
            }
            try? output.write(line: "Bluebonnet WebSocket test server listening on \(sockets.baseURL.absoluteString)")
        }
        try await listening(on: port) {
            try await TestServer.run(host: host, port: port) { bound in
                try? output.write(line: "Bluebonnet test server listening on http://\(host):\(bound) (Ctrl-C stops it)")
            }
        }
    }

    /// Runs `body`, which starts a server on `port`, saying in a person's words why it could not listen.
    private func listening<T>(on port: Int, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            let reason = TestServer.listeningFailure(error, host: host, port: port) ?? "\(error)"
            throw CommandExit(status: 1, message: "cannot serve on \(host):\(port): \(reason)")
        }
    }
}
