import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a download's body to a temporary file as it arrives: in order, off the event loop, holding at most
/// `highWater` bytes not yet written. Past that the engine is told to wait, so a slow disk slows the server rather
/// than filling memory.
final class DownloadFileWriter: Sendable {
    /// Bytes queued for the disk before the engine is made to wait.
    static let highWater = 4 * 1024 * 1024
    /// Bytes queued below which a waiting engine reads again.
    static let lowWater = 1024 * 1024

    /// What the file holds once a body ended.
    struct Written: Sendable {
        /// The temporary file.
        let url: URL
        /// Its length.
        let length: Int64
    }

    private enum Operation {
        case begin(append: Int64?)
        case write(Data)
        case end(@Sendable (Result<Written, AFError>) -> Void)
    }

    private struct State {
        var operations: [Operation] = []
        var draining = false
        var queuedBytes = 0
        var waiting: [TransportReadiness] = []
        /// The first error met; later writes are dropped and later chunks refused with it.
        var error: AFError?
        var descriptor: Int32 = -1
        var url: URL?
        var length: Int64 = 0
        /// The identity an adopted file must have when it is opened.
        var adoptedIdentity: FileIdentity?
    }

    private let directory: URL
    private let state = Protected(State())
    /// Told of each chunk written: its size and the file's length after it.
    private let writeObserver = Protected<(@Sendable (_ bytes: Int, _ length: Int64) -> Void)?>(nil)

    /// Sets the closure told of each chunk written (on the writer's queue, never an event loop).
    func observeWrites(_ observer: @escaping @Sendable (_ bytes: Int, _ length: Int64) -> Void) {
        writeObserver.write(observer)
    }

    /// - Parameter directory: Where temporary files are made.
    init(directory: URL = DownloadFileWriter.defaultDirectory) {
        self.directory = directory
    }

    /// Where partial files are made: the temporary directory.
    static var defaultDirectory: URL { FileManager.default.temporaryDirectory }

    /// A new partial file's URL in `directory`: `Bluebonnet_<UUID>.tmp`.
    static func newPartialFile(in directory: URL) -> URL {
        directory.appendingPathComponent("Bluebonnet_\(UUID().uuidString).tmp")
    }

    /// Whether `url` is named as the writer names its partial files, directly in `directory` (links resolved in the
    /// directory, never in the name).
    static func isPartialFileName(_ url: URL, in directory: URL) -> Bool {
        let name = url.lastPathComponent
        guard name.hasPrefix("Bluebonnet_"), name.hasSuffix(".tmp"),
            UUID(uuidString: String(name.dropFirst("Bluebonnet_".count).dropLast(".tmp".count))) != nil
        else { return false }
        let parent = url.deletingLastPathComponent().standardizedFileURL.resolvingSymlinksInPath().path
        return parent == directory.standardizedFileURL.resolvingSymlinksInPath().path
    }

    deinit {
        let (descriptor, url) = state.write { ($0.descriptor, $0.url) }
        if descriptor >= 0 { close(descriptor) }
        if let url { try? FileManager.default.removeItem(at: url) }
    }

    /// Starts a body: the file is emptied, or cut to `offset` bytes and appended to (a resumed download: bytes an
    /// earlier attempt appended past the offset it resumes from would be duplicated).
    ///
    /// - Parameter offset: The length to keep, or `nil` to start empty.
    func begin(keeping offset: Int64?) {
        enqueue(.begin(append: offset), bytes: 0)
    }

    /// Adopts `url` (a partial download being resumed) as the file; the writer owns it from now on.
    ///
    /// - Parameters:
    ///   - url:      The file.
    ///   - identity: Which file it must be when it is opened, if known.
    func adopt(_ url: URL, identity: FileIdentity?) {
        state.write { state in
            guard state.url == nil else { return }
            state.url = url
            state.adoptedIdentity = identity
        }
    }

    /// Queues `chunk`; `readiness` is told at once while little is queued, else once the disk caught up.
    ///
    /// - Parameters:
    ///   - chunk:     The bytes.
    ///   - readiness: The engine's wait.
    func write(_ chunk: Data, readiness: TransportReadiness) {
        enum Verdict { case ready, wait, failed(AFError) }
        let (verdict, drain) = state.write { state -> (Verdict, Bool) in
            if let error = state.error { return (.failed(error), false) }
            state.operations.append(.write(chunk))
            state.queuedBytes += chunk.count
            let verdict: Verdict
            if state.queuedBytes <= Self.highWater {
                verdict = .ready
            } else {
                state.waiting.append(readiness)
                verdict = .wait
            }
            return (verdict, startDraining(&state))
        }
        switch verdict {
        case .ready: readiness.ready()
        case .wait: break
        case let .failed(error): readiness.fail(error)
        }
        if drain { scheduleDrain() }
    }

    /// Ends the body: once every queued write is done the file is closed and `completion` gets it, or the error
    /// the writes met. The writer forgets the file: the caller owns it.
    ///
    /// - Parameter completion: Called on a thread of the global queue.
    func end(_ completion: @escaping @Sendable (Result<Written, AFError>) -> Void) {
        enqueue(.end(completion), bytes: 0)
    }

    /// The file of the body in progress or last ended, if the writer still owns it.
    var temporaryURL: URL? { state.write { $0.url } }

    private func enqueue(_ operation: Operation, bytes: Int) {
        let drain = state.write { state -> Bool in
            state.operations.append(operation)
            return startDraining(&state)
        }
        if drain { scheduleDrain() }
    }

    private func startDraining(_ state: inout State) -> Bool {
        guard !state.draining else { return false }
        state.draining = true
        return true
    }

    private func scheduleDrain() {
        Offload.run { [self] in drain() }
    }

    /// Runs queued operations in order until none is left; only one drain runs at a time.
    private func drain() {
        while true {
            let next = state.write { state -> (Operation, Int32, URL?, AFError?)? in
                guard !state.operations.isEmpty else {
                    state.draining = false
                    return nil
                }
                return (state.operations.removeFirst(), state.descriptor, state.url, state.error)
            }
            guard let (operation, descriptor, url, error) = next else { return }
            switch operation {
            case let .begin(offset):
                perform(begin: offset, descriptor: descriptor, url: url)
            case let .write(chunk):
                let failure = error == nil ? Self.write(chunk, to: descriptor) : nil
                let (released, written) = state.write { state -> (([TransportReadiness], AFError?), Int64?) in
                    state.queuedBytes -= chunk.count
                    let written = failure == nil && error == nil
                    if written { state.length += Int64(chunk.count) }
                    if let failure, state.error == nil { state.error = failure }
                    let length = written ? state.length : nil
                    guard state.error != nil || state.queuedBytes <= Self.lowWater else { return (([], nil), length) }
                    defer { state.waiting = [] }
                    return ((state.waiting, state.error), length)
                }
                if let written, let observer = writeObserver.read({ $0 }) { observer(chunk.count, written) }
                for readiness in released.0 {
                    if let error = released.1 { readiness.fail(error) } else { readiness.ready() }
                }
            case let .end(completion):
                if descriptor >= 0 { close(descriptor) }
                let result = state.write { state -> Result<Written, AFError> in
                    defer {
                        state.descriptor = -1
                        state.error = nil
                        state.length = 0
                        state.url = nil
                    }
                    if let error = state.error {
                        if let url = state.url { try? FileManager.default.removeItem(at: url) }
                        return .failure(error)
                    }
                    guard let url = state.url else {
                        return .failure(Self.fileError(.cannotCreateFile, nil))
                    }
                    return .success(Written(url: url, length: state.length))
                }
                completion(result)
            }
        }
    }

    private func perform(begin offset: Int64?, descriptor: Int32, url: URL?) {
        if descriptor >= 0 { close(descriptor) }
        let target = url ?? Self.newPartialFile(in: directory)
        let expected = state.write { $0.adoptedIdentity }
        // Never through a link, and (checked on the open file) only the one regular file of ours with one name: a
        // partial file swapped for a link to, or another name of, a user's file is refused, not written.
        // Truncated only after that check, never by `open`.
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (offset != nil ? O_APPEND : 0)
        var opened = target.withUnsafeFileSystemRepresentation { path in path.map { open($0, flags, 0o600) } ?? -1 }
        var failure = opened < 0 ? Self.fileError(.cannotCreateFile, POSIXErrorCode(rawValue: errno)) : nil
        var trusted = true
        if opened >= 0 {
            var status = stat()
            let found = fstat(opened, &status) == 0 ? FileStatus(status) : nil
            if found?.isOwnPartialFile != true || (expected != nil && found?.identity != expected) {
                failure = Self.fileError(
                    .cannotWriteToFile, underlying: DownloadResumeError.untrustedPartialFile(target))
                trusted = false
                close(opened)
                opened = -1
            }
        }
        let length = offset ?? 0
        if opened >= 0, ftruncate(opened, off_t(length)) != 0 {
            failure = Self.fileError(.cannotWriteToFile, POSIXErrorCode(rawValue: errno))
            close(opened)
            opened = -1
        }
        state.write { state in
            // A file that is not ours is forgotten, so nothing later removes it.
            state.url = trusted ? target : nil
            state.descriptor = opened
            state.length = length
            state.error = failure
        }
    }

    /// Writes all of `chunk`, across short writes and interruptions.
    private static func write(_ chunk: Data, to descriptor: Int32) -> AFError? {
        guard descriptor >= 0 else { return fileError(.cannotWriteToFile, nil) }
        do {
            try OwnerOnlyFile.writeAll(chunk, to: descriptor)
            return nil
        } catch {
            return fileError(.cannotWriteToFile, underlying: error)
        }
    }

    /// What URLSession reports when it cannot make or write a download's file, with the system's reason beneath.
    static func fileError(_ code: URLError.Code, underlying: (any Error)?) -> AFError {
        var userInfo: [String: any Sendable] = [:]
        if let underlying { userInfo[NSUnderlyingErrorKey] = underlying }
        return .sessionTaskFailed(error: URLError(code, userInfo: userInfo))
    }

    private static func fileError(_ code: URLError.Code, _ posix: POSIXErrorCode?) -> AFError {
        fileError(code, underlying: posix.map { POSIXError($0) })
    }
}
