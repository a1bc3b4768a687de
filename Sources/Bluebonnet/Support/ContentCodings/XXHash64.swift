/// The 64-bit xxHash of a byte sequence fed in pieces, as the Zstandard frame checksum uses it (seed 0).
///
/// Bytes are taken 32 at a time into four lanes; up to 31 bytes wait in `tail` for the next piece or the digest.
struct XXHash64 {
    private static let prime1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let prime2: UInt64 = 0xC2B2_AE3D_27D4_EB4F
    private static let prime3: UInt64 = 0x1656_67B1_9E37_79F9
    private static let prime4: UInt64 = 0x85EB_CA77_C2B2_AE63
    private static let prime5: UInt64 = 0x27D4_EB2F_1656_67C5

    private let seed: UInt64
    private var lane1: UInt64
    private var lane2: UInt64
    private var lane3: UInt64
    private var lane4: UInt64
    private var length: UInt64 = 0
    private var tail: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
    private var tailCount = 0

    init(seed: UInt64 = 0) {
        self.seed = seed
        lane1 = seed &+ Self.prime1 &+ Self.prime2
        lane2 = seed &+ Self.prime2
        lane3 = seed
        lane4 = seed &- Self.prime1
    }

    @inline(__always)
    private static func round(_ accumulator: UInt64, _ input: UInt64) -> UInt64 {
        let sum = accumulator &+ input &* prime2
        return ((sum << 31) | (sum >> 33)) &* prime1
    }

    @inline(__always)
    private static func merge(_ hash: UInt64, _ lane: UInt64) -> UInt64 {
        (hash ^ round(0, lane)) &* prime1 &+ prime4
    }

    @inline(__always)
    private mutating func stripe(_ bytes: UnsafeRawPointer) {
        lane1 = Self.round(lane1, UInt64(littleEndian: bytes.loadUnaligned(as: UInt64.self)))
        lane2 = Self.round(lane2, UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        lane3 = Self.round(lane3, UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 16, as: UInt64.self)))
        lane4 = Self.round(lane4, UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: 24, as: UInt64.self)))
    }

    /// Adds `bytes` to what is hashed.
    mutating func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        let count = bytes.count
        length &+= UInt64(count)
        var index = 0
        if tailCount > 0 {
            let take = min(32 - tailCount, count)
            let filled = tailCount
            withUnsafeMutableBytes(of: &tail) { tailBytes in
                tailBytes.baseAddress?.advanced(by: filled).copyMemory(from: base, byteCount: take)
            }
            tailCount += take
            index = take
            if tailCount < 32 { return }
            var full = tail
            withUnsafeBytes(of: &full) { tailBytes in
                if let pointer = tailBytes.baseAddress { stripe(pointer) }
            }
            tailCount = 0
        }
        while count - index >= 32 {
            stripe(base + index)
            index += 32
        }
        let rest = count - index
        if rest > 0 {
            withUnsafeMutableBytes(of: &tail) { tailBytes in
                tailBytes.baseAddress?.copyMemory(from: base + index, byteCount: rest)
            }
            tailCount = rest
        }
    }

    /// The hash of every byte added so far.
    func digest() -> UInt64 {
        var hash: UInt64
        if length >= 32 {
            hash =
                ((lane1 << 1) | (lane1 >> 63)) &+ ((lane2 << 7) | (lane2 >> 57))
                &+ ((lane3 << 12) | (lane3 >> 52)) &+ ((lane4 << 18) | (lane4 >> 46))
            hash = Self.merge(hash, lane1)
            hash = Self.merge(hash, lane2)
            hash = Self.merge(hash, lane3)
            hash = Self.merge(hash, lane4)
        } else {
            hash = seed &+ Self.prime5
        }
        hash &+= length
        var rest = tail
        let count = tailCount
        withUnsafeBytes(of: &rest) { bytes in
            var index = 0
            while count - index >= 8 {
                let lane = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                hash ^= Self.round(0, lane)
                hash = ((hash << 27) | (hash >> 37)) &* Self.prime1 &+ Self.prime4
                index += 8
            }
            if count - index >= 4 {
                let word = UInt64(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: index, as: UInt32.self)))
                hash ^= word &* Self.prime1
                hash = ((hash << 23) | (hash >> 41)) &* Self.prime2 &+ Self.prime3
                index += 4
            }
            while index < count {
                hash ^= UInt64(bytes[index]) &* Self.prime5
                hash = ((hash << 11) | (hash >> 53)) &* Self.prime1
                index += 1
            }
        }
        hash ^= hash >> 33
        hash &*= Self.prime2
        hash ^= hash >> 29
        hash &*= Self.prime3
        hash ^= hash >> 32
        return hash
    }
}
