/// Reads a brotli stream's bits, least significant first, from a buffer of input (RFC 7932 section 1.5.1).
///
/// Past the end of the buffer it reads zeros and only notes the overrun: a unit (a header field, one command) is
/// decoded without a check per read, then dropped and retried with more input when `overran` says it ran past the end.
/// Nothing a decoder commits may depend on bits read past the end, so every unit checks `overran` before committing.
struct BrotliBitReader {
    let bytes: UnsafeBufferPointer<UInt8>
    /// The index of the next byte to load into `accumulator` (past `bytes.count` once zeros are read).
    private var next: Int
    /// Loaded bits not yet consumed, the next bit lowest. Bits above `available` hold the next bytes or zeros.
    private var accumulator: UInt64 = 0
    private var available: Int = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>, bitPosition: Int) {
        self.bytes = bytes
        self.next = bitPosition >> 3
        refill()
        skip(bitPosition & 7)
    }

    /// The number of bits consumed from the start of `bytes`.
    var position: Int { next &* 8 &- available }

    /// The bits left in `bytes` (negative after an overrun).
    var bitsLeft: Int { bytes.count &* 8 &- position }

    /// Whether more bits were consumed than `bytes` holds.
    var overran: Bool { position > bytes.count &* 8 }

    /// Goes back (or forward) to a position reached before, as when a unit is dropped.
    mutating func reset(to bitPosition: Int) {
        next = bitPosition >> 3
        accumulator = 0
        available = 0
        refill()
        skip(bitPosition & 7)
    }

    /// Makes at least 57 bits available.
    @inline(__always)
    mutating func refill() {
        guard available <= 56 else { return }
        if next &+ 8 <= bytes.count, let base = bytes.baseAddress {
            let word = UInt64(littleEndian: UnsafeRawPointer(base + next).loadUnaligned(as: UInt64.self))
            accumulator |= word << UInt64(available)
            let loaded = (63 &- available) >> 3
            next &+= loaded
            available &+= loaded << 3
        } else {
            slowRefill()
        }
    }

    private mutating func slowRefill() {
        while available <= 56 {
            let byte: UInt64 = next < bytes.count ? UInt64(bytes[next]) : 0
            accumulator |= byte << UInt64(available)
            next &+= 1
            available &+= 8
        }
    }

    /// Drops `count` bits (at most what is available, so at most 57 after a refill).
    @inline(__always)
    mutating func skip(_ count: Int) {
        accumulator >>= UInt64(count)
        available &-= count
    }

    /// The next `count` bits (0...32) as an unsigned number, consumed.
    @inline(__always)
    mutating func read(_ count: Int) -> Int {
        refill()
        let value = Int(truncatingIfNeeded: accumulator & ((1 << UInt64(count)) &- 1))
        skip(count)
        return value
    }

    /// The next `count` bits (0...32) without consuming them.
    @inline(__always)
    mutating func peek(_ count: Int) -> Int {
        refill()
        return Int(truncatingIfNeeded: accumulator & ((1 << UInt64(count)) &- 1))
    }

    /// The bits up to the next byte boundary, consumed.
    mutating func readToByteBoundary() -> Int {
        read((8 &- (position & 7)) & 7)
    }

    /// Decodes one symbol with the table `BrotliPrefixCode.appendTable` made at `base` in `table` (root 8 bits).
    @inline(__always)
    mutating func decode(_ table: UnsafeBufferPointer<UInt32>, at base: Int) -> Int {
        refill()
        return decodeFilled(table, at: base)
    }

    /// `decode` without the refill: the caller made sure at least 15 bits (the longest code) are available.
    @inline(__always)
    mutating func decodeFilled(_ table: UnsafeBufferPointer<UInt32>, at base: Int) -> Int {
        let entry = table[base &+ Int(truncatingIfNeeded: accumulator & 0xFF)]
        let length = Int(truncatingIfNeeded: entry & 0xFF)
        if length <= BrotliPrefixCode.rootBits {
            skip(length)
            return Int(truncatingIfNeeded: entry >> 16)
        }
        skip(BrotliPrefixCode.rootBits)
        let subBits = UInt64(length &- BrotliPrefixCode.rootBits)
        let index =
            base &+ Int(truncatingIfNeeded: entry >> 16)
            &+ Int(truncatingIfNeeded: accumulator & ((1 << subBits) &- 1))
        let second = table[index]
        skip(Int(truncatingIfNeeded: second & 0xFF))
        return Int(truncatingIfNeeded: second >> 16)
    }
}

/// Builds the lookup tables of canonical prefix codes (RFC 7932 section 3.2).
///
/// A table is a root of 256 entries indexed by the next 8 bits; codes longer than 8 bits continue in a second-level
/// table linked from the root. An entry is `symbol << 16 | bits` (bits to consume, 0...8 in the root), or in the root
/// `offset << 16 | (8 + subBits)`, a link to the second-level table of `1 << subBits` entries at `offset` from the
/// root (its entries' bits count what follows the root's 8).
enum BrotliPrefixCode {
    static let rootBits = 8
    static let maximumLength = 15

    /// Appends the table of a code with one symbol, coded with no bits.
    static func appendSingleSymbolTable(_ symbol: Int, to store: inout [UInt32]) {
        store.append(contentsOf: repeatElement(UInt32(symbol) << 16, count: 1 << rootBits))
    }

    /// Appends the table of the canonical code with these code lengths (0 for an unused symbol, else 1...15) and
    /// returns its offset, or nil when the lengths do not make a complete code (over-subscribed or incomplete).
    static func appendTable(lengths: [UInt8], to store: inout [UInt32]) -> Int? {
        var counts = [Int](repeating: 0, count: maximumLength + 1)
        for length in lengths where length > 0 {
            guard Int(length) <= maximumLength else { return nil }
            counts[Int(length)] += 1
        }
        var space = 1 << maximumLength
        for length in 1...maximumLength { space -= counts[length] << (maximumLength - length) }
        guard space == 0 else { return nil }

        // Symbols in canonical order: by code length, then by symbol.
        var starts = [Int](repeating: 0, count: maximumLength + 2)
        for length in 1...maximumLength { starts[length + 1] = starts[length] + counts[length] }
        var sorted = [Int](repeating: 0, count: starts[maximumLength + 1])
        for (symbol, length) in lengths.enumerated() where length > 0 {
            sorted[starts[Int(length)]] = symbol
            starts[Int(length)] += 1
        }

        let base = store.count
        let rootSize = 1 << rootBits
        store.append(contentsOf: repeatElement(0, count: rootSize))
        var code = 0
        var index = 0
        var remaining = counts
        var currentRoot = -1
        var subBase = 0
        var subBits = 0
        for length in 1...maximumLength {
            for _ in 0..<counts[length] {
                let symbol = sorted[index]
                index += 1
                let reversed = reverseBits(code, length)
                if length <= rootBits {
                    var slot = reversed
                    while slot < rootSize {
                        store[base + slot] = UInt32(symbol) << 16 | UInt32(length)
                        slot += 1 << length
                    }
                } else {
                    let root = reversed & (rootSize - 1)
                    if root != currentRoot {
                        // The codes from here sharing these 8 bits fill a subtree: size its table by them.
                        subBits = length - rootBits
                        var left = 1 << subBits
                        var depth = length
                        while true {
                            left -= remaining[depth]
                            if left <= 0 || depth == maximumLength { break }
                            depth += 1
                            subBits += 1
                            left <<= 1
                        }
                        subBase = store.count
                        store.append(contentsOf: repeatElement(0, count: 1 << subBits))
                        store[base + root] = UInt32(subBase - base) << 16 | UInt32(rootBits + subBits)
                        currentRoot = root
                    }
                    let step = 1 << (length - rootBits)
                    var slot = reversed >> rootBits
                    while slot < 1 << subBits {
                        store[subBase + slot] = UInt32(symbol) << 16 | UInt32(length - rootBits)
                        slot += step
                    }
                }
                remaining[length] -= 1
                code += 1
            }
            code <<= 1
        }
        return base
    }

    private static func reverseBits(_ value: Int, _ count: Int) -> Int {
        var result = 0
        var value = value
        for _ in 0..<count {
            result = result << 1 | value & 1
            value >>= 1
        }
        return result
    }
}
