import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Loads a `file:` URL a data or download request was made with, as URLSession does for Alamofire: the file's bytes
/// are the body, and there is no HTTP response. Only the request's own first URL is loaded this way: a redirect or a
/// server never leads to a local file (their hops go through `SessionContext.transportRequest`, which refuses the
/// scheme). The file is read off the caller's thread, bounded by the request's body limit.
enum LocalFileTransport {
    /// Whether `url` names a file on this machine (`file:///path` or `file://localhost/path`).
    static func isLocalFile(_ url: URL?) -> Bool {
        guard let url, url.isFileURL else { return false }
        let host = url.host ?? ""
        return host.isEmpty || host == "localhost"
    }

    /// Starts reading the file at `url` for `sink`.
    ///
    /// - Parameters:
    ///   - url:             The `file:` URL.
    ///   - maximumBodySize: The largest file read into memory; `nil` for no limit.
    ///   - sink:            What is told of the body and of the end.
    /// - Returns: The task, which cancelling stops between chunks.
    static func load(_ url: URL, maximumBodySize: Int64?, sink: any TransportSink) -> any TransportTask {
        let task = LocalFileTask()
        Offload.run {
            Confinement.assertOffEventLoop("A local file read")
            let result = read(url, limit: maximumBodySize, task: task)
            switch result {
            case let .success(body):
                sink.transportDidReceiveBodyBytes(body.count)
                sink.transportDidComplete(body: body, error: nil)
            case let .failure(error):
                sink.transportDidComplete(body: Data(), error: error)
            }
        }
        return task
    }

    private static let chunkSize = 256 * 1024

    private static func read(_ url: URL, limit: Int64?, task: LocalFileTask) -> Result<Data, AFError> {
        // Opened without waiting (a pipe with no writer would block the open itself), then judged by what was
        // opened, not by the path, which may change in between: a device or a pipe (`/dev/zero`, a FIFO) never
        // ends or blocks the reading thread, so regular files only.
        let descriptor = open(url.path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else {
            let code: URLError.Code =
                switch errno {
                case ENOENT, ENOTDIR: .fileDoesNotExist
                case EACCES, EPERM: .noPermissionsToReadFile
                default: .cannotOpenFile
                }
            return .failure(failure(code, url))
        }
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { return .failure(failure(.cannotOpenFile, url)) }
        switch status.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR: return .failure(failure(.fileIsDirectory, url))
        default: return .failure(failure(.cannotOpenFile, url))
        }
        defer { try? handle.close() }
        var body = Data()
        while true {
            if task.isCancelled { return .failure(.explicitlyCancelled) }
            let chunk: Data
            do {
                chunk = try handle.read(upToCount: chunkSize) ?? Data()
            } catch {
                return .failure(.sessionTaskFailed(error: error))
            }
            if chunk.isEmpty { return .success(body) }
            if let limit, Int64(body.count + chunk.count) > limit {
                return .failure(.responseLimitExceeded(reason: .maximumResponseSizeExceeded(limit: limit)))
            }
            body.append(chunk)
        }
    }

    private static func failure(_ code: URLError.Code, _ url: URL) -> AFError {
        .sessionTaskFailed(error: URLError(code, userInfo: [NSURLErrorFailingURLErrorKey: url]))
    }
}

/// The task of a local file read: cancelling stops it before its next chunk; there is nothing to suspend.
private final class LocalFileTask: TransportTask {
    private let cancelled = Atomic<Bool>(false)

    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    func cancel() { cancelled.store(true, ordering: .releasing) }
    func suspend() {}
    func resume() {}
}
