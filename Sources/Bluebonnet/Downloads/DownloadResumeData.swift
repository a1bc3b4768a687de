import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a download could not be resumed.
public enum DownloadResumeError: Error, Sendable, Equatable {
    /// The resume data is not a document this version of Bluebonnet made.
    case malformed
    /// The resume data was made by a newer format version.
    case unsupportedVersion(Int)
    /// The partial file the resume data points to is gone or shorter than recorded.
    case partialFileMissing(URL)
    /// The resume data names a file Bluebonnet did not make for a download: not one of its partial files in the
    /// temporary directory, a link, another user's, or another file than the one recorded. It is never opened.
    case untrustedPartialFile(URL)
    /// The server answered the range request with a `206` whose `Content-Range` does not start where the partial
    /// file ends, or with another validator: appending it would corrupt the file.
    case contentRangeMismatch(expectedOffset: Int64, contentRange: String?)
}

/// The resume data of a download: what `DownloadRequest.resumeData` holds and `download(resumingWith:)` reads.
///
/// The format is JSON, versioned, and stable within a major version:
/// `{"version": 2, "url": String, "etag": String?, "lastModified": String?, "bytes": Int, "file": String,
///   "method": String, "headers": [[name, value]], "origin": String?, "device": Int?, "inode": Int?}`. `etag` is a
/// strong entity tag, else `lastModified` is the `Last-Modified` date as the server sent it; `file` is the path of the
/// partial file, `bytes` its length, `device` and `inode` its identity; `method` and `headers` are the request as
/// first sent (never a `Range` or `If-Range`); `origin` is the origin (`scheme://host:port`) the download started on,
/// which alone receives the session's credentials when it is resumed, wherever redirects had led it.
///
/// Resume data is input like any other (apps store it in preferences, files, sync): only a partial file the library
/// made itself is accepted, and version 1 documents, which carry no origin, resume without the session's credentials.
struct DownloadResumeData: Codable, Sendable {
    static let currentVersion = 2

    var version: Int
    var url: URL
    var etag: String?
    var lastModified: String?
    var bytes: Int64
    var file: String
    var method: String
    var headers: [[String]]
    /// `scheme://host:port` of the download's first request; `nil` in version 1.
    var origin: String?
    /// The partial file's identity when it was kept; `nil` in version 1.
    var device: UInt64?
    var inode: UInt64?

    /// Reads resume data, checking its version and the partial file it names.
    ///
    /// - Parameters:
    ///   - data:      The document.
    ///   - directory: Where the library makes partial files.
    /// - Throws: `DownloadResumeError`.
    init(data: Data, directory: URL = DownloadFileWriter.defaultDirectory) throws {
        guard data.count <= Self.maximumLength, let decoded = try? JSONDecoder().decode(Self.self, from: data) else {
            throw DownloadResumeError.malformed
        }
        guard decoded.version <= Self.currentVersion else {
            throw DownloadResumeError.unsupportedVersion(decoded.version)
        }
        guard decoded.version >= 1, decoded.bytes > 0, decoded.etag != nil || decoded.lastModified != nil,
            decoded.headers.allSatisfy({ $0.count == 2 }), (decoded.device == nil) == (decoded.inode == nil)
        else {
            throw DownloadResumeError.malformed
        }
        let file = URL(fileURLWithPath: decoded.file)
        guard DownloadFileWriter.isPartialFileName(file, in: directory) else {
            throw DownloadResumeError.untrustedPartialFile(file)
        }
        guard let found = FileStatus(of: file) else { throw DownloadResumeError.partialFileMissing(file) }
        let recorded = decoded.fileIdentity
        guard found.isOwnPartialFile, recorded == nil || recorded == found.identity else {
            throw DownloadResumeError.untrustedPartialFile(file)
        }
        guard found.size >= decoded.bytes else { throw DownloadResumeError.partialFileMissing(file) }
        self = decoded
    }

    /// The partial file's identity as recorded; `nil` in version 1.
    var fileIdentity: FileIdentity? {
        device.flatMap { device in inode.map { FileIdentity(device: device, inode: $0) } }
    }

    /// The largest resume data read: a real document is a few kilobytes.
    static let maximumLength = 1 << 20

    /// The origin that owns the session's credentials, as a URL; `nil` when the resume data does not say.
    var originURL: URL? {
        guard let origin, let url = URL(string: origin), url.scheme != nil, url.host != nil, url.user == nil,
            url.path.isEmpty || url.path == "/"
        else { return nil }
        return url
    }

    /// `scheme://host:port` of `url`.
    static func origin(of url: URL?) -> String? {
        guard let url, let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased(), !host.isEmpty else {
            return nil
        }
        let port = Origin.effectivePort(url)
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "\(scheme)://\(bracketed):\(port)"
    }

    /// Resume data for a body cut short, when the response allows resuming: a `200` or the `206` of a resumed
    /// download, with a strong `ETag` or a `Last-Modified`.
    ///
    /// - Parameters:
    ///   - partial:  The partial file.
    ///   - response: The response whose body it holds.
    ///   - request:  The request that got it.
    ///   - resuming: The resume data that request continued, if it did.
    ///   - firstURL: The URL the download started on, whose origin owns the session's credentials.
    init?(
        partial: DownloadFileWriter.Written, response: HTTPURLResponse, request: URLRequest,
        resuming: DownloadResumeData?,
        firstURL: URL?
    ) {
        guard response.statusCode == 200 || (response.statusCode == 206 && resuming != nil), let url = request.url,
            let identity = FileStatus(of: partial.url)?.identity
        else { return nil }
        let etag = response.value(forHTTPHeaderField: "ETag").flatMap { $0.hasPrefix("W/") ? nil : $0 }
        let lastModified = response.value(forHTTPHeaderField: "Last-Modified")
        guard etag != nil || lastModified != nil else { return nil }
        version = Self.currentVersion
        self.url = resuming?.url ?? url
        self.etag = etag
        self.lastModified = etag == nil ? lastModified : nil
        bytes = partial.length
        file = partial.url.path
        device = identity.device
        inode = identity.inode
        // A resumed download keeps the origin it started on; one that resumed version 1 data has none to keep.
        origin = resuming.map { $0.origin } ?? Self.origin(of: firstURL)
        if let resuming {
            method = resuming.method
            headers = resuming.headers
        } else {
            method = request.httpMethod ?? "GET"
            headers = (request.allHTTPHeaderFields ?? [:]).sorted { $0.key < $1.key }.map { [$0.key, $0.value] }
        }
    }

    /// The partial file.
    var temporaryFileURL: URL { URL(fileURLWithPath: file) }

    func encoded() throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(self)
    }

    /// The request that continues the download: the first request's method and headers, with `Range` from the
    /// partial file's end and `If-Range`, so a changed resource comes back whole (`200`) rather than spliced.
    func resumingRequest() -> URLRequest {
        var request = URLRequest(url: url)
        request.httpMethod = method
        for pair in headers where !["range", "if-range"].contains(pair[0].lowercased()) {
            request.setValue(pair[1], forHTTPHeaderField: pair[0])
        }
        request.setValue("bytes=\(bytes)-", forHTTPHeaderField: "Range")
        request.setValue(etag ?? lastModified, forHTTPHeaderField: "If-Range")
        return request
    }

    /// How a response continues the partial file: appended (a `206` starting where it ends, with the same
    /// validator), restarted (anything else that is not a `206`), or refused (a `206` that does not fit).
    func continuation(with response: HTTPURLResponse) -> Continuation {
        guard response.statusCode == 206 else { return .restart }
        let contentRange = response.value(forHTTPHeaderField: "Content-Range")
        let fits =
            contentRange.flatMap(Self.firstByte(ofContentRange:)) == bytes
            && (etag == nil || response.value(forHTTPHeaderField: "ETag").map { $0 == etag } ?? true)
        return fits ? .append : .refuse(.contentRangeMismatch(expectedOffset: bytes, contentRange: contentRange))
    }

    enum Continuation {
        case append, restart
        case refuse(DownloadResumeError)
    }

    /// The first byte of `bytes first-last/length`.
    static func firstByte(ofContentRange value: String) -> Int64? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        guard trimmed.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = trimmed.dropFirst("bytes ".count)
        guard let dash = spec.firstIndex(of: "-") else { return nil }
        return Int64(spec[..<dash].trimmingCharacters(in: .whitespaces))
    }
}

/// A file's device and inode: which file it is, whatever its name.
struct FileIdentity: Equatable, Sendable {
    var device: UInt64
    var inode: UInt64
}

/// What `lstat` says of a file (never following a link).
struct FileStatus: Sendable {
    let identity: FileIdentity
    let size: Int64
    /// A regular file (not a link), of this process's user, with one name: what the library's own partial file is.
    /// A hard link to a file of the user's has two names; a link elsewhere is not regular.
    let isOwnPartialFile: Bool

    init?(of url: URL) {
        let found = url.withUnsafeFileSystemRepresentation { path -> stat? in
            var status = stat()
            guard let path, lstat(path, &status) == 0 else { return nil }
            return status
        }
        guard let found else { return nil }
        self.init(found)
    }

    init(_ status: stat) {
        identity = FileIdentity(device: UInt64(status.st_dev), inode: UInt64(status.st_ino))
        size = Int64(status.st_size)
        isOwnPartialFile = status.st_mode & S_IFMT == S_IFREG && status.st_uid == geteuid() && status.st_nlink == 1
    }
}
