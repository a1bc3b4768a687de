import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `RequestInterceptor` that compresses request bodies with the `deflate` content coding (RFC 1950's zlib
/// container) and sets `Content-Encoding: deflate`, with Alamofire's names and defaults.
///
/// A body in `httpBody` is compressed in memory when the adapter runs, as in Alamofire. An upload's body (data, a
/// file, a multipart form, a stream) is compressed as it is sent, a chunk at a time off the event loop, and goes
/// with chunked transfer encoding because its compressed length is not known beforehand; Alamofire leaves those
/// uncompressed. `shouldCompressBodyData` is asked for bodies in memory; files and streams are always compressed.
///
/// Most request bodies are small, and compressing them costs more than it saves: measure first. Not every server
/// accepts compressed requests.
public struct DeflateRequestCompressor: Sendable, RequestInterceptor {
    /// What to do when the request already has a `Content-Encoding` header.
    public enum DuplicateHeaderBehavior: Sendable {
        /// Fail the request with a `DuplicateHeaderError` (the default).
        case error
        /// Compress, and replace the header's value.
        case replace
        /// Send the request as it is, uncompressed.
        case skip
    }

    /// The request already had a `Content-Encoding` header and `duplicateHeaderBehavior` is `.error`.
    public struct DuplicateHeaderError: Error {}

    /// What to do when the request already has a `Content-Encoding` header.
    public let duplicateHeaderBehavior: DuplicateHeaderBehavior
    /// Whether a body in memory is worth compressing.
    public let shouldCompressBodyData: @Sendable (_ bodyData: Data) -> Bool

    /// Creates a compressor.
    ///
    /// - Parameters:
    ///   - duplicateHeaderBehavior: What to do when a `Content-Encoding` header is already set. `.error` by default.
    ///   - shouldCompressBodyData:  Whether a body in memory is compressed. Always, by default.
    public init(
        duplicateHeaderBehavior: DuplicateHeaderBehavior = .error,
        shouldCompressBodyData: @escaping @Sendable (_ bodyData: Data) -> Bool = { _ in true }
    ) {
        self.duplicateHeaderBehavior = duplicateHeaderBehavior
        self.shouldCompressBodyData = shouldCompressBodyData
    }

    public func adapt(
        _ urlRequest: URLRequest, for session: Session,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        completion(compressing.adapt(urlRequest, uploadBody: nil))
    }

    public func adapt(
        _ urlRequest: URLRequest, using state: RequestAdapterState,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        completion(compressing.adapt(urlRequest, uploadBody: state.uploadBodyCoding))
    }

    private var compressing: BodyCompressing {
        BodyCompressing(
            format: .zlib, duplicateHeaderBehavior: duplicateHeaderBehavior,
            shouldCompressBodyData: shouldCompressBodyData)
    }
}

/// A `RequestInterceptor` that compresses request bodies with the `gzip` content coding and sets
/// `Content-Encoding: gzip`: `DeflateRequestCompressor`'s behaviour, for servers that accept gzip only.
public struct GzipRequestCompressor: Sendable, RequestInterceptor {
    /// What to do when the request already has a `Content-Encoding` header.
    public typealias DuplicateHeaderBehavior = DeflateRequestCompressor.DuplicateHeaderBehavior
    /// The request already had a `Content-Encoding` header and `duplicateHeaderBehavior` is `.error`.
    public typealias DuplicateHeaderError = DeflateRequestCompressor.DuplicateHeaderError

    /// What to do when the request already has a `Content-Encoding` header.
    public let duplicateHeaderBehavior: DuplicateHeaderBehavior
    /// Whether a body in memory is worth compressing.
    public let shouldCompressBodyData: @Sendable (_ bodyData: Data) -> Bool

    /// Creates a compressor.
    ///
    /// - Parameters:
    ///   - duplicateHeaderBehavior: What to do when a `Content-Encoding` header is already set. `.error` by default.
    ///   - shouldCompressBodyData:  Whether a body in memory is compressed. Always, by default.
    public init(
        duplicateHeaderBehavior: DuplicateHeaderBehavior = .error,
        shouldCompressBodyData: @escaping @Sendable (_ bodyData: Data) -> Bool = { _ in true }
    ) {
        self.duplicateHeaderBehavior = duplicateHeaderBehavior
        self.shouldCompressBodyData = shouldCompressBodyData
    }

    public func adapt(
        _ urlRequest: URLRequest, for session: Session,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        completion(compressing.adapt(urlRequest, uploadBody: nil))
    }

    public func adapt(
        _ urlRequest: URLRequest, using state: RequestAdapterState,
        completion: @escaping @Sendable (Result<URLRequest, any Error>) -> Void
    ) {
        completion(compressing.adapt(urlRequest, uploadBody: state.uploadBodyCoding))
    }

    private var compressing: BodyCompressing {
        BodyCompressing(
            format: .gzip, duplicateHeaderBehavior: duplicateHeaderBehavior,
            shouldCompressBodyData: shouldCompressBodyData)
    }
}

/// What both compressors do to a request.
private struct BodyCompressing {
    let format: Deflater.Format
    let duplicateHeaderBehavior: DeflateRequestCompressor.DuplicateHeaderBehavior
    let shouldCompressBodyData: @Sendable (Data) -> Bool

    func adapt(_ urlRequest: URLRequest, uploadBody: UploadBodyCodingChoice?) -> Result<URLRequest, any Error> {
        Result {
            if let body = urlRequest.httpBody {
                guard shouldCompressBodyData(body), try mayCompress(urlRequest) else { return urlRequest }
                var compressed = urlRequest
                compressed.httpBody = try Deflater.compress(body, format: format)
                compressed.headers.update(name: "Content-Encoding", value: format.contentCoding)
                return compressed
            }
            guard let uploadBody else { return urlRequest }
            if let bytes = uploadBody.bytesInMemory, !shouldCompressBodyData(bytes) { return urlRequest }
            guard try mayCompress(urlRequest) else { return urlRequest }
            let format = format
            uploadBody.choose(
                UploadBodyCoding(name: format.contentCoding) { try CompressingChunkReader(source: $0, format: format) })
            var compressed = urlRequest
            compressed.headers.update(name: "Content-Encoding", value: format.contentCoding)
            return compressed
        }
    }

    /// Whether the request's existing `Content-Encoding` (if any) lets it be compressed; throws for `.error`.
    private func mayCompress(_ urlRequest: URLRequest) throws -> Bool {
        guard urlRequest.value(forHTTPHeaderField: "Content-Encoding") != nil else { return true }
        switch duplicateHeaderBehavior {
        case .error: throw DeflateRequestCompressor.DuplicateHeaderError()
        case .replace: return true
        case .skip: return false
        }
    }
}

extension RequestInterceptor where Self == DeflateRequestCompressor {
    /// A `DeflateRequestCompressor` with the default behaviours.
    public static var deflateCompressor: DeflateRequestCompressor { DeflateRequestCompressor() }

    /// A `DeflateRequestCompressor`.
    ///
    /// - Parameters:
    ///   - duplicateHeaderBehavior: What to do when a `Content-Encoding` header is already set. `.error` by default.
    ///   - shouldCompressBodyData:  Whether a body in memory is compressed. Always, by default.
    /// - Returns: The compressor.
    public static func deflateCompressor(
        duplicateHeaderBehavior: DeflateRequestCompressor.DuplicateHeaderBehavior = .error,
        shouldCompressBodyData: @escaping @Sendable (_ bodyData: Data) -> Bool = { _ in true }
    ) -> DeflateRequestCompressor {
        DeflateRequestCompressor(
            duplicateHeaderBehavior: duplicateHeaderBehavior, shouldCompressBodyData: shouldCompressBodyData)
    }
}

extension RequestInterceptor where Self == GzipRequestCompressor {
    /// A `GzipRequestCompressor` with the default behaviours.
    public static var gzipCompressor: GzipRequestCompressor { GzipRequestCompressor() }

    /// A `GzipRequestCompressor`.
    ///
    /// - Parameters:
    ///   - duplicateHeaderBehavior: What to do when a `Content-Encoding` header is already set. `.error` by default.
    ///   - shouldCompressBodyData:  Whether a body in memory is compressed. Always, by default.
    /// - Returns: The compressor.
    public static func gzipCompressor(
        duplicateHeaderBehavior: GzipRequestCompressor.DuplicateHeaderBehavior = .error,
        shouldCompressBodyData: @escaping @Sendable (_ bodyData: Data) -> Bool = { _ in true }
    ) -> GzipRequestCompressor {
        GzipRequestCompressor(
            duplicateHeaderBehavior: duplicateHeaderBehavior, shouldCompressBodyData: shouldCompressBodyData)
    }
}
