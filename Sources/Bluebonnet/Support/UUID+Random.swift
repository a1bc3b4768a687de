import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension UUID {
    /// A random (version 4) UUID, as `UUID()` makes, from bytes the kernel gives 256 at a time.
    ///
    /// Every request makes one for its `id`. Foundation's `UUID()` on Linux opens `/dev/urandom`, reads 16 bytes and
    /// closes it (three system calls, about 2.4 µs); the standard library's generator asks `getrandom` once for
    /// each 8 bytes (two system calls a UUID); `RandomBytes` asks once for 16 UUIDs.
    static func random() -> UUID {
        let (high, low) = RandomBytes.shared.next()
        var bytes: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &bytes) { raw in
            raw.storeBytes(of: high, toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: low, toByteOffset: 8, as: UInt64.self)
            // RFC 9562: version 4 in the high nibble of byte 6, the variant 0b10 in the top bits of byte 8.
            raw[6] = (raw[6] & 0x0F) | 0x40
            raw[8] = (raw[8] & 0x3F) | 0x80
        }
        return UUID(uuid: bytes)
    }
}

/// Random bytes from the kernel (`getentropy`, 256 bytes a call, its most), handed out 16 at a time and never twice.
final class RandomBytes: Sendable {
    static let shared = RandomBytes()

    private struct Pool {
        var words = [UInt64](repeating: 0, count: RandomBytes.wordCount)
        /// The next unused word; `wordCount` when the pool is spent.
        var next = RandomBytes.wordCount
    }

    /// 256 bytes: what one `getentropy` call may return.
    static let wordCount = 32
    private let pool = Protected(Pool())

    /// Two random words no caller got before.
    func next() -> (UInt64, UInt64) {
        pool.write { pool in
            if pool.next + 2 > Self.wordCount {
                Self.refill(&pool.words)
                pool.next = 0
            }
            defer {
                // Spent words are wiped, so the pool never holds values already handed out.
                pool.words[pool.next] = 0
                pool.words[pool.next + 1] = 0
                pool.next += 2
            }
            return (pool.words[pool.next], pool.words[pool.next + 1])
        }
    }

    private static func refill(_ words: inout [UInt64]) {
        let filled = words.withUnsafeMutableBytes { getentropy($0.baseAddress, $0.count) == 0 }
        guard !filled else { return }
        // `getentropy` fails only without a kernel source of randomness (a kernel older than 3.17); the standard
        // library's generator then tries its own sources, and stops the process if they fail too, as it does for any
        // Swift code that asks for randomness.
        var generator = SystemRandomNumberGenerator()
        for index in words.indices { words[index] = generator.next() }
    }
}
