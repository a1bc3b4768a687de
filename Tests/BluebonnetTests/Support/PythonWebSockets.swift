import Foundation
import XCTest

/// An independent WebSocket server for interop tests: Python's `websockets` (from PyPI), on a free loopback port,
/// stopped with the test. `/echo` sends every message back; `/greet` sends a text and a binary message, then closes
/// with 4000 and a reason.
///
/// The interpreter is `BLUEBONNET_WEBSOCKETS_PYTHON` (`.ci/run` installs `websockets` into a virtual environment and
/// sets it, with `BLUEBONNET_REQUIRE_WEBSOCKETS`), else `python3`. Without the module the test is skipped, unless
/// `BLUEBONNET_REQUIRE_WEBSOCKETS` is set, when it fails.
final class PythonWebSockets {
    let port: Int
    private let pid: pid_t
    private let directory: TemporaryDirectory

    static let script = """
        import asyncio, sys
        from websockets.asyncio.server import serve

        async def handler(socket):
            if socket.request.path.startswith("/greet"):
                await socket.send("hello from python")
                await socket.send(bytes([0, 1, 2, 255]))
                await socket.close(4000, "done")
            else:
                async for message in socket:
                    await socket.send(message)

        async def main():
            async with serve(handler, "127.0.0.1", int(sys.argv[1]), max_size=4 * 1024 * 1024):
                await asyncio.get_running_loop().create_future()

        asyncio.run(main())
        """

    init() throws {
        let environment = ProcessInfo.processInfo.environment
        let python = environment["BLUEBONNET_WEBSOCKETS_PYTHON"] ?? "/usr/bin/env"
        let prefix = environment["BLUEBONNET_WEBSOCKETS_PYTHON"] == nil ? ["python3"] : []
        guard Self.hasModule(python, prefix) else {
            if environment["BLUEBONNET_REQUIRE_WEBSOCKETS"] != nil {
                throw CocoaError(
                    .fileNoSuchFile,
                    userInfo: [NSLocalizedDescriptionKey: "Python's websockets is required but not installed"])
            }
            throw XCTSkip("Python's websockets is not installed (pip install websockets)")
        }
        directory = try TemporaryDirectory()
        let file = directory.url.appendingPathComponent("server.py")
        try Data(Self.script.utf8).write(to: file)
        port = try LocalDaemon.freePort()
        pid = try LocalDaemon.spawn(
            python, prefix + [file.path, "\(port)"], output: directory.url.appendingPathComponent("server.log").path)
        try LocalDaemon.waitUntilListening(port: port, pid: pid, name: "websockets")
    }

    deinit {
        LocalDaemon.stop(pid)
    }

    /// `ws://127.0.0.1:<port><path>`.
    func url(_ path: String) -> URL {
        URL(string: "ws://127.0.0.1:\(port)\(path)")!
    }

    private static func hasModule(_ python: String, _ prefix: [String]) -> Bool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = prefix + ["-c", "import websockets.asyncio.server"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return false }
        process.waitUntilExit()
        return process.terminationStatus == 0
    }
}
