import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Why a download could not be resumed.
public enum DownloadResumeError: Error, Sendable, Equatable {
    /// The resume data is not a document this version of Bluebonnet made.
    case malformed
    /// The resume data was made by a newer format version.
    case unsupportedVersion(Int)
    /// The partial file the resume data points to is gone or shorter than recorded.
    case partialFileMissing(URL)
    /// The server answered the range request with a `206` whose `Content-Range` does not start where the partial
    /// file ends, or with another validator: appending it would corrupt the file.
    case contentRangeMismatch(expectedOffset: Int64, contentRange: String?)
}

/// The resume data of a download: what `DownloadRequest.resumeData` holds and `download(resumingWith:)` reads.
///
/// The format is JSON, versioned, and stable within a major version:
/// `{"version": 1, "url": String, "etag": String?, "lastModified": String?, "bytes": Int, "file": String,
///   "method": String, "headers": [[name, value]]}`. `etag` is a strong entity tag, else `lastModified` is the
/// `Last-Modified` date as the server sent it; `file` is the path of the partial file, `bytes` its length; `method`
/// and `headers` are the request as first sent (never a `Range` or `If-Range`).
struct DownloadResumeData: Codable, Sendable {
    static let currentVersion = 1

    var version: Int
    var url: URL
    var etag: String?
    var lastModified: String?
    var bytes: Int64
    var file: String
    var method: String
    var headers: [[String]]

    /// Reads resume data, checking its version and the partial file it names.
    ///
    /// - Parameter data: The document.
    /// - Throws: `DownloadResumeError`.
    init(data: Data) throws {
        guard let decoded = try? JSONDecoder().decode(Self.self, from: data) else { throw DownloadResumeError.malformed }
        guard decoded.version <= Self.currentVersion else { throw DownloadResumeError.unsupportedVersion(decoded.version) }
        guard decoded.version >= 1, decoded.bytes > 0, decoded.etag != nil || decoded.lastModified != nil,
              decoded.headers.allSatisfy({ $0.count == 2 }) else {
            throw DownloadResumeError.malformed
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: decoded.file)[.size] as? NSNumber)?.int64Value
        guard let size, size >= decoded.bytes else {
            throw DownloadResumeError.partialFileMissing(URL(fileURLWithPath: decoded.file))
        }
        self = decoded
    }

    /// Resume data for a body cut short, when the response allows resuming: a `200` or the `206` of a resumed
    /// download, with a strong `ETag` or a `Last-Modified`.
    ///
    /// - Parameters:
    ///   - partial:  The partial file.
    ///   - response: The response whose body it holds.
    ///   - request:  The request that got it.
    ///   - resuming: The resume data that request continued, if it did.
    init?(partial: DownloadFileWriter.Written, response: HTTPURLResponse, request: URLRequest, resuming: DownloadResumeData?) {
        guard response.statusCode == 200 || (response.statusCode == 206 && resuming != nil), let url = request.url else { return nil }
        let etag = response.value(forHTTPHeaderField: "ETag").flatMap { $0.hasPrefix("W/") ? nil : $0 }
        let lastModified = response.value(forHTTPHeaderField: "Last-Modified")
        guard etag != nil || lastModified != nil else { return nil }
        version = Self.currentVersion
        self.url = resuming?.url ?? url
        self.etag = etag
        self.lastModified = etag == nil ? lastModified : nil
        bytes = partial.length
        file = partial.url.path
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
        let fits = contentRange.flatMap(Self.firstByte(ofContentRange:)) == bytes
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
