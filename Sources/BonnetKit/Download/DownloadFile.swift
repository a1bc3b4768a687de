import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What is at a download's path before anything is written, and so how the body may go there without losing
/// anything of the user's.
enum DownloadTarget: Equatable {
    /// Nothing: the body is written straight into a new file, so a download cut or interrupted leaves what arrived
    /// where `--continue` finds it.
    case new(URL)
    /// A regular file of `size` bytes: a whole body replaces it by one rename (keeping its mode and owner), a
    /// resume appends to it.
    case regular(URL, size: Int64, mode: mode_t, owner: uid_t, group: gid_t)
    /// A FIFO or a device (`/dev/null`, `/dev/stdout`): written through, in place, as curl and httpie do; never
    /// replaced.
    case special(URL, kind: String)

    /// Why the body cannot go to a path.
    struct Refusal: Error, Equatable {
        let message: String
    }

    /// The path the body is written to.
    var url: URL {
        switch self {
        case let .new(url), let .regular(url, _, _, _, _), let .special(url, _): url
        }
    }

    /// The bytes already there that a resume continues (0 unless a regular file).
    var size: Int64 {
        if case let .regular(_, size, _, _, _) = self { return size }
        return 0
    }

    /// Looks at `url` (following a symbolic link to the file it names: the link stays, its file is written). A
    /// folder, a socket, a dangling link and a missing parent folder are refused: nothing is ever created but the
    /// file itself.
    static func inspect(_ url: URL) throws(Refusal) -> DownloadTarget {
        var status = stat()
        guard lstat(url.path, &status) == 0 else {
            guard errno == ENOENT else { throw Refusal(message: "cannot use \(url.path): \(describeErrno())") }
            let folder = url.deletingLastPathComponent()
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: folder.path, isDirectory: &isFolder), isFolder.boolValue
            else {
                throw Refusal(message: "the folder \(folder.path) does not exist; nothing saved")
            }
            return .new(url)
        }
        if status.st_mode & S_IFMT == S_IFLNK {
            guard let resolved = realpath(url.path, nil) else {
                throw Refusal(message: "\(url.path) is a symbolic link to a file that does not exist; nothing saved")
            }
            defer { free(resolved) }
            return try inspect(URL(fileURLWithPath: String(cString: resolved)))
        }
        switch status.st_mode & S_IFMT {
        case S_IFREG:
            return .regular(
                url, size: Int64(status.st_size), mode: status.st_mode & 0o7777, owner: status.st_uid,
                group: status.st_gid)
        case S_IFIFO:
            return .special(url, kind: "a FIFO")
        case S_IFCHR, S_IFBLK:
            return .special(url, kind: "a device")
        case S_IFDIR:
            throw Refusal(message: "\(url.path) is a folder; name a file with -o, or drop -o to save in this folder")
        default:
            throw Refusal(message: "\(url.path) is a socket, which cannot be written to; nothing saved")
        }
    }

    static func describeErrno() -> String {
        String(cString: strerror(errno))
    }
}

/// A download's body on its way into its file, written so that nothing of the user's is lost:
/// - a new file is written in place, and a cut or interrupted body is left there for `--continue`;
/// - a resume appends to the partial file as bytes arrive, so whatever arrives is kept;
/// - a regular file is replaced only by a whole body, written beside it (`.NAME.bonnet-XXXXXXXX.part`, in the same
///   folder so the rename is atomic) and renamed over it with the old file's mode and owner; a cut body is dropped
///   and the file left as it was, unless it was empty;
/// - a FIFO or a device is written through.
final class DownloadFile {
    let target: DownloadTarget
    let appending: Bool
    private var descriptor: Int32 = -1
    /// The file beside the target a replacing body is written to, once made.
    private var part: URL?
    /// Whether this run made the target (so an empty one can be taken back).
    private var created = false
    /// Bytes written so far.
    private(set) var written: Int64 = 0

    init(target: DownloadTarget, appending: Bool) {
        self.target = target
        self.appending = appending
    }

    deinit {
        if descriptor >= 0 { close(descriptor) }
    }

    /// Appends `data`, opening the file on the first call.
    func write(_ data: Data) throws {
        try open()
        try FileDescriptors.write(data, to: descriptor)
        written += Int64(data.count)
    }

    /// The body is whole: the file holds it (a replacing body is renamed over the target now).
    func commit() throws {
        try open()
        try closeDescriptor()
        guard let part else { return }
        self.part = nil
        guard rename(part.path, target.url.path) == 0 else {
            let reason = DownloadTarget.describeErrno()
            unlink(part.path)
            throw DownloadTarget.Refusal(message: "cannot replace \(target.url.path): \(reason); nothing saved")
        }
    }

    /// The body was cut short or interrupted: what arrived stays where `--continue` finds it when that loses nothing
    /// of the user's (a new or empty file, or a resume's appended bytes), and is dropped otherwise, leaving the file
    /// as it was. Nothing hidden is ever left behind. Returns whether the bytes that arrived were kept.
    func abandon() -> Bool {
        try? closeDescriptor()
        if let part {
            self.part = nil
            if case .regular(_, 0, _, _, _) = target, written > 0, rename(part.path, target.url.path) == 0 {
                return true
            }
            unlink(part.path)
            return false
        }
        if created, written == 0 {
            unlink(target.url.path)
            return false
        }
        if case .special = target { return false }
        return written > 0
    }

    private func open() throws {
        guard descriptor < 0 else { return }
        let path = target.url.path
        switch target {
        case .new:
            descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o666)
            created = descriptor >= 0
        case .regular where appending:
            descriptor = Glibc.open(path, O_WRONLY | O_APPEND | O_CLOEXEC)
        case let .regular(url, _, mode, owner, group):
            let name = Self.partName(for: url.lastPathComponent)
            let beside = url.deletingLastPathComponent().appendingPathComponent(name)
            descriptor = Glibc.open(beside.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if descriptor >= 0 {
                part = beside
                // The file keeps what it was: its mode, and (when allowed) its owner.
                if geteuid() == 0 { _ = fchown(descriptor, owner, group) }
                _ = fchmod(descriptor, mode)
            }
        case .special:
            descriptor = Glibc.open(path, O_WRONLY | O_CLOEXEC)
        }
        guard descriptor >= 0 else {
            let reason = DownloadTarget.describeErrno()
            throw DownloadTarget.Refusal(message: "cannot write \(path): \(reason); nothing saved")
        }
    }

    private func closeDescriptor() throws {
        guard descriptor >= 0 else { return }
        let closed = close(descriptor)
        descriptor = -1
        guard closed == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    }

    /// `.NAME.bonnet-XXXXXXXX.part`, NAME shortened so the whole fits a file name.
    static func partName(for name: String) -> String {
        let suffix = ".bonnet-\(String(UInt32.random(in: .min ... .max), radix: 16)).part"
        return "." + FileNames.fitting(name, within: FileNames.maximumLength - suffix.utf8.count - 1) + suffix
    }
}

/// File names a file system accepts.
enum FileNames {
    /// The longest name in bytes: Linux's `NAME_MAX`, what ext4, XFS and btrfs take.
    static let maximumLength = 255

    /// `name` shortened to at most `limit` bytes of UTF-8 on a character boundary, keeping its extension (up to 16
    /// bytes of it) after the shortened stem.
    static func fitting(_ name: String, within limit: Int) -> String {
        guard name.utf8.count > limit else { return name }
        let ext = (name as NSString).pathExtension
        let keepsExtension = !ext.isEmpty && ext.utf8.count + 1 <= min(16, limit / 2)
        let suffix = keepsExtension ? "." + ext : ""
        var stem = Substring(keepsExtension ? String(name.dropLast(suffix.count)) : name)
        let room = limit - suffix.utf8.count
        while stem.utf8.count > room { stem = stem.dropLast() }
        return String(stem) + suffix
    }
}
