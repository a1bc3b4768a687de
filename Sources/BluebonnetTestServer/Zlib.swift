import CZlib
import Foundation

/// Compresses bodies for `/gzip` and `/deflate` with the system zlib.
enum Zlib {
    enum Format {
        /// RFC 1952 gzip.
        case gzip
        /// RFC 1950 zlib, which is what HTTP's `deflate` means.
        case zlib
    }

    static func compress(_ input: Data, format: Format) -> Data? {
        var stream = z_stream()
        let windowBits: Int32 = format == .gzip ? 15 + 16 : 15
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
}
