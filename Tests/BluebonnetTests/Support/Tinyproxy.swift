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

    /// - Parameters:
    ///   - credentials:  Basic credentials the proxy demands.
    ///   - connectPorts: The only ports it opens `CONNECT` tunnels to (squid allows 443 only); every port when empty.
    init(credentials: (user: String, password: String)? = nil, connectPorts: [Int] = []) throws {
        guard
            let binary = ["/usr/bin/tinyproxy", "/usr/sbin/tinyproxy", "/usr/local/bin/tinyproxy"]
                .first(where: FileManager.default.isExecutableFile(atPath:))
        else {
            if ProcessInfo.processInfo.environment["BLUEBONNET_REQUIRE_PROXY"] != nil {
                throw CocoaError(
                    .fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "tinyproxy is required but not installed"])
            }
            throw XCTSkip("tinyproxy is not installed (apt-get install tinyproxy)")
        }
        directory = try TemporaryDirectory()
        port = try LocalDaemon.freePort()
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
        lines += connectPorts.map { "ConnectPort \($0)" }
        let configuration = directory.url.appendingPathComponent("tinyproxy.conf")
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: configuration)
        pid = try LocalDaemon.spawn(binary, ["-d", "-c", configuration.path])
        try LocalDaemon.waitUntilListening(port: port, pid: pid, name: "tinyproxy")
    }

    deinit {
        LocalDaemon.stop(pid)
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

    /// The requests the proxy took to forward, in absolute form, as `METHOD target`.
    var forwarded: [String] {
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "Request (file descriptor "),
                let start = line[range.upperBound...].range(of: "): ")
            else { return nil }
            let words = line[start.upperBound...].split(separator: " ")
            guard words.count == 3, words[0] != "CONNECT" else { return nil }
            return "\(words[0]) \(words[1])"
        }
    }

    /// The `CONNECT` requests the proxy logged, as `host:port`.
    var tunnels: [String] {
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: "): CONNECT ") else { return nil }
            return line[range.upperBound...].split(separator: " ").first.map(String.init)
        }
    }
}
