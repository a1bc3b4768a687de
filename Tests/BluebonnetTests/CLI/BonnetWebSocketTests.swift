import BluebonnetTestServer
import Foundation
import XCTest

/// `bonnet ws`, as websocat is used: lines in, messages out, the close, headers, credentials, subprotocols, TLS.
extension BonnetCommandTests {
    private func webSocketServer(tls: TestCertificates? = nil) async throws -> WebSocketServer {
        try await WebSocketServer.start(
            tls: try tls.map { try $0.serverConfiguration(presenting: $0.leaf, chain: [$0.intermediate]) })
    }

    func testWebSocketLinesAreSentAndMessagesWrittenOut() async throws {
        let server = try await webSocketServer()
        let run = try await bonnet(["ws", server.url("/echo").absoluteString], stdin: Data("one\ntwo\nthrée\n".utf8))

        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertEqual(run.output, "one\ntwo\nthrée\n")
        XCTAssertEqual(run.errors, "")
        XCTAssertEqual(server.closeCodesReceived, [1000], "the end of the input closes with 1000")
        await server.stop()
    }

    func testWebSocketBinaryMessagesAreWrittenAsTheirBytes() async throws {
        let server = try await webSocketServer()
        let run = try await bonnet(
            ["ws", "--binary", server.url("/echo").absoluteString], stdin: Data("ab\ncd\n".utf8))

        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertEqual(run.output, "abcd", "binary messages have no newline added")
        await server.stop()
    }

    /// Issue 43, item 11: `--binary` decoded each line as UTF-8, so `ff` went out as `ef bf bd`.
    func testWebSocketBinaryLinesGoOutAsTheirBytes() async throws {
        let server = try await webSocketServer()
        let bytes = Data([0x61, 0xFF, 0x00, 0xC3, 0x0A, 0x80, 0xFE, 0x0A])
        let run = try await bonnet(["ws", "--binary", server.url("/echo").absoluteString], stdin: bytes)
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertEqual(run.data, Data([0x61, 0xFF, 0x00, 0xC3, 0x80, 0xFE]))
        await server.stop()
    }

    /// Issue 43, item 11: closing at the end of the input lost the last echo a quarter of the time.
    func testEveryEchoArrivesBeforeTheSocketCloses() async throws {
        let server = try await webSocketServer()
        for round in 0..<20 {
            let run = try await bonnet(["ws", server.url("/echo").absoluteString], stdin: Data("a\nb\nlast\n".utf8))
            XCTAssertEqual(run.status, 0, run.errors)
            XCTAssertEqual(run.output, "a\nb\nlast\n", "round \(round)")
        }
        await server.stop()
    }

    func testWebSocketServersCloseCodeIsSaid() async throws {
        let server = try await webSocketServer()
        let run = try await bonnet(["ws", server.url("/close?code=4001&reason=bye").absoluteString])

        XCTAssertEqual(run.status, 0)
        XCTAssertEqual(run.errors, "bonnet: the server closed the socket with 4001 (bye)\n")
        let quiet = try await bonnet(["ws", "-q", server.url("/close?code=4001").absoluteString])
        XCTAssertEqual(quiet.errors, "")
        await server.stop()
    }

    func testWebSocketHeadersCredentialsAndSubprotocols() async throws {
        let server = try await webSocketServer()
        let run = try await bonnet([
            "ws", "-a", "walker:s3cret", "--subprotocol", "superchat", "--subprotocol", "chat",
            server.url("/basic-auth/walker/s3cret").absoluteString, "X-Trace:abc", "X-Trace:def", "User-Agent:",
            "lang==fr",
        ])

        XCTAssertEqual(run.status, 0, run.errors)
        let head = try XCTUnwrap(server.upgradeHeads.last)
        for line in [
            "GET /basic-auth/walker/s3cret?lang=fr", "X-Trace: abc, def", "Authorization: Basic d2Fsa2VyOnMzY3JldA==",
            "Sec-WebSocket-Protocol: superchat, chat",
        ] {
            XCTAssertTrue(head.contains(line), "\(line) missing from \(head)")
        }
        XCTAssertFalse(head.contains("User-Agent"), "User-Agent: leaves the default out")
        let body = try await bonnet(["ws", server.url("/echo").absoluteString, "name=value"])
        XCTAssertEqual(body.status, 1)
        XCTAssertTrue(body.errors.contains("a socket has no body"), body.errors)
        let refused = try await bonnet([
            "ws", "-a", "walker:wrong", server.url("/basic-auth/walker/s3cret").absoluteString,
        ])
        XCTAssertEqual(refused.status, 1, refused.errors)
        XCTAssertTrue(refused.errors.hasPrefix("bonnet: error: "), refused.errors)
        await server.stop()
    }

    func testWebSocketOverTLSWithTheGivenRoots() async throws {
        let certificates = try TestCertificates()
        let server = try await webSocketServer(tls: certificates)
        let directory = try TemporaryDirectory()
        let root = directory.url.appendingPathComponent("root.pem")
        try Data(certificates.root.pem.utf8).write(to: root)

        let trusted = try await bonnet(
            ["ws", "--verify", root.path, server.url("/echo").absoluteString], stdin: Data("x\n".utf8))
        XCTAssertEqual(trusted.status, 0, trusted.errors)
        XCTAssertEqual(trusted.output, "x\n")
        let untrusted = try await bonnet(["ws", server.url("/echo").absoluteString], stdin: Data("x\n".utf8))
        XCTAssertEqual(untrusted.status, 1)
        XCTAssertEqual(untrusted.output, "")
        await server.stop()
    }

    func testWebSocketFailuresExitWithOne() async throws {
        let server = try await webSocketServer()
        let tooLarge = try await bonnet(["ws", "--max-message-size", "10", server.url("/big?size=100").absoluteString])
        XCTAssertEqual(tooLarge.status, 1)
        XCTAssertTrue(tooLarge.errors.contains("10 bytes"), tooLarge.errors)
        let port = server.port
        await server.stop()
        let refused = try await bonnet(["ws", "ws://127.0.0.1:\(port)/echo"])
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.errors.contains("could not connect"), refused.errors)
    }
}

extension BonnetProcessTests {
    func testServeOffersTheWebSocketRoutes() async throws {
        let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("bonnet")
        let serve = Process()
        serve.executableURL = binary
        serve.arguments = ["serve", "--port", "0", "--websocket-port", "0"]
        let output = Pipe()
        serve.standardOutput = output
        try serve.run()
        defer {
            serve.terminate()
            serve.waitUntilExit()
        }
        // The first line names the socket's address; read until it is whole.
        var text = ""
        let deadline = Date().addingTimeInterval(20)
        while !text.contains("\n"), Date() < deadline {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let line = try XCTUnwrap(text.split(separator: "\n").first.map(String.init))
        let prefix = "Bluebonnet WebSocket test server listening on "
        XCTAssertTrue(line.hasPrefix(prefix), line)
        let base = String(line.dropFirst(prefix.count))
        let run = try bonnet(["ws", base + "/echo"], stdin: Data("served\n".utf8))
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertEqual(run.output, "served\n")
    }
}
