/// The error every Zstandard rule violation becomes.
@inline(never)
func zstdMalformed(_ detail: String) -> ContentDecodingError {
    .malformed(coding: "zstd", detail: detail)
}

/// A Zstandard bitstream read backwards (RFC 8878, section 4.1): from its last byte, whose highest set bit marks the
/// end, toward its first. Bits are taken from the top of a 64-bit window that `reload` moves back through the bytes.
///
/// Reading past the first byte is not checked on each read: it gives zero bits (or, far past, meaningless ones), and
/// `remainingBits` turns negative, which callers check before they trust what they decoded.
struct ZstdBackwardBits {
    private let base: UnsafeRawPointer
    /// Where the 64-bit window starts in the stream; 0 for streams shorter than 8 bytes.
    private var position: Int
    private var window: UInt64
    /// Bits already taken from the top of `window`.
    private(set) var consumed: Int
    /// Low bits of `window` that are no part of a stream shorter than 8 bytes.
    private let padding: Int

    /// Starts at the end mark of `stream`, which must not be empty nor end with a zero byte.
    init(_ stream: UnsafeRawBufferPointer, what: String) throws {
        guard let base = stream.baseAddress, let last = stream.last else {
            throw zstdMalformed("\(what) is empty")
        }
        guard last != 0 else { throw zstdMalformed("\(what) does not end with its padding bit") }
        self.base = base
        let count = stream.count
        if count >= 8 {
            position = count - 8
            window = UInt64(littleEndian: (base + position).loadUnaligned(as: UInt64.self))
            padding = 0
        } else {
            position = 0
            var value: UInt64 = 0
            for index in 0..<count {
                value |= UInt64(stream[index]) << UInt64(8 * (8 - count + index))
            }
            window = value
            padding = 8 * (8 - count)
        }
        consumed = last.leadingZeroBitCount + 1
    }

    /// Bits not read yet: 0 when the stream was read exactly to its start, negative when reads went past it.
    var remainingBits: Int { position &* 8 &+ 64 &- consumed &- padding }

    /// The next `count` bits (0...56), as a little-endian value, consumed.
    @inline(__always)
    mutating func read(_ count: Int) -> Int {
        let aligned = window &<< UInt64(truncatingIfNeeded: consumed)
        let value = (aligned &>> 1) &>> UInt64(truncatingIfNeeded: 63 &- count)
        consumed &+= count
        return Int(truncatingIfNeeded: value)
    }

    /// The next `count` bits (1...56) without consuming them.
    @inline(__always)
    func peek(_ count: Int) -> Int {
        let aligned = window &<< UInt64(truncatingIfNeeded: consumed)
        return Int(truncatingIfNeeded: aligned &>> UInt64(truncatingIfNeeded: 64 &- count))
    }

    @inline(__always)
    mutating func skip(_ count: Int) { consumed &+= count }

    /// Moves the window back so that at least 57 bits are ready, unless the stream's start is nearer.
    @inline(__always)
    mutating func reload() {
        let step = min(consumed >> 3, position)
        if step > 0 {
            position &-= step
            consumed &-= step << 3
            window = UInt64(littleEndian: (base + position).loadUnaligned(as: UInt64.self))
        }
    }
}

/// A little-endian bitstream read forwards, for FSE table descriptions. Bits past the end read as zero; taking them
/// is an error.
struct ZstdForwardBits {
    private let bytes: UnsafeRawBufferPointer
    private(set) var bitPosition = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    func peek(_ count: Int) -> Int {
        var value = 0
        var taken = 0
        var position = bitPosition
        while taken < count {
            let byteIndex = position >> 3
            guard byteIndex < bytes.count else { break }
            let offset = position & 7
            let available = min(8 - offset, count - taken)
            let bits = (Int(bytes[byteIndex]) >> offset) & ((1 << available) - 1)
            value |= bits << taken
            taken += available
            position += available
        }
        return value
    }

    mutating func skip(_ count: Int, what: String) throws {
        bitPosition += count
        guard bitPosition <= bytes.count * 8 else { throw zstdMalformed("\(what) runs past its end") }
    }

    mutating func read(_ count: Int, what: String) throws -> Int {
        let value = peek(count)
        try skip(count, what: what)
        return value
    }
}

/// One state of an FSE decoding table: the symbol it decodes, and how the next state is reached.
struct ZstdFSECell: Sendable {
    var symbol: UInt8
    var bits: UInt8
    var base: UInt16
}

enum ZstdFSE {
    /// Reads an FSE table description (RFC 8878, section 4.1.1) at the start of `source`: the normalized probabilities
    /// (-1 meaning "less than 1"), the accuracy log, and how many bytes the description took.
    static func readDistribution(
        _ source: UnsafeRawBufferPointer, maximumSymbol: Int, maximumLog: Int, what: String
    ) throws -> (probabilities: [Int16], log: Int, size: Int) {
        guard !source.isEmpty else { throw zstdMalformed("the \(what) table description is missing") }
        var bits = ZstdForwardBits(source)
        let label = "the \(what) table description"
        let log = try bits.read(4, what: label) + 5
        guard log <= maximumLog else {
            throw zstdMalformed("the \(what) table's accuracy log \(log) is above the maximum \(maximumLog)")
        }
        var remaining = 1 << log
        var probabilities: [Int16] = []
        probabilities.reserveCapacity(maximumSymbol + 1)
        while remaining > 0 {
            guard probabilities.count <= maximumSymbol else {
                throw zstdMalformed("the \(what) table describes symbols past the largest, \(maximumSymbol)")
            }
            let largest = remaining + 1
            let width = Int.bitWidth - largest.leadingZeroBitCount
            let lowCount = (1 << width) - 1 - largest
            let raw = bits.peek(width)
            let low = raw & ((1 << (width - 1)) - 1)
            let value: Int
            if low < lowCount {
                value = low
                try bits.skip(width - 1, what: label)
            } else {
                value = raw >= (1 << (width - 1)) ? raw - lowCount : raw
                try bits.skip(width, what: label)
            }
            let probability = value - 1
            probabilities.append(Int16(probability))
            remaining -= probability < 0 ? 1 : probability
            if probability == 0 {
                while true {
                    let repeats = try bits.read(2, what: label)
                    guard probabilities.count + repeats <= maximumSymbol + 1 else {
                        throw zstdMalformed("the \(what) table describes symbols past the largest, \(maximumSymbol)")
                    }
                    probabilities.append(contentsOf: repeatElement(0, count: repeats))
                    if repeats != 3 { break }
                }
            }
        }
        return (probabilities, log, (bits.bitPosition + 7) >> 3)
    }

    /// Builds the decoding table of a normalized distribution whose magnitudes add up to `1 << log`.
    static func buildTable(_ probabilities: [Int16], log: Int, what: String) throws -> [ZstdFSECell] {
        let size = 1 << log
        var cells = [ZstdFSECell](repeating: ZstdFSECell(symbol: 0, bits: 0, base: 0), count: size)
        var next = [Int](repeating: 0, count: probabilities.count)
        var highest = size - 1
        for (symbol, probability) in probabilities.enumerated() where probability != 0 {
            if probability < 0 {
                guard highest >= 0 else { throw zstdMalformed("the \(what) table is over-subscribed") }
                cells[highest].symbol = UInt8(truncatingIfNeeded: symbol)
                highest -= 1
                next[symbol] = 1
            } else {
                next[symbol] = Int(probability)
            }
        }
        let step = (size >> 1) + (size >> 3) + 3
        let mask = size - 1
        var position = 0
        for (symbol, probability) in probabilities.enumerated() where probability > 0 {
            for _ in 0..<Int(probability) {
                cells[position].symbol = UInt8(truncatingIfNeeded: symbol)
                repeat {
                    position = (position + step) & mask
                } while position > highest
            }
        }
        guard position == 0 else { throw zstdMalformed("the \(what) table does not fill its states") }
        for state in 0..<size {
            let symbol = Int(cells[state].symbol)
            let occurrence = next[symbol]
            next[symbol] = occurrence + 1
            let bits = log - (Int.bitWidth - 1 - occurrence.leadingZeroBitCount)
            cells[state].bits = UInt8(truncatingIfNeeded: bits)
            cells[state].base = UInt16(truncatingIfNeeded: (occurrence << bits) - size)
        }
        return cells
    }
}

/// A Huffman decoding table for literals (RFC 8878, section 4.2): indexed by the next `maximumBits` bits, each entry
/// holds the symbol in its low byte and its code length in the high byte.
struct ZstdHuffmanTable: Sendable {
    var entries: [UInt16]
    var maximumBits: Int

    /// Reads a Huffman tree description at the start of `source`; returns the table and the description's size.
    static func read(_ source: UnsafeRawBufferPointer) throws -> (table: ZstdHuffmanTable, size: Int) {
        guard let header = source.first else { throw zstdMalformed("the Huffman tree description is missing") }
        var weights = [UInt8]()
        weights.reserveCapacity(256)
        let size: Int
        if header >= 128 {
            let count = Int(header) - 127
            size = 1 + (count + 1) / 2
            guard size <= source.count else { throw zstdMalformed("the Huffman weights run past the literals section") }
            for index in 0..<count {
                let byte = source[1 + index / 2]
                weights.append(index & 1 == 0 ? byte >> 4 : byte & 0x0F)
            }
        } else {
            size = 1 + Int(header)
            guard size <= source.count else { throw zstdMalformed("the Huffman weights run past the literals section") }
            let body = UnsafeRawBufferPointer(rebasing: source[1..<size])
            weights = try readCompressedWeights(body)
        }
        return (try build(weights), size)
    }

    /// Decodes FSE-compressed weights: two states over one table take turns until the bitstream runs out.
    private static func readCompressedWeights(_ body: UnsafeRawBufferPointer) throws -> [UInt8] {
        let (probabilities, log, used) = try ZstdFSE.readDistribution(
            body, maximumSymbol: 255, maximumLog: 6, what: "Huffman weights")
        let cells = try ZstdFSE.buildTable(probabilities, log: log, what: "Huffman weights")
        guard used < body.count else { throw zstdMalformed("the Huffman weights have no bitstream") }
        var bits = try ZstdBackwardBits(
            UnsafeRawBufferPointer(rebasing: body[used...]), what: "the Huffman weights bitstream")
        let mask = cells.count - 1
        var first = bits.read(log) & mask
        var second = bits.read(log) & mask
        guard bits.remainingBits >= 0 else { throw zstdMalformed("the Huffman weights bitstream is too short") }
        var weights = [UInt8]()
        while true {
            bits.reload()
            var cell = cells[first]
            weights.append(cell.symbol)
            first = (Int(cell.base) + bits.read(Int(cell.bits))) & mask
            if bits.remainingBits < 0 {
                weights.append(cells[second].symbol)
                break
            }
            cell = cells[second]
            weights.append(cell.symbol)
            second = (Int(cell.base) + bits.read(Int(cell.bits))) & mask
            if bits.remainingBits < 0 {
                weights.append(cells[first].symbol)
                break
            }
            guard weights.count <= 255 else {
                throw zstdMalformed("the Huffman weights describe more than 255 symbols")
            }
        }
        guard weights.count <= 255 else { throw zstdMalformed("the Huffman weights describe more than 255 symbols") }
        return weights
    }

    /// Completes the weights with the last symbol's and builds the table, refusing a set that is not a prefix code.
    static func build(_ given: [UInt8]) throws -> ZstdHuffmanTable {
        var total = 0
        for weight in given where weight > 0 {
            guard weight <= 11 else { throw zstdMalformed("a Huffman weight of \(weight) is above the maximum 11") }
            total += 1 << (Int(weight) - 1)
        }
        guard total > 0 else { throw zstdMalformed("the Huffman weights describe no symbol") }
        let maximumBits = Int.bitWidth - total.leadingZeroBitCount
        guard maximumBits <= 11 else { throw zstdMalformed("the Huffman codes are longer than 11 bits") }
        let rest = (1 << maximumBits) - total
        guard rest & (rest - 1) == 0 else {
            throw zstdMalformed("the Huffman weights do not make a complete prefix code")
        }
        let lastWeight = UInt8(Int.bitWidth - rest.leadingZeroBitCount)
        var weights = given
        weights.append(lastWeight)
        guard weights.contains(1) else { throw zstdMalformed("no Huffman weight is 1") }
        var entries = [UInt16](repeating: 0, count: 1 << maximumBits)
        var position = 0
        for weight in 1...maximumBits {
            let length = UInt16(maximumBits + 1 - weight)
            let span = 1 << (weight - 1)
            for (symbol, symbolWeight) in weights.enumerated() where Int(symbolWeight) == weight {
                let entry = UInt16(truncatingIfNeeded: symbol) | (length << 8)
                for index in position..<(position + span) { entries[index] = entry }
                position += span
            }
        }
        return ZstdHuffmanTable(entries: entries, maximumBits: maximumBits)
    }
}
