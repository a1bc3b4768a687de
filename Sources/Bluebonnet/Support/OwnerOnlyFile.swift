import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Files only their owner can read: what the library keeps on disk (cache entries) may hold what a user would not
/// show every other local account.
enum OwnerOnlyFile {
    /// Writes `data` to a new file at `url`, made with mode 0600 from the start (never readable by others, not even
    /// for a moment), never through a symbolic link and never over an existing file.
    ///
    /// - Throws: `POSIXError` with the system's reason.
    static func create(_ data: Data, at url: URL) throws {
        let descriptor = url.withUnsafeFileSystemRepresentation { path in
            path.map { open($0, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600) } ?? -1
        }
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(descriptor) }
        try writeAll(data, to: descriptor)
    }

    /// Writes all of `data` to `descriptor`, across short writes and interruptions.
    ///
    /// - Throws: `POSIXError` with the system's reason.
    static func writeAll(_ data: Data, to descriptor: Int32) throws {
        try data.withUnsafeBytes { buffer in
            guard var pointer = buffer.baseAddress else { return }
            var remaining = buffer.count
            while remaining > 0 {
                let written = write(descriptor, pointer, remaining)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                }
                remaining -= written
                pointer += written
            }
        }
    }

    /// Makes `directory` (and its parents) if missing; the ones made are owner-only (0700).
    static func makeDirectory(_ directory: URL) throws {
        try FileManager.default.createDirectory(
            at: directory, withIntermediateDirectories: true,
            attributes: [.posixPermissions: 0o700])
    }

    /// Takes read and write access away from everyone but the owner of `url`, if it grants any.
    static func restrict(_ url: URL) {
        url.withUnsafeFileSystemRepresentation { path in
            guard let path else { return }
            var status = stat()
            guard lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG, status.st_mode & 0o077 != 0 else {
                return
            }
            _ = chmod(path, status.st_mode & 0o700)
        }
    }
}
