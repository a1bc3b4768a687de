import ArgumentParser
import BluebonnetTestServer
import Foundation

/// `bonnet serve`: the embedded httpbin-style test server in the foreground.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Run the embedded httpbin-style test server until interrupted."
    )

    @Option(name: .long, help: "Port to listen on (0 picks a free one).")
    var port: Int = 8080

    @Option(name: .long, help: "Address to bind.")
    var host: String = "127.0.0.1"

    @Option(
        name: .long,
        help: "Also serve the WebSocket test routes (/echo, /messages, /close, ...) on this port (0 picks a free one).")
    var websocketPort: Int?

    func run() async throws {
        let host = self.host
        if let websocketPort {
            let sockets = try await WebSocketServer.start(host: host, port: websocketPort)
            FileHandle.standardOutput.write(
                Data("Bluebonnet WebSocket test server listening on \(sockets.baseURL.absoluteString)\n".utf8))
        }
        try await TestServer.run(host: host, port: port) { bound in
            FileHandle.standardOutput.write(
                Data("Bluebonnet test server listening on http://\(host):\(bound) (Ctrl-C stops it)\n".utf8))
        }
    }
}
