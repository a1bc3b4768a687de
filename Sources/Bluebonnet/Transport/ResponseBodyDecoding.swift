import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A response body's content codings undone as it arrives: each coding `Content-Encoding` names, last applied first,
/// within the decompression ratio limit.
///
/// `gzip` and `deflate` go through the system's zlib; `br` (RFC 7932) and `zstd` (RFC 8878) through decoders written in
/// Swift, bounded by their windows (16 MiB and `zstdWindowLimit`). A body whose codings include one none of these
/// decodes is left as it came, `Content-Encoding` and all, as URLSession leaves it.
final class ResponseBodyDecoding: @unchecked Sendable {
    // @unchecked: an engine calls it from one callback at a time (AsyncHTTPClient calls a delegate's body callbacks one
    // after another on its event loop), never from two threads at once.
    /// The most codings one response may stack; more is refused rather than decoded through an unbounded chain.
    static let maximumCodings = 3
    /// The largest zstd window accepted: RFC 8878 asks HTTP decoders to support 8 MiB, and a frame asking more is
    /// refused before anything of its size is allocated.
    static let zstdWindowLimit = 8 << 20
    /// The largest brotli window: the format's own maximum (16 MiB less 16 bytes); large-window brotli is refused.
    static let brotliWindowLimit = 16 << 20

    /// One decoder of the chain, boxed so each stage is mutated on its own while it feeds the next.
    private final class Stage {
        var decoder: any StreamingContentDecoder
        init(_ decoder: any StreamingContentDecoder) { self.decoder = decoder }
    }

    private let stages: [Stage]
    private let ratioLimit: Int
    private var compressedBytes = 0
    private var decodedBytes = 0

    /// The chain for `contentEncoding`'s codings (`gzip`, `x-gzip`, `deflate`, `br`, `zstd`; `identity` is skipped),
    /// or `nil` when there is nothing to decode or a coding is not one of these. Nothing is allocated for `nil`.
    ///
    /// - Throws: An `AFError` when more than `maximumCodings` are stacked.
    static func make(contentEncoding: String?, ratioLimit: Int) throws(AFError) -> ResponseBodyDecoding? {
        guard let contentEncoding else { return nil }
        let codings = contentEncoding.split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces).lowercased()
        }.filter { !$0.isEmpty && $0 != "identity" }
        guard !codings.isEmpty, codings.allSatisfy(Self.decodes) else { return nil }
        guard codings.count <= Self.maximumCodings else {
            throw Self.failure(
                ContentDecodingError.malformed(
                    coding: contentEncoding,
                    detail: "\(codings.count) content codings are stacked; at most \(Self.maximumCodings) are decoded"))
        }
        do {
            // Applied in order, so undone in reverse.
            return ResponseBodyDecoding(
                stages: try codings.reversed().map { Stage(try Self.decoder(for: $0)) }, ratioLimit: ratioLimit)
        } catch {
            throw Self.failure(error)
        }
    }

    private init(stages: [Stage], ratioLimit: Int) {
        self.stages = stages
        self.ratioLimit = ratioLimit
    }

    /// Whether `coding` is one this chain decodes.
    static func decodes(_ coding: String) -> Bool {
        ["gzip", "x-gzip", "deflate", "br", "zstd"].contains(coding)
    }

    private static func decoder(for coding: String) throws -> any StreamingContentDecoder {
        switch coding {
        case "br": BrotliDecoder(maximumWindowSize: brotliWindowLimit)
        case "zstd": ZstdDecoder(maximumWindowSize: zstdWindowLimit)
        default: try ZlibInflater(coding: coding)
        }
    }

    /// What one piece of the body may decode to beyond `ratioLimit` times its own size: a whole window (brotli's
    /// longest copy is 16 MiB) and then some. A stream that first sends bytes decoding to nothing (zstd's skippable
    /// frames, brotli's metadata) and then a burst would otherwise be allowed the whole ratio of all it sent, in one
    /// piece the engine holds at once.
    static let burstAllowance = 32 << 20

    /// Decodes the next bytes of the body, handing decoded bytes to `output` as they are made.
    func decode(_ input: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) throws -> Void) throws(AFError) {
        compressedBytes += input.count
        let limit = ratioLimit
        let compressed = compressedBytes
        var decoded = decodedBytes
        var decodedNow = 0
        let burst = input.count * limit + Self.burstAllowance
        defer { decodedBytes = decoded }
        do {
            try feed(input, into: 0) { bytes in
                decoded += bytes.count
                decodedNow += bytes.count
                // As zlib's limit in NIO counts it: all decoded bytes against all compressed bytes so far; and what
                // this piece decodes against the piece.
                if decoded > compressed * limit || decodedNow > burst { throw RatioExceeded(ratio: limit) }
                try output(bytes)
            }
        } catch let error as AFError {
            throw error
        } catch let error as RatioExceeded {
            throw .responseLimitExceeded(reason: .decompressionRatioExceeded(ratio: limit, error: error))
        } catch {
            throw Self.failure(error)
        }
    }

    /// The body ended: every stage must have reached its stream's end (an empty body, as a `HEAD` or a `304` has, is
    /// no stream at all).
    func finish() throws(AFError) {
        guard compressedBytes > 0 else { return }
        do {
            for stage in stages { try stage.decoder.finish() }
        } catch {
            throw Self.failure(error)
        }
    }

    /// More was decoded than the ratio allows: a compression bomb, stopped before it fills memory.
    struct RatioExceeded: Error, CustomStringConvertible {
        let ratio: Int
        var description: String { "more than \(ratio) bytes were decoded per byte received" }
    }

    private func feed(
        _ input: UnsafeRawBufferPointer, into index: Int, output: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        guard index < stages.count else { return try output(input) }
        try stages[index].decoder.decode(input) { bytes in
            try feed(bytes, into: index + 1, output: output)
        }
    }

    /// A body that cannot be decoded, as URLSession reports it, with the reason kept underneath.
    static func failure(_ error: any Error) -> AFError {
        if let error = error as? AFError { return error }
        let description =
            (error as? ContentDecodingError)?.description ?? "The response body could not be decoded: \(error)"
        return .sessionTaskFailed(
            error: URLError(
                .cannotDecodeContentData,
                userInfo: [NSUnderlyingErrorKey: error, NSLocalizedDescriptionKey: description]))
    }
}

extension ContentDecodingError: CustomStringConvertible {
    var description: String {
        switch self {
        case let .malformed(coding, detail):
            "The response's \(coding) body is malformed: \(detail)."
        case let .windowTooLarge(coding, requested, limit):
            "The response's \(coding) body asks for a \(requested)-byte window; at most \(limit) bytes are accepted."
        case let .truncated(coding):
            "The response's \(coding) body ended before its compressed stream did."
        case let .checksumMismatch(coding):
            "The response's \(coding) body does not match its checksum."
        case let .trailingData(coding):
            "The response's \(coding) body has bytes after the end of its compressed stream."
        }
    }
}
