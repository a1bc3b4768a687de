import CZlib
import Foundation

/// A zlib compression stream, fed in pieces: the body of a request compressor, in memory or as it streams.
final class Deflater {
    /// The container around the compressed bytes.
    enum Format: Sendable {
        /// RFC 1950's zlib container, which is what HTTP's `deflate` coding means (and what Alamofire sends).
        case zlib
        /// RFC 1952's gzip container.
        case gzip

        /// The `Content-Encoding` token.
        var contentCoding: String {
            switch self {
            case .zlib: "deflate"
            case .gzip: "gzip"
            }
        }

        /// zlib's window bits: 15 for a 32 KiB window, plus 16 for the gzip container.
        fileprivate var windowBits: Int32 {
            switch self {
            case .zlib: 15
            case .gzip: 15 + 16
            }
        }
    }

    // The stream lives at a fixed address: zlib keeps a pointer back to it and refuses a stream that moved.
    private let stream: UnsafeMutablePointer<z_stream>

    init(format: Format) throws {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = deflateInit2_(
            stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, format.windowBits, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
            Int32(MemoryLayout<z_stream>.size))
        guard status == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            throw BodyCompressionError(zlibStatus: status)
        }
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Compresses what it can of `input` into at most `maxOutput` bytes; with `finish`, `input` is the last of the
    /// body and the stream is closed once all of it is out.
    ///
    /// - Returns: How many bytes of `input` were taken, the bytes produced (possibly none while zlib gathers input),
    ///   and whether the stream ended.
    func deflate(_ input: Data, finish: Bool, maxOutput: Int) throws -> (consumed: Int, output: Data, ended: Bool) {
        var output = Data(count: max(1, maxOutput))
        var status = Z_OK
        var consumed = 0
        var produced = 0
        input.withUnsafeBytes { inBuffer in
            output.withUnsafeMutableBytes { outBuffer in
                stream.pointee.next_in = UnsafeMutablePointer(mutating: inBuffer.bindMemory(to: Bytef.self).baseAddress)
                stream.pointee.avail_in = uInt(inBuffer.count)
                stream.pointee.next_out = outBuffer.bindMemory(to: Bytef.self).baseAddress
                stream.pointee.avail_out = uInt(outBuffer.count)
                status = CZlib.deflate(stream, finish ? Z_FINISH : Z_NO_FLUSH)
                consumed = inBuffer.count - Int(stream.pointee.avail_in)
                produced = outBuffer.count - Int(stream.pointee.avail_out)
                // The buffers are only borrowed for this call.
                stream.pointee.next_in = nil
                stream.pointee.next_out = nil
            }
        }
        // `Z_BUF_ERROR` is no progress possible this call (no input yet, or no room), which the next call resolves.
        guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else {
            throw BodyCompressionError(zlibStatus: status)
        }
        output.count = produced
        return (consumed, output, status == Z_STREAM_END)
    }

    /// `data` compressed whole.
    static func compress(_ data: Data, format: Format) throws -> Data {
        let deflater = try Deflater(format: format)
        var compressed = Data()
        var offset = data.startIndex
        while true {
            let step = try deflater.deflate(data[offset...], finish: true, maxOutput: 64 * 1024)
            offset += step.consumed
            compressed.append(step.output)
            if step.ended { return compressed }
        }
    }
}

/// Reads another body reader's bytes compressed, a chunk at a time: a file or a form is compressed as it is sent,
/// never held in memory.
final class CompressingChunkReader: BodyChunkReader {
    /// Bytes read from the source at a time.
    static let inputChunkSize = 64 * 1024

    private let source: any BodyChunkReader
    private let deflater: Deflater
    private var input = Data()
    private var sourceEnded = false
    private var ended = false

    init(source: any BodyChunkReader, format: Deflater.Format) throws {
        self.source = source
        deflater = try Deflater(format: format)
    }

    func read(upTo maxLength: Int) throws -> Data {
        Confinement.assertOffEventLoop("Compressing a request body")
        guard maxLength > 0 else { return Data() }
        while !ended {
            if input.isEmpty && !sourceEnded {
                input = try source.read(upTo: Self.inputChunkSize)
                if input.isEmpty { sourceEnded = true }
            }
            let step = try deflater.deflate(input, finish: sourceEnded, maxOutput: maxLength)
            input = input.dropFirst(step.consumed)
            ended = step.ended
            if !step.output.isEmpty { return step.output }
        }
        return Data()
    }

    func close() {
        source.close()
    }
}

/// zlib refused to compress a request body; `zlibStatus` is its status code (`Z_MEM_ERROR` is -4, say).
public struct BodyCompressionError: Error, Sendable, CustomStringConvertible {
    /// zlib's status code.
    public let zlibStatus: Int32

    public var description: String { "zlib could not compress the request body (status \(zlibStatus))" }
}
