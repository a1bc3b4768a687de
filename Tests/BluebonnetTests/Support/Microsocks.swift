import Foundation
import XCTest

/// A real SOCKS5 proxy for interop tests: Debian's microsocks on a free loopback port, stopped with the test.
///
/// Without the binary the test is skipped, unless `BLUEBONNET_REQUIRE_PROXY` is set (`.ci/run` sets it and installs
/// microsocks), when it fails.
final class Microsocks {
    let port: Int
    private let pid: pid_t
    private let directory: TemporaryDirectory
    private var log: URL { directory.url.appendingPathComponent("microsocks.log") }

    /// Starts the proxy; with `credentials`, it demands SOCKS5 user/password authentication.
    init(credentials: (user: String, password: String)? = nil) throws {
        guard
            let binary = ["/usr/bin/microsocks", "/usr/local/bin/microsocks"].first(
                where: FileManager.default.isExecutableFile(atPath:))
        else {
            if ProcessInfo.processInfo.environment["BLUEBONNET_REQUIRE_PROXY"] != nil {
                throw CocoaError(
                    .fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "microsocks is required but not installed"])
            }
            throw XCTSkip("microsocks is not installed (apt-get install microsocks)")
        }
        directory = try TemporaryDirectory()
        port = try LocalDaemon.freePort()
        var arguments = ["-i", "127.0.0.1", "-p", "\(port)"]
        if let credentials { arguments += ["-u", credentials.user, "-P", credentials.password] }
        pid = try LocalDaemon.spawn(
            binary, arguments, output: directory.url.appendingPathComponent("microsocks.log").path)
        try LocalDaemon.waitUntilListening(port: port, pid: pid, name: "microsocks")
    }

    deinit {
        LocalDaemon.stop(pid)
    }

    /// The `connectionProxyDictionary` that sends everything through this proxy.
    func dictionary(exceptions: [String] = []) -> [AnyHashable: Any] {
        var dictionary: [AnyHashable: Any] = ["SOCKSEnable": 1, "SOCKSProxy": "127.0.0.1", "SOCKSPort": port]
        if !exceptions.isEmpty { dictionary["ExceptionsList"] = exceptions }
        return dictionary
    }

    /// The targets the proxy connected to, as `host:port`.
    var connections: [String] {
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let range = line.range(of: ": connected to ") else { return nil }
            return String(line[range.upperBound...])
        }
    }
}
