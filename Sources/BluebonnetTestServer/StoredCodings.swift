import Foundation

/// Brotli and zstd streams that store their bytes uncompressed: valid by the formats' rules (brotli's uncompressed
/// meta-blocks, zstd's raw blocks), so the test server can answer any body in either coding without an encoder.
/// Streams the reference encoders made are served by `/encoded?raw=1`, from the tests' fixtures.
enum StoredCodings {
    /// `data` as a brotli stream (RFC 7932) of uncompressed meta-blocks of at most 64 KiB each.
    static func brotli(_ data: Data) -> Data {
        var writer = BitWriter()
        writer.write(0, bits: 1)  // WBITS = 16
        var offset = data.startIndex
        while offset < data.endIndex {
            let count = min(65536, data.endIndex - offset)
            writer.write(0, bits: 1)  // ISLAST = 0
            writer.write(0, bits: 2)  // MNIBBLES = 4
            writer.write(UInt64(count - 1), bits: 16)  // MLEN - 1
            writer.write(1, bits: 1)  // ISUNCOMPRESSED
            writer.alignToByte()
            writer.append(data[offset..<offset + count])
            offset += count
        }
        writer.write(1, bits: 1)  // ISLAST
        writer.write(1, bits: 1)  // ISLASTEMPTY
        writer.alignToByte()
        return writer.bytes
    }

    /// `data` as a zstd frame (RFC 8878) of raw blocks of at most 128 KiB, with a 128 KiB window and no checksum.
    static func zstd(_ data: Data) -> Data {
        var frame = Data([0x28, 0xB5, 0x2F, 0xFD])  // magic number, little-endian
        frame.append(0x00)  // frame header descriptor: a window descriptor, no content size, no checksum
        frame.append(7 << 3)  // window descriptor: 2^(10 + 7) = 128 KiB
        var offset = data.startIndex
        repeat {
            let count = min(128 * 1024, data.endIndex - offset)
            let last: UInt32 = offset + count == data.endIndex ? 1 : 0
            let header = last | (0 << 1) | (UInt32(count) << 3)  // raw block
            frame.append(contentsOf: [UInt8(header & 0xFF), UInt8((header >> 8) & 0xFF), UInt8(header >> 16)])
            frame.append(data[offset..<offset + count])
            offset += count
        } while offset < data.endIndex
        return frame
    }

    /// `data` with `codings` applied in order (`gzip`, `deflate`, `br`, `zstd`, `identity`); `nil` for a coding it does not know.
    static func encode(_ data: Data, codings: [String]) -> Data? {
        var body = data
        for coding in codings {
            switch coding {
            case "gzip": body = Zlib.compress(body, format: .gzip) ?? Data()
            case "deflate": body = Zlib.compress(body, format: .zlib) ?? Data()
            case "br": body = brotli(body)
            case "zstd": body = zstd(body)
            case "identity": break
            default: return nil
            }
        }
        return body
    }

    /// Bits written least significant first, as both formats read them.
    private struct BitWriter {
        var bytes = Data()
        private var pending: UInt64 = 0
        private var pendingBits = 0

        mutating func write(_ value: UInt64, bits: Int) {
            pending |= value << UInt64(pendingBits)
            pendingBits += bits
            while pendingBits >= 8 {
                bytes.append(UInt8(pending & 0xFF))
                pending >>= 8
                pendingBits -= 8
            }
        }

        mutating func alignToByte() {
            if pendingBits > 0 { write(0, bits: 8 - pendingBits) }
        }

        mutating func append(_ data: Data) {
            bytes.append(data)
        }
    }
}
