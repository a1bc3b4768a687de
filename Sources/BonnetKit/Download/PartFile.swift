import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A download's body on its way to the user's file, written beside it (`.NAME.bonnet-UUID.part`, in the same folder,
/// so a rename is atomic): the file itself is touched only once the body is in hand.
final class PartFile {
    let url: URL
    private var descriptor: Int32

    /// Makes a new, empty file beside `target` (and `target`'s folder, if missing), with the user's umask.
    init(beside target: URL) throws {
        let folder = target.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        url = folder.appendingPathComponent(".\(target.lastPathComponent).bonnet-\(UUID().uuidString).part")
        descriptor = url.withUnsafeFileSystemRepresentation { path in
            path.map { open($0, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666) } ?? -1
        }
        guard descriptor >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Appends `data`.
    func write(_ data: Data) throws {
        try Self.write(data, to: descriptor)
    }

    /// Moves the whole body over `target` in one rename.
    func replace(_ target: URL) throws {
        try finish()
        guard rename(url.path, target.path) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    /// Appends the body to `target`, which holds what came before it, then removes this file.
    func append(to target: URL) throws {
        try finish()
        defer { discard() }
        let reader = try FileHandle(forReadingFrom: url)
        defer { try? reader.close() }
        let output = target.withUnsafeFileSystemRepresentation { path in
            path.map { open($0, O_WRONLY | O_APPEND | O_CLOEXEC) } ?? -1
        }
        guard output >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(output) }
        while let piece = try reader.read(upToCount: 1024 * 1024), !piece.isEmpty {
            try Self.write(piece, to: output)
        }
    }

    /// Removes the file.
    func discard() {
        try? finish()
        try? FileManager.default.removeItem(at: url)
    }

    private func finish() throws {
        guard descriptor >= 0 else { return }
        let closed = close(descriptor)
        descriptor = -1
        guard closed == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    /// Writes all of `data`, across short writes and interruptions.
    static func write(_ data: Data, to descriptor: Int32) throws {
        try data.withUnsafeBytes { buffer in
            guard var pointer = buffer.baseAddress else { return }
            var remaining = buffer.count
            while remaining > 0 {
                let written = Glibc.write(descriptor, pointer, remaining)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                }
                remaining -= written
                pointer += written
            }
        }
    }
}
