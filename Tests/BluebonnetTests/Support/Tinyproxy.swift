import Foundation
import XCTest

/// A real forward proxy for interop tests: Debian's tinyproxy, started on a free loopback port with a
/// configuration of the test's own (optionally Basic credentials), and stopped with the test.
///
/// Without the binary the test is skipped, unless `BLUEBONNET_REQUIRE_PROXY` is set (`.ci/run` sets it and installs
/// tinyproxy), when it fails.
final class Tinyproxy {
    let port: Int
    private let pid: pid_t
    private let directory: TemporaryDirectory
    private var log: URL { directory.url.appendingPathComponent("tinyproxy.log") }

    init(credentials: (user: String, password: String)? = nil) throws {
        guard let binary = ["/usr/bin/tinyproxy", "/usr/sbin/tinyproxy", "/usr/local/bin/tinyproxy"]
            .first(where: FileManager.default.isExecutableFile(atPath:)) else {
            if ProcessInfo.processInfo.environment["BLUEBONNET_REQUIRE_PROXY"] != nil {
                throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "tinyproxy is required but not installed"])
            }
            throw XCTSkip("tinyproxy is not installed (apt-get install tinyproxy)")
        }
        directory = try TemporaryDirectory()
        port = try Self.freePort()
        var lines = [
            "Port \(port)", "Listen 127.0.0.1", "Timeout 30", "MaxClients 200", "Allow 127.0.0.1",
            "LogFile \"\(directory.url.appendingPathComponent("tinyproxy.log").path)\"", "LogLevel Info",
            "PidFile \"\(directory.url.appendingPathComponent("tinyproxy.pid").path)\"", "DisableViaHeader Yes",
        ]
        // tinyproxy drops root privileges to these; the files it writes live in a folder they may write.
        if getuid() == 0 {
            lines += ["User nobody", "Group nogroup"]
            chmod(directory.url.path, 0o777)
        }
        if let credentials { lines.append("BasicAuth \(credentials.user) \(credentials.password)") }
        let configuration = directory.url.appendingPathComponent("tinyproxy.conf")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: configuration)
        pid = try Self.spawn(binary, ["-d", "-c", configuration.path])
        try waitUntilListening()
    }

    deinit {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }

    /// Starts `path` with every signal unblocked and at its default. `Process` would pass on the mask of the
    /// spawning thread, and Swift's worker threads block nearly every signal: tinyproxy then stalls tunnels at
    /// random and never hears SIGTERM.
    private static func spawn(_ path: String, _ arguments: [String]) throws -> pid_t {
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EINVAL) }
        return pid
    }

    /// The `connectionProxyDictionary` that sends `http` and `https` URLs through this proxy.
    func dictionary(user: String? = nil, password: String? = nil, exceptions: [String] = []) -> [AnyHashable: Any] {
        var dictionary: [AnyHashable: Any] = [
            "HTTPEnable": 1, "HTTPProxy": "127.0.0.1", "HTTPPort": port,
            "HTTPSEnable": 1, "HTTPSProxy": "127.0.0.1", "HTTPSPort": port,
        ]
        if let user { dictionary["kCFProxyUsernameKey"] = user }
        if let password { dictionary["kCFProxyPasswordKey"] = password }
        if !exceptions.isEmpty { dictionary["ExceptionsList"] = exceptions }
        return dictionary
    }

    /// The `CONNECT` requests the proxy logged, as `host:port`.
    var tunnels: [String] {
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "): CONNECT ") else { return nil }
            return line[range.upperBound...].split(separator: " ").first.map(String.init)
        }
    }

    private func waitUntilListening() throws {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if Self.accepts(port) { return }
            var status: Int32 = 0
            guard waitpid(pid, &status, WNOHANG) == 0 else { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "tinyproxy did not start on port \(port)"])
    }

    private static func accepts(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    private static func freePort() throws -> Int {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Bool in
                bind(descriptor, pointer, length) == 0 && getsockname(descriptor, pointer, &length) == 0
            }
        }
        guard bound else { throw CocoaError(.fileWriteUnknown) }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
