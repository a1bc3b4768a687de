import Foundation

/// A real server of the machine's (tinyproxy, microsocks) run for a test: started on a free loopback port with every
/// signal unblocked, waited for, and killed with the test.
enum LocalDaemon {
    /// Starts `path` with every signal unblocked and at its default. `Process` would pass on the mask of the
    /// spawning thread, and Swift's worker threads block nearly every signal: tinyproxy then stalls tunnels at
    /// random and never hears SIGTERM.
    static func spawn(_ path: String, _ arguments: [String], output: String = "/dev/null") throws -> pid_t {
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
        posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EINVAL) }
        return pid
    }

    /// Waits (up to 30 s, a hang guard) until `port` accepts connections, or the process exits.
    static func waitUntilListening(port: Int, pid: pid_t, name: String) throws {
        let deadline = Date().addingTimeInterval(30)
        while Date() < deadline {
            if accepts(port) { return }
            var status: Int32 = 0
            guard waitpid(pid, &status, WNOHANG) == 0 else { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        throw CocoaError(
            .fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "\(name) did not start on port \(port)"])
    }

    /// Kills the process and reaps it.
    static func stop(_ pid: pid_t) {
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
    }

    static func accepts(_ port: Int) -> Bool {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }

    static func freePort() throws -> Int {
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
