import CZlib
import Foundation

/// Compresses bodies for `/gzip` and `/deflate` with the system zlib.
enum Zlib {
    enum Format {
        /// RFC 1952 gzip.
        case gzip
        /// RFC 1950 zlib, which is what HTTP's `deflate` means.
        case zlib
        /// RFC 1951 deflate with no container, as WebSocket's `permessage-deflate` carries it.
        case raw
    }

    static func compress(_ input: Data, format: Format) -> Data? {
        var stream = z_stream()
        let windowBits: Int32 =
            switch format {
            case .gzip: 15 + 16
            case .zlib: 15
            case .raw: -15
            }
        guard
            deflateInit2_(
                &stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY,
                ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { return nil }
        defer { deflateEnd(&stream) }
        var output = Data(count: Int(deflateBound(&stream, UInt(input.count))) + 32)
        let outputCount = output.count
        let status: Int32 = input.withUnsafeBytes { inBuffer in
            output.withUnsafeMutableBytes { outBuffer in
                stream.next_in = UnsafeMutablePointer(mutating: inBuffer.bindMemory(to: Bytef.self).baseAddress)
                stream.avail_in = uInt(inBuffer.count)
                stream.next_out = outBuffer.bindMemory(to: Bytef.self).baseAddress
                stream.avail_out = uInt(outputCount)
                return deflate(&stream, Z_FINISH)
            }
        }
        guard status == Z_STREAM_END else { return nil }
        output.count = Int(stream.total_out)
        return output
    }

    /// The gzip of `block` repeated `count` times, compressed as a stream so the decoded bytes never exist at once:
    /// how the fault server makes compression bombs of any decoded size.
    static func gzip(repeating block: Data, count: Int) -> Data? {
        var stream = z_stream()
        guard
            deflateInit2_(
                &stream, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 9, Z_DEFAULT_STRATEGY,
                ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else { return nil }
        defer { deflateEnd(&stream) }
        var output = Data()
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        let chunkCount = chunk.count
        for index in 0...count {
            let flush = index == count ? Z_FINISH : Z_NO_FLUSH
            let input = index == count ? Data() : block
            var status = Z_OK
            input.withUnsafeBytes { inBuffer in
                stream.next_in = UnsafeMutablePointer(mutating: inBuffer.bindMemory(to: Bytef.self).baseAddress)
                stream.avail_in = uInt(inBuffer.count)
                repeat {
                    chunk.withUnsafeMutableBytes { outBuffer in
                        stream.next_out = outBuffer.bindMemory(to: Bytef.self).baseAddress
                        stream.avail_out = uInt(chunkCount)
                        status = deflate(&stream, flush)
                        output.append(
                            outBuffer.bindMemory(to: UInt8.self).baseAddress!, count: chunkCount - Int(stream.avail_out)
                        )
                    }
                } while stream.avail_out == 0 || (flush == Z_FINISH && status == Z_OK)
            }
            if status != Z_OK && status != Z_STREAM_END && status != Z_BUF_ERROR { return nil }
        }
        return output
    }

    /// Decodes a zlib or gzip stream fed in pieces, for `/drain`'s compressed uploads.
    final class Inflater {
        // At a fixed address: zlib refuses a stream that moved.
        private let stream: UnsafeMutablePointer<z_stream>
        private var failed = false
        /// Whether the stream's end (and its checksum) has been read.
        private(set) var ended = false

        init?(format: Format) {
            stream = .allocate(capacity: 1)
            stream.initialize(to: z_stream())
            let windowBits: Int32 =
                switch format {
                case .gzip: 15 + 16
                case .zlib: 15
                case .raw: -15
                }
            guard inflateInit2_(stream, windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
                stream.deinitialize(count: 1)
                stream.deallocate()
                return nil
            }
        }

        deinit {
            inflateEnd(stream)
            stream.deinitialize(count: 1)
            stream.deallocate()
        }

        /// The decoded bytes of `input`; `nil` once the stream is corrupt or has bytes after its end.
        func inflate(_ input: Data) -> Data? {
            guard !failed else { return nil }
            if ended { return input.isEmpty ? Data() : nil }
            var output = Data()
            var chunk = [UInt8](repeating: 0, count: 64 * 1024)
            let chunkCount = chunk.count
            var status = Z_OK
            input.withUnsafeBytes { inBuffer in
                stream.pointee.next_in = UnsafeMutablePointer(mutating: inBuffer.bindMemory(to: Bytef.self).baseAddress)
                stream.pointee.avail_in = uInt(inBuffer.count)
                repeat {
                    chunk.withUnsafeMutableBytes { outBuffer in
                        stream.pointee.next_out = outBuffer.bindMemory(to: Bytef.self).baseAddress
                        stream.pointee.avail_out = uInt(chunkCount)
                        status = CZlib.inflate(stream, Z_NO_FLUSH)
                        output.append(contentsOf: outBuffer.prefix(chunkCount - Int(stream.pointee.avail_out)))
                    }
                } while status == Z_OK && (stream.pointee.avail_in > 0 || stream.pointee.avail_out == 0)
                stream.pointee.next_in = nil
                stream.pointee.next_out = nil
            }
            switch status {
            case Z_STREAM_END:
                ended = true
                if stream.pointee.avail_in > 0 { failed = true }
            case Z_OK, Z_BUF_ERROR:
                break
            default:
                failed = true
            }
            return failed ? nil : output
        }
    }
}
