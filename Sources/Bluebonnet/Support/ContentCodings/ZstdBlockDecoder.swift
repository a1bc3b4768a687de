/// Decodes the blocks of one Zstandard frame at a time (RFC 8878, section 3.1.1.2) and keeps what the frame's blocks
/// share: the last `windowSize` bytes produced (the history matches copy from), the Huffman table treeless literals
/// reuse, the three sequence tables Repeat_Mode reuses, and the repeat offsets.
///
/// A block is decoded into `block`; literals into `literals`. Both hold `slack` bytes past the largest block so that
/// literal and match copies may move 16 bytes at a time, writing at most 15 bytes past where they end.
struct ZstdBlockDecoder {
    static let slack = 32
    static let largestBlock = 128 << 10

    private(set) var windowSize = 0
    private(set) var blockMaximumSize = 0
    private var literals: [UInt8] = []
    private var literalCount = 0
    private var block: [UInt8] = []
    /// A ring of the last `min(windowSize, produced)` bytes: filled in order until it holds `windowSize` bytes, then
    /// overwritten from `historyEnd` on. It grows as the frame produces bytes, up to `windowSize`.
    private var history: [UInt8] = []
    private var historyCount = 0
    private var historyEnd = 0
    private var huffman: ZstdHuffmanTable?
    private var literalLengthTable: ZstdSequenceTable?
    private var offsetTable: ZstdSequenceTable?
    private var matchLengthTable: ZstdSequenceTable?
    private var repeatOffsets = (1, 4, 8)

    /// Forgets the previous frame and sizes the buffers for a frame of `windowSize` (already checked against the
    /// decoder's limit).
    mutating func startFrame(windowSize: Int) {
        self.windowSize = windowSize
        blockMaximumSize = min(windowSize, Self.largestBlock)
        let needed = blockMaximumSize + Self.slack
        if literals.count < needed { literals = [UInt8](repeating: 0, count: needed) }
        if block.count < needed { block = [UInt8](repeating: 0, count: needed) }
        if history.count > windowSize + Self.slack { history = [] }
        historyCount = 0
        historyEnd = 0
        huffman = nil
        literalLengthTable = nil
        offsetTable = nil
        matchLengthTable = nil
        repeatOffsets = (1, 4, 8)
    }

    // MARK: Output

    /// Hands a block's decoded bytes on: into the history, the checksum, then `output`.
    mutating func emit(
        _ bytes: UnsafeRawBufferPointer, checksum: inout XXHash64?,
        output: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        remember(bytes)
        checksum?.update(bytes)
        if !bytes.isEmpty { try output(bytes) }
    }

    /// Emits the first `count` bytes of `block`.
    mutating func emitBlock(
        count: Int, checksum: inout XXHash64?, output: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let produced = block
        try produced.withUnsafeBytes { all in
            try emit(UnsafeRawBufferPointer(rebasing: all[0..<count]), checksum: &checksum, output: output)
        }
    }

    private mutating func growHistory(to needed: Int) {
        guard history.count < needed + Self.slack else { return }
        let count = min(windowSize, max(needed, history.count * 2, 1 << 16)) + Self.slack
        var grown = [UInt8](repeating: 0, count: count)
        let kept = historyCount
        if kept > 0 {
            grown.withUnsafeMutableBytes { target in
                history.withUnsafeBytes { source in
                    UnsafeMutableRawBufferPointer(rebasing: target[0..<kept])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: source[0..<kept]))
                }
            }
        }
        history = grown
    }

    /// Adds produced bytes to the history ring.
    private mutating func remember(_ bytes: UnsafeRawBufferPointer) {
        let window = windowSize
        guard window > 0, !bytes.isEmpty else { return }
        var source = bytes
        if source.count >= window {
            source = UnsafeRawBufferPointer(rebasing: source[(source.count - window)...])
            growHistory(to: window)
            history.withUnsafeMutableBytes { ring in
                UnsafeMutableRawBufferPointer(rebasing: ring[0..<window]).copyMemory(from: source)
            }
            historyCount = window
            historyEnd = 0
            return
        }
        if historyCount < window {
            let take = min(source.count, window - historyCount)
            growHistory(to: historyCount + take)
            let start = historyCount
            history.withUnsafeMutableBytes { ring in
                UnsafeMutableRawBufferPointer(rebasing: ring[start..<(start + take)])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: source[0..<take]))
            }
            historyCount += take
            source = UnsafeRawBufferPointer(rebasing: source[take...])
            if historyCount < window { return }
            historyEnd = 0
        }
        while !source.isEmpty {
            let end = historyEnd
            let take = min(source.count, window - end)
            history.withUnsafeMutableBytes { ring in
                UnsafeMutableRawBufferPointer(rebasing: ring[end..<(end + take)])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: source[0..<take]))
            }
            historyEnd = end + take == window ? 0 : end + take
            source = UnsafeRawBufferPointer(rebasing: source[take...])
        }
    }

    // MARK: Blocks

    /// Fills `block` with `count` copies of `byte` (an RLE_Block); returns `count`.
    mutating func decodeRLE(_ byte: UInt8, count: Int) -> Int {
        block.withUnsafeMutableBufferPointer { output in
            UnsafeMutableBufferPointer(rebasing: output[0..<count]).update(repeating: byte)
        }
        return count
    }

    /// Decodes a Compressed_Block into `block`; returns how many bytes it produced.
    mutating func decodeCompressed(_ source: UnsafeRawBufferPointer) throws -> Int {
        let literalsSize = try decodeLiterals(source)
        return try decodeSequences(UnsafeRawBufferPointer(rebasing: source[literalsSize...]))
    }

    // MARK: Literals

    /// Decodes the Literals_Section at the start of `source` into `literals`; returns the section's size.
    private mutating func decodeLiterals(_ source: UnsafeRawBufferPointer) throws -> Int {
        guard let first = source.first else { throw zstdMalformed("a compressed block has no literals section") }
        let type = Int(first & 3)
        let format = Int(first >> 2) & 3
        if type < 2 {
            let headerSize: Int
            let size: Int
            switch format {
            case 1:
                headerSize = 2
                guard source.count >= 2 else { throw zstdMalformed("the literals section header is cut short") }
                size = Int(first >> 4) + Int(source[1]) << 4
            case 3:
                headerSize = 3
                guard source.count >= 3 else { throw zstdMalformed("the literals section header is cut short") }
                size = Int(first >> 4) + Int(source[1]) << 4 + Int(source[2]) << 12
            default:
                headerSize = 1
                size = Int(first >> 3)
            }
            guard size <= blockMaximumSize else {
                throw zstdMalformed("the literals section holds \(size) bytes, more than the block maximum")
            }
            literalCount = size
            if type == 0 {
                guard source.count - headerSize >= size else {
                    throw zstdMalformed("the raw literals run past the end of their block")
                }
                literals.withUnsafeMutableBytes { target in
                    UnsafeMutableRawBufferPointer(rebasing: target[0..<size])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: source[headerSize..<(headerSize + size)]))
                }
                return headerSize + size
            }
            guard source.count > headerSize else { throw zstdMalformed("the RLE literals have no byte") }
            let byte = source[headerSize]
            literals.withUnsafeMutableBufferPointer { target in
                UnsafeMutableBufferPointer(rebasing: target[0..<size]).update(repeating: byte)
            }
            return headerSize + 1
        }
        let headerSize = format == 3 ? 5 : (format == 2 ? 4 : 3)
        let sizeBits = format == 3 ? 18 : (format == 2 ? 14 : 10)
        guard source.count >= headerSize else { throw zstdMalformed("the literals section header is cut short") }
        var header = 0
        for index in 0..<headerSize { header |= Int(source[index]) << (8 * index) }
        let sizeMask = (1 << sizeBits) - 1
        let regenerated = (header >> 4) & sizeMask
        let compressed = (header >> (4 + sizeBits)) & sizeMask
        guard regenerated <= blockMaximumSize else {
            throw zstdMalformed("the literals section holds \(regenerated) bytes, more than the block maximum")
        }
        guard compressed <= source.count - headerSize else {
            throw zstdMalformed("the compressed literals run past the end of their block")
        }
        var payload = UnsafeRawBufferPointer(rebasing: source[headerSize..<(headerSize + compressed)])
        if type == 2 {
            let (table, size) = try ZstdHuffmanTable.read(payload)
            huffman = table
            payload = UnsafeRawBufferPointer(rebasing: payload[size...])
        }
        guard let table = huffman else {
            throw zstdMalformed("treeless literals come before any Huffman table in the frame")
        }
        try decodeHuffman(payload, table: table, fourStreams: format != 0, count: regenerated)
        literalCount = regenerated
        return headerSize + compressed
    }

    private mutating func decodeHuffman(
        _ payload: UnsafeRawBufferPointer, table: ZstdHuffmanTable, fourStreams: Bool, count: Int
    ) throws {
        let bits = table.maximumBits
        try literals.withUnsafeMutableBufferPointer { target in
            guard let output = target.baseAddress else { return }
            try table.entries.withUnsafeBufferPointer { entriesBuffer in
                guard let entries = entriesBuffer.baseAddress else { return }
                if !fourStreams {
                    try Self.decodeStream(payload, into: output, count: count, entries: entries, bits: bits)
                    return
                }
                guard payload.count >= 10 else {
                    throw zstdMalformed("four Huffman streams need at least 10 bytes, the section has \(payload.count)")
                }
                let size1 = Int(payload[0]) | Int(payload[1]) << 8
                let size2 = Int(payload[2]) | Int(payload[3]) << 8
                let size3 = Int(payload[4]) | Int(payload[5]) << 8
                let total = payload.count - 6
                guard size1 + size2 + size3 < total else {
                    throw zstdMalformed("the Huffman jump table's stream sizes exceed the literals section")
                }
                let segment = (count + 3) / 4
                guard 3 * segment <= count else {
                    throw zstdMalformed("\(count) literals cannot be split into four Huffman streams")
                }
                let start2 = 6 + size1
                let start3 = start2 + size2
                let start4 = start3 + size3
                let what = "a Huffman-coded literals stream"
                var readers = (
                    try ZstdBackwardBits(UnsafeRawBufferPointer(rebasing: payload[6..<start2]), what: what),
                    try ZstdBackwardBits(UnsafeRawBufferPointer(rebasing: payload[start2..<start3]), what: what),
                    try ZstdBackwardBits(UnsafeRawBufferPointer(rebasing: payload[start3..<start4]), what: what),
                    try ZstdBackwardBits(UnsafeRawBufferPointer(rebasing: payload[start4...]), what: what)
                )
                let lastSegment = count - 3 * segment
                let outputs = (output, output + segment, output + 2 * segment, output + 3 * segment)
                // The four streams in step while each has 4 symbols left (the last stream is the shortest).
                var index = 0
                while lastSegment - index >= 4 {
                    readers.0.reload()
                    readers.1.reload()
                    readers.2.reload()
                    readers.3.reload()
                    for step in 0..<4 {
                        let entry0 = entries[readers.0.peek(bits)]
                        let entry1 = entries[readers.1.peek(bits)]
                        let entry2 = entries[readers.2.peek(bits)]
                        let entry3 = entries[readers.3.peek(bits)]
                        outputs.0[index + step] = UInt8(truncatingIfNeeded: entry0)
                        outputs.1[index + step] = UInt8(truncatingIfNeeded: entry1)
                        outputs.2[index + step] = UInt8(truncatingIfNeeded: entry2)
                        outputs.3[index + step] = UInt8(truncatingIfNeeded: entry3)
                        readers.0.skip(Int(entry0 >> 8))
                        readers.1.skip(Int(entry1 >> 8))
                        readers.2.skip(Int(entry2 >> 8))
                        readers.3.skip(Int(entry3 >> 8))
                    }
                    index += 4
                }
                try Self.finishStream(&readers.0, outputs.0, from: index, to: segment, entries: entries, bits: bits)
                try Self.finishStream(&readers.1, outputs.1, from: index, to: segment, entries: entries, bits: bits)
                try Self.finishStream(&readers.2, outputs.2, from: index, to: segment, entries: entries, bits: bits)
                try Self.finishStream(&readers.3, outputs.3, from: index, to: lastSegment, entries: entries, bits: bits)
            }
        }
    }

    /// Decodes one stream's literals from `index` to `end`, then checks the stream was read exactly to its first bit.
    @inline(__always)
    private static func finishStream(
        _ reader: inout ZstdBackwardBits, _ output: UnsafeMutablePointer<UInt8>, from start: Int, to end: Int,
        entries: UnsafePointer<UInt16>, bits: Int
    ) throws {
        var index = start
        while index < end {
            reader.reload()
            let entry = entries[reader.peek(bits)]
            output[index] = UInt8(truncatingIfNeeded: entry)
            reader.skip(Int(entry >> 8))
            index += 1
        }
        guard reader.remainingBits == 0 else {
            throw zstdMalformed("a Huffman-coded literals stream does not end exactly at its first bit")
        }
    }

    /// Decodes `count` literals from one Huffman-coded stream, which must be read exactly to its first bit.
    @inline(__always)
    private static func decodeStream(
        _ stream: UnsafeRawBufferPointer, into output: UnsafeMutablePointer<UInt8>, count: Int,
        entries: UnsafePointer<UInt16>, bits: Int
    ) throws {
        var reader = try ZstdBackwardBits(stream, what: "a Huffman-coded literals stream")
        var index = 0
        while count - index >= 4 {
            reader.reload()
            var entry = entries[reader.peek(bits)]
            output[index] = UInt8(truncatingIfNeeded: entry)
            reader.skip(Int(entry >> 8))
            entry = entries[reader.peek(bits)]
            output[index + 1] = UInt8(truncatingIfNeeded: entry)
            reader.skip(Int(entry >> 8))
            entry = entries[reader.peek(bits)]
            output[index + 2] = UInt8(truncatingIfNeeded: entry)
            reader.skip(Int(entry >> 8))
            entry = entries[reader.peek(bits)]
            output[index + 3] = UInt8(truncatingIfNeeded: entry)
            reader.skip(Int(entry >> 8))
            index += 4
        }
        try finishStream(&reader, output, from: index, to: count, entries: entries, bits: bits)
    }

    // MARK: Sequences

    private static func table(
        mode: UInt8, kind: ZstdSequenceTable.Kind, previous: ZstdSequenceTable?,
        source: UnsafeRawBufferPointer, index: inout Int
    ) throws -> ZstdSequenceTable {
        switch mode {
        case 0:
            return ZstdSequenceTable.predefined(kind)
        case 1:
            guard index < source.count else { throw zstdMalformed("the \(kind.name) RLE symbol is missing") }
            let table = try ZstdSequenceTable.rle(source[index], kind: kind)
            index += 1
            return table
        case 2:
            let (table, size) = try ZstdSequenceTable.read(
                UnsafeRawBufferPointer(rebasing: source[index...]), kind: kind)
            index += size
            return table
        default:
            guard let previous else {
                throw zstdMalformed("the \(kind.name) table repeats a previous one, but the frame has none yet")
            }
            return previous
        }
    }

    /// Decodes the Sequences_Section and executes it, writing the block's bytes; returns how many.
    private mutating func decodeSequences(_ source: UnsafeRawBufferPointer) throws -> Int {
        guard let first = source.first else { throw zstdMalformed("a compressed block has no sequences section") }
        var count = Int(first)
        var index = 1
        if first == 255 {
            guard source.count >= 3 else { throw zstdMalformed("the sequences section header is cut short") }
            count = Int(source[1]) + Int(source[2]) << 8 + 0x7F00
            index = 3
        } else if first >= 128 {
            guard source.count >= 2 else { throw zstdMalformed("the sequences section header is cut short") }
            count = (Int(first) - 128) << 8 + Int(source[1])
            index = 2
        }
        if count == 0 {
            guard index == source.count else {
                throw zstdMalformed("bytes follow a sequences section that has no sequences")
            }
            let size = literalCount
            let kept = literals
            block.withUnsafeMutableBytes { target in
                kept.withUnsafeBytes { source in
                    UnsafeMutableRawBufferPointer(rebasing: target[0..<size])
                        .copyMemory(from: UnsafeRawBufferPointer(rebasing: source[0..<size]))
                }
            }
            return size
        }
        guard index < source.count else { throw zstdMalformed("the sequences section has no compression modes") }
        let modes = source[index]
        index += 1
        guard modes & 3 == 0 else { throw zstdMalformed("the sequences compression modes' reserved bits are set") }
        let literalLengths = try Self.table(
            mode: modes >> 6, kind: .literalLengths, previous: literalLengthTable, source: source, index: &index)
        let offsets = try Self.table(
            mode: (modes >> 4) & 3, kind: .offsets, previous: offsetTable, source: source, index: &index)
        let matchLengths = try Self.table(
            mode: (modes >> 2) & 3, kind: .matchLengths, previous: matchLengthTable, source: source, index: &index)
        literalLengthTable = literalLengths
        offsetTable = offsets
        matchLengthTable = matchLengths
        return try execute(
            count: count, stream: UnsafeRawBufferPointer(rebasing: source[index...]),
            literalLengths: literalLengths, offsets: offsets, matchLengths: matchLengths)
    }

    private mutating func execute(
        count: Int, stream: UnsafeRawBufferPointer, literalLengths: ZstdSequenceTable,
        offsets: ZstdSequenceTable, matchLengths: ZstdSequenceTable
    ) throws -> Int {
        var output = block
        block = []
        defer { block = output }
        let decodedLiterals = literals
        let ring = history
        var context = ZstdSequenceExecution(
            limit: blockMaximumSize, literalCount: literalCount, window: windowSize,
            historyCount: historyCount, historyEnd: historyEnd, repeatOffsets: repeatOffsets)
        let produced = try output.withUnsafeMutableBufferPointer { outputBuffer in
            try decodedLiterals.withUnsafeBufferPointer { literalBuffer in
                try ring.withUnsafeBufferPointer { ringBuffer in
                    try literalLengths.cells.withUnsafeBufferPointer { literalLengthCells in
                        try offsets.cells.withUnsafeBufferPointer { offsetCells in
                            try matchLengths.cells.withUnsafeBufferPointer { matchLengthCells in
                                try context.run(
                                    count: count, stream: stream, output: outputBuffer, literals: literalBuffer,
                                    history: ringBuffer,
                                    tables: (
                                        literalLengthCells, literalLengths.log, offsetCells, offsets.log,
                                        matchLengthCells, matchLengths.log
                                    ))
                            }
                        }
                    }
                }
            }
        }
        repeatOffsets = context.repeatOffsets
        return produced
    }
}

/// The sequence loop's inputs, kept in locals while it runs.
private struct ZstdSequenceExecution {
    let limit: Int
    let literalCount: Int
    let window: Int
    let historyCount: Int
    let historyEnd: Int
    var repeatOffsets: (Int, Int, Int)

    typealias Tables = (
        UnsafeBufferPointer<ZstdSequenceCell>, Int, UnsafeBufferPointer<ZstdSequenceCell>, Int,
        UnsafeBufferPointer<ZstdSequenceCell>, Int
    )

    @inline(__always)
    private static func copy16(_ target: UnsafeMutablePointer<UInt8>, _ source: UnsafePointer<UInt8>) {
        let raw = UnsafeRawPointer(source)
        let low = raw.loadUnaligned(as: UInt64.self)
        let high = raw.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
        let destination = UnsafeMutableRawPointer(target)
        destination.storeBytes(of: low, as: UInt64.self)
        destination.storeBytes(of: high, toByteOffset: 8, as: UInt64.self)
    }

    /// Copies `count` bytes between buffers that do not overlap, 16 at a time: reads and writes at most 15 bytes past
    /// the end.
    @inline(__always)
    private static func wildCopy(_ target: UnsafeMutablePointer<UInt8>, _ source: UnsafePointer<UInt8>, count: Int) {
        var target = target
        var source = source
        let end = target + count
        while target < end {
            copy16(target, source)
            target += 16
            source += 16
        }
    }

    /// Copies a match that lies within the block: `length` bytes from `offset` back, overlapping as the format
    /// means it (a short offset repeats its bytes). Writes at most 15 bytes past the end.
    @inline(__always)
    private static func copyMatch(_ output: UnsafeMutablePointer<UInt8>, at position: Int, offset: Int, length: Int) {
        var target = output + position
        var source = UnsafePointer(target - offset)
        let end = target + length
        if offset >= 16 {
            repeat {
                copy16(target, source)
                target += 16
                source += 16
            } while target < end
        } else if offset >= 8 {
            repeat {
                UnsafeMutableRawPointer(target).storeBytes(
                    of: UnsafeRawPointer(source).loadUnaligned(as: UInt64.self), as: UInt64.self)
                target += 8
                source += 8
            } while target < end
        } else {
            // The bytes repeat with period `offset`: lay down the first `distance` (a multiple of `offset`, at least
            // 8) one by one, then copy 8 at a time from `distance` back.
            let distance = offset * ((8 + offset - 1) / offset)
            let head = min(length, distance)
            for index in 0..<head { target[index] = source[index] }
            target += head
            source = UnsafePointer(target - distance)
            while target < end {
                UnsafeMutableRawPointer(target).storeBytes(
                    of: UnsafeRawPointer(source).loadUnaligned(as: UInt64.self), as: UInt64.self)
                target += 8
                source += 8
            }
        }
    }

    mutating func run(
        count: Int, stream: UnsafeRawBufferPointer, output: UnsafeMutableBufferPointer<UInt8>,
        literals: UnsafeBufferPointer<UInt8>, history: UnsafeBufferPointer<UInt8>, tables: Tables
    ) throws -> Int {
        guard let out = output.baseAddress, let literalBase = literals.baseAddress,
            let literalLengthCells = tables.0.baseAddress, let offsetCells = tables.2.baseAddress,
            let matchLengthCells = tables.4.baseAddress
        else { throw zstdMalformed("internal buffers are missing") }
        // Every write below ends by `limit` plus 15 bytes, every literal read by `literalCount` plus 15.
        guard output.count >= limit + ZstdBlockDecoder.slack, literals.count >= literalCount + ZstdBlockDecoder.slack
        else { throw zstdMalformed("internal buffers are too small") }
        var bits = try ZstdBackwardBits(stream, what: "the sequences bitstream")
        let literalLengthMask = tables.0.count - 1
        let offsetMask = tables.2.count - 1
        let matchLengthMask = tables.4.count - 1
        var literalLengthState = bits.read(tables.1) & literalLengthMask
        var offsetState = bits.read(tables.3) & offsetMask
        var matchLengthState = bits.read(tables.5) & matchLengthMask
        var (repeat1, repeat2, repeat3) = repeatOffsets
        var position = 0
        var literalPosition = 0
        let last = count - 1
        let available = historyCount
        let window = self.window
        for sequence in 0..<count {
            bits.reload()
            let literalLengthCell = literalLengthCells[literalLengthState]
            let offsetCell = offsetCells[offsetState]
            let matchLengthCell = matchLengthCells[matchLengthState]
            let offsetValue = Int(offsetCell.baseValue) &+ bits.read(Int(offsetCell.extraBits))
            let matchLength = Int(matchLengthCell.baseValue) &+ bits.read(Int(matchLengthCell.extraBits))
            if bits.consumed > 22 { bits.reload() }
            let literalLength = Int(literalLengthCell.baseValue) &+ bits.read(Int(literalLengthCell.extraBits))
            if sequence != last {
                literalLengthState =
                    (Int(literalLengthCell.nextState) &+ bits.read(Int(literalLengthCell.stateBits)))
                    & literalLengthMask
                matchLengthState =
                    (Int(matchLengthCell.nextState) &+ bits.read(Int(matchLengthCell.stateBits))) & matchLengthMask
                offsetState = (Int(offsetCell.nextState) &+ bits.read(Int(offsetCell.stateBits))) & offsetMask
            }
            let offset: Int
            if offsetValue > 3 {
                offset = offsetValue - 3
                repeat3 = repeat2
                repeat2 = repeat1
                repeat1 = offset
            } else {
                switch literalLength == 0 ? offsetValue : offsetValue - 1 {
                case 0:
                    offset = repeat1
                case 1:
                    offset = repeat2
                    repeat2 = repeat1
                    repeat1 = offset
                case 2:
                    offset = repeat3
                    repeat3 = repeat2
                    repeat2 = repeat1
                    repeat1 = offset
                default:
                    offset = repeat1 - 1
                    repeat3 = repeat2
                    repeat2 = repeat1
                    repeat1 = offset
                }
            }
            guard literalLength <= literalCount - literalPosition else {
                throw zstdMalformed("a sequence takes more literals than the literals section holds")
            }
            guard matchLength <= limit - position - literalLength else {
                throw zstdMalformed("the block decodes to more bytes than the block maximum, \(limit)")
            }
            if literalLength > 0 {
                var target = out + position
                var source = UnsafePointer(literalBase + literalPosition)
                let end = target + literalLength
                repeat {
                    Self.copy16(target, source)
                    target += 16
                    source += 16
                } while target < end
                position += literalLength
                literalPosition += literalLength
            }
            guard offset > 0, offset <= window, offset <= position + available else {
                throw zstdMalformed("a match offset of \(offset) reaches before the data decoded so far or the window")
            }
            if offset <= position {
                Self.copyMatch(out, at: position, offset: offset, length: matchLength)
            } else {
                try copyFromHistory(out, at: position, offset: offset, length: matchLength, history: history)
            }
            position += matchLength
        }
        guard bits.remainingBits == 0 else {
            throw zstdMalformed("the sequences bitstream does not end exactly at its first bit")
        }
        let rest = literalCount - literalPosition
        guard rest <= limit - position else {
            throw zstdMalformed("the block decodes to more bytes than the block maximum, \(limit)")
        }
        (out + position).update(from: literalBase + literalPosition, count: rest)
        repeatOffsets = (repeat1, repeat2, repeat3)
        return position + rest
    }

    /// Copies a match that starts before the block, in the history ring, and may run on into the block.
    private func copyFromHistory(
        _ out: UnsafeMutablePointer<UInt8>, at position: Int, offset: Int, length: Int,
        history: UnsafeBufferPointer<UInt8>
    ) throws {
        let back = offset - position
        let fromHistory = min(back, length)
        let ringSize = historyCount < window ? historyCount : window
        var start = historyCount < window ? historyCount - back : historyEnd - back
        if start < 0 { start += ringSize }
        // The ring keeps `slack` bytes past its end, so its parts may be copied 16 bytes at a time too.
        guard let ring = history.baseAddress, start >= 0, start <= ringSize,
            ringSize + ZstdBlockDecoder.slack <= history.count
        else {
            throw zstdMalformed("a match offset reaches outside the history")
        }
        let firstPart = min(fromHistory, ringSize - start)
        Self.wildCopy(out + position, ring + start, count: firstPart)
        if fromHistory > firstPart {
            Self.wildCopy(out + position + firstPart, ring, count: fromHistory - firstPart)
        }
        if length > fromHistory {
            Self.copyMatch(out, at: position + fromHistory, offset: offset, length: length - fromHistory)
        }
    }
}
