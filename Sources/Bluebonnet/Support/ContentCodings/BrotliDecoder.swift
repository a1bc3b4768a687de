/// A streaming decoder of the brotli content coding (RFC 7932), fed the body in chunks cut anywhere.
///
/// The decoding is a sequence of small units: the stream header, a meta-block header, one block-count field, the
/// header or one code length of a prefix code, one context map entry, one command's lengths, one literal, one
/// distance. Input is kept in `pending` from the start of the unit in progress; a unit that runs past the end of the
/// input is dropped (nothing of it was committed) and decoded again when more input comes, so feeding a body byte by
/// byte makes exactly the output of feeding it at once. No unit is longer than 10 bytes but NPOSTFIX, NDIRECT and the
/// context modes (at most 65), so `pending` holds at most one chunk of new input (`inputChunk`, 64 KiB) and that, and
/// only the unit cut by the end of the input is ever read again: work stays linear however the body is cut.
///
/// Memory is the window (a ring buffer that grows by doubling to `1 << WBITS` only as output is made), the prefix
/// code tables of the current meta-block (at most 776 codes; a complete code's table has at most 1,080 entries), the
/// context maps (at most 17 KiB), and `pending`. Output is handed over in chunks of at most `outputChunk` bytes.
struct BrotliDecoder: StreamingContentDecoder {
    static let coding = "br"
    /// New input is moved into `pending` this much at a time.
    static let inputChunk = 1 << 16
    /// The most output handed to `output` at once.
    static let outputChunk = 1 << 16
    /// The ring buffer's first size (or the window's, when that is smaller).
    static let initialRingCapacity = 1 << 16

    /// Bytes past the ring's end that copies may overwrite 8 bytes at a time. Up to 16 bytes past the write position
    /// may be overwritten anywhere in the ring: they are older than the largest distance, `(1 << WBITS) - 16`.
    static let ringSlack = 16

    /// The largest window (`(1 << WBITS) - 16`) accepted.
    let maximumWindowSize: Int

    // MARK: Input

    /// Unconsumed input, from the byte holding the first bit of the unit in progress.
    private var pending: [UInt8] = []
    /// Bits of `pending[0]` already consumed.
    private var pendingBit = 0
    /// Bits read again after a unit was dropped for want of input (for tests of linear work).
    private(set) var rereadBits = 0

    private var phase: Phase = .streamHeader
    private var failure: ContentDecodingError?

    // MARK: Window

    private var windowBits = 0
    private var ring: [UInt8] = []
    private var ringCapacity = 0
    /// Where the next byte goes in `ring`.
    private var ringPosition = 0
    /// `ring[flushed..<ringPosition]` is made but not yet handed to `output`.
    private var flushed = 0
    /// Bytes made since the stream started.
    private var produced = 0

    // MARK: Meta-block

    private var isLast = false
    /// Bytes the current meta-block still has to make (or metadata bytes to skip).
    private var metaRemaining = 0
    private var literalBlocks = BlockSwitch()
    private var commandBlocks = BlockSwitch()
    private var distanceBlocks = BlockSwitch()
    private var postfixBits = 0
    private var directCodes = 0
    private var contextModes: [UInt8] = []
    private var literalTrees = 1
    private var distanceTrees = 1
    private var literalContextMap: [UInt8] = []
    private var distanceContextMap: [UInt8] = []
    private var contextMapReading = ContextMapReading()
    /// Every prefix code table of the meta-block, one after another.
    private var tables: [UInt32] = []
    private var literalTreeOffsets: [Int] = []
    private var commandTreeOffsets: [Int] = []
    private var distanceTreeOffsets: [Int] = []
    private var codeReading = CodeReading()

    // MARK: Command

    private var insertRemaining = 0
    private var copyLength = 0
    private var implicitDistance = false
    /// The four last distances, `lastDistances[(distanceCursor - 1) & 3]` the last (inline: no heap, no copy check).
    private var lastDistances = SIMD4<Int>(16, 15, 11, 4)
    private var distanceCursor = 0
    private var copyRemaining = 0
    private var copyDistance = 0
    /// A transformed dictionary word being written: `word[wordPosition..<wordLength]` is left.
    private var word = [UInt8](repeating: 0, count: 64)
    private var wordLength = 0
    private var wordPosition = 0

    init(maximumWindowSize: Int = 16 << 20) {
        self.maximumWindowSize = maximumWindowSize
    }

    /// Where the decoder is in the stream.
    private enum Phase {
        case streamHeader
        case metaBlockHeader
        case metadata
        case uncompressed
        /// `NBLTYPES` of a block category: 0 literals, 1 insert-and-copy lengths, 2 distances.
        case blockTypeCount(Int)
        /// A prefix code, in `codeReading`.
        case readingCode
        case firstBlockCount(Int)
        case distanceParameters
        /// `NTREES` of the literal (0) or distance (1) context map.
        case treeCount(Int)
        case contextMap(Int)
        case contextMapTransform(Int)
        /// The next of the literal, insert-and-copy and distance prefix codes.
        case nextTree
        case commandStart
        case literals
        case distance
        case copy
        case word
        case metaBlockEnd
        /// The padding after the last meta-block.
        case streamEnd
        case finished
    }

    /// What a prefix code being read is for.
    private enum CodeTarget {
        case blockType(Int)
        case blockCount(Int)
        case contextMap(Int)
        case tree
    }

    /// A block category's block switching (RFC 7932 section 6).
    struct BlockSwitch {
        var types = 1
        var typeTable = 0
        var countTable = 0
        var current = 0
        var previous = 1
        var remaining = 1 << 24
    }

    /// A context map being read (RFC 7932 section 7.3).
    private struct ContextMapReading {
        var table = 0
        var runLengthCodes = 0
        var index = 0
    }

    /// A complex prefix code being read, one code length symbol per unit (RFC 7932 section 3.5).
    private struct CodeReading {
        var alphabetSize = 0
        var target = CodeTarget.tree
        /// The table of the code length code; empty until the code's header is read.
        var lengthTable: [UInt32] = []
        var lengths: [UInt8] = []
        var symbol = 0
        var previousLength = 8
        var repeatCount = 0
        var repeatLength = 0
        var space = 1 << 15
    }

    /// A unit ran past the end of the input: it is dropped and decoded again with more input.
    private struct NeedInput: Error {}

    // MARK: Entry points

    mutating func decode(
        _ input: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        if let failure { throw failure }
        var offset = 0
        repeat {
            if case .finished = phase {
                if offset < input.count || !pending.isEmpty { throw record(.trailingData(coding: Self.coding)) }
                return
            }
            let take = min(input.count - offset, Self.inputChunk)
            if take > 0 { pending.append(contentsOf: input[offset..<(offset + take)]) }
            offset += take
            do {
                try run(output)
                try emit(output)
            } catch let error as ContentDecodingError {
                // What was decoded before the error is handed over, so that it does not depend on the chunking.
                try? emit(output)
                throw record(error)
            }
        } while offset < input.count
    }

    func finish() throws {
        if let failure { throw failure }
        guard case .finished = phase else { throw ContentDecodingError.truncated(coding: Self.coding) }
    }

    private mutating func record(_ error: ContentDecodingError) -> ContentDecodingError {
        failure = error
        return error
    }

    /// A rule of the format is broken, unless the unit ran past the input, when its bits were not the stream's.
    private func invalid(_ reader: BrotliBitReader, _ detail: String) -> Error {
        if reader.overran { return NeedInput() }
        return ContentDecodingError.malformed(coding: Self.coding, detail: detail)
    }

    /// A rule of the format is broken (in a unit already checked for overrun).
    private static func malformed(_ detail: String) -> ContentDecodingError {
        .malformed(coding: coding, detail: detail)
    }

    private func checkInput(_ reader: BrotliBitReader) throws {
        if reader.overran { throw NeedInput() }
    }

    /// Decodes units from `pending` until it runs out or the stream ends, then drops the consumed input.
    private mutating func run(_ output: (UnsafeRawBufferPointer) throws -> Void) throws {
        let input = pending
        var end = 0
        try input.withUnsafeBufferPointer { buffer in
            var reader = BrotliBitReader(buffer, bitPosition: pendingBit)
            defer { end = reader.position }
            while true {
                if case .finished = phase { return }
                let mark = reader.position
                do {
                    if try !step(&reader, output) {
                        rereadBits += buffer.count * 8 - reader.position
                        return
                    }
                } catch is NeedInput {
                    reader.reset(to: mark)
                    rereadBits += buffer.count * 8 - mark
                    return
                }
            }
        }
        if case .finished = phase, end < input.count * 8 {
            throw ContentDecodingError.trailingData(coding: Self.coding)
        }
        pending.removeSubrange(0..<(end >> 3))
        pendingBit = end & 7
    }

    /// Decodes one unit (or, for literals and copies, as many as there are); false when the input ran out, with the
    /// reader back where the unfinished unit started.
    private mutating func step(
        _ reader: inout BrotliBitReader, _ output: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> Bool {
        switch phase {
        case .streamHeader: try readStreamHeader(&reader)
        case .metaBlockHeader: try readMetaBlockHeader(&reader)
        case .metadata: return skipMetadata(&reader)
        case .uncompressed: return try copyUncompressed(&reader, output)
        case let .blockTypeCount(category): try readBlockTypeCount(&reader, category)
        case .readingCode: try readCodeUnit(&reader)
        case let .firstBlockCount(category): try readFirstBlockCount(&reader, category)
        case .distanceParameters: try readDistanceParameters(&reader)
        case let .treeCount(map): try readTreeCount(&reader, map)
        case let .contextMap(map): try readContextMapEntry(&reader, map)
        case let .contextMapTransform(map): try readContextMapTransform(&reader, map)
        case .nextTree: startNextTree()
        case .commandStart, .literals, .distance, .copy, .word: return try runCommands(&reader, output)
        case .metaBlockEnd: phase = isLast ? .streamEnd : .metaBlockHeader
        case .streamEnd:
            let fill = reader.readToByteBoundary()
            try checkInput(reader)
            guard fill == 0 else { throw invalid(reader, "the padding after the last meta-block is not zero") }
            phase = .finished
        case .finished: break
        }
        return true
    }

    // MARK: Headers

    /// WBITS (RFC 7932 section 9.1).
    private mutating func readStreamHeader(_ reader: inout BrotliBitReader) throws {
        var bits = 16
        if reader.read(1) == 1 {
            let high = reader.read(3)
            if high != 0 {
                bits = 17 + high
            } else {
                let low = reader.read(3)
                if low == 1 { throw invalid(reader, "the window size code is invalid (large-window brotli?)") }
                bits = low == 0 ? 17 : 8 + low
            }
        }
        try checkInput(reader)
        let requested = (1 << bits) - 16
        guard requested <= maximumWindowSize else {
            throw ContentDecodingError.windowTooLarge(
                coding: Self.coding, requested: requested, limit: maximumWindowSize)
        }
        windowBits = bits
        ringCapacity = min(1 << bits, Self.initialRingCapacity)
        ring = [UInt8](repeating: 0, count: ringCapacity + Self.ringSlack)
        phase = .metaBlockHeader
    }

    /// ISLAST to ISUNCOMPRESSED, or a metadata block's header (RFC 7932 section 9.2).
    private mutating func readMetaBlockHeader(_ reader: inout BrotliBitReader) throws {
        let last = reader.read(1) == 1
        if last, reader.read(1) == 1 {
            try checkInput(reader)
            isLast = true
            phase = .streamEnd
            return
        }
        let nibbleCode = reader.read(2)
        if nibbleCode == 3 {
            if reader.read(1) != 0 { throw invalid(reader, "the reserved bit of a metadata block is set") }
            let lengthBytes = reader.read(2)
            var length = 0
            for index in 0..<lengthBytes {
                let byte = reader.read(8)
                if index == lengthBytes - 1, lengthBytes > 1, byte == 0 {
                    throw invalid(reader, "a metadata length has a needless zero byte")
                }
                length |= byte << (8 * index)
            }
            if lengthBytes > 0 { length += 1 }
            if reader.readToByteBoundary() != 0 { throw invalid(reader, "the fill bits before metadata are not zero") }
            try checkInput(reader)
            isLast = last
            metaRemaining = length
            phase = .metadata
            return
        }
        let nibbles = nibbleCode + 4
        var length = 0
        for index in 0..<nibbles {
            let nibble = reader.read(4)
            if index == nibbles - 1, nibbles > 4, nibble == 0 {
                throw invalid(reader, "a meta-block length has a needless zero nibble")
            }
            length |= nibble << (4 * index)
        }
        length += 1
        let uncompressed = !last && reader.read(1) == 1
        if uncompressed, reader.readToByteBoundary() != 0 {
            throw invalid(reader, "the fill bits before an uncompressed meta-block are not zero")
        }
        try checkInput(reader)
        isLast = last
        metaRemaining = length
        if uncompressed {
            phase = .uncompressed
        } else {
            tables.removeAll(keepingCapacity: true)
            literalTreeOffsets.removeAll(keepingCapacity: true)
            commandTreeOffsets.removeAll(keepingCapacity: true)
            distanceTreeOffsets.removeAll(keepingCapacity: true)
            phase = .blockTypeCount(0)
        }
    }

    /// Skips metadata bytes, as many as there are.
    private mutating func skipMetadata(_ reader: inout BrotliBitReader) -> Bool {
        let byte = reader.position >> 3
        let count = min(metaRemaining, max(0, reader.bytes.count - byte))
        reader.reset(to: (byte + count) * 8)
        metaRemaining -= count
        guard metaRemaining == 0 else { return false }
        phase = isLast ? .streamEnd : .metaBlockHeader
        return true
    }

    /// Copies an uncompressed meta-block's bytes to the window, as many as there are.
    private mutating func copyUncompressed(
        _ reader: inout BrotliBitReader, _ output: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> Bool {
        while metaRemaining > 0 {
            let byte = reader.position >> 3
            let available = reader.bytes.count - byte
            guard available > 0 else { return false }
            if ringPosition == softEnd { try makeRoom(output) }
            let count = min(metaRemaining, available, softEnd - ringPosition)
            let source = UnsafeBufferPointer(rebasing: reader.bytes[byte..<(byte + count)])
            let target = ringPosition
            ring.withUnsafeMutableBufferPointer { ring in
                _ = UnsafeMutableBufferPointer(rebasing: ring[target..<(target + count)]).update(fromContentsOf: source)
            }
            ringPosition += count
            produced += count
            metaRemaining -= count
            reader.reset(to: (byte + count) * 8)
        }
        phase = .metaBlockEnd
        return true
    }

    /// NBLTYPES, NTREES: 1...256 (RFC 7932 section 9.2).
    private func readSmallCount(_ reader: inout BrotliBitReader) -> Int {
        if reader.read(1) == 0 { return 1 }
        let bits = reader.read(3)
        if bits == 0 { return 2 }
        return (1 << bits) + 1 + reader.read(bits)
    }

    private mutating func readBlockTypeCount(_ reader: inout BrotliBitReader, _ category: Int) throws {
        let types = readSmallCount(&reader)
        try checkInput(reader)
        setBlocks(category, BlockSwitch(types: types))
        if types >= 2 {
            startCode(alphabetSize: types + 2, target: .blockType(category))
        } else {
            phase = category < 2 ? .blockTypeCount(category + 1) : .distanceParameters
        }
    }

    private mutating func readFirstBlockCount(_ reader: inout BrotliBitReader, _ category: Int) throws {
        var blocks = self.blocks(category)
        let count = tables.withUnsafeBufferPointer { tables in
            let code = reader.decode(tables, at: blocks.countTable)
            return BrotliTables.blockCountBase[code] + reader.read(BrotliTables.blockCountExtra[code])
        }
        try checkInput(reader)
        blocks.remaining = count
        setBlocks(category, blocks)
        phase = category < 2 ? .blockTypeCount(category + 1) : .distanceParameters
    }

    private func blocks(_ category: Int) -> BlockSwitch {
        switch category {
        case 0: literalBlocks
        case 1: commandBlocks
        default: distanceBlocks
        }
    }

    private mutating func setBlocks(_ category: Int, _ blocks: BlockSwitch) {
        switch category {
        case 0: literalBlocks = blocks
        case 1: commandBlocks = blocks
        default: distanceBlocks = blocks
        }
    }

    /// NPOSTFIX, NDIRECT and the literal context modes.
    private mutating func readDistanceParameters(_ reader: inout BrotliBitReader) throws {
        let postfix = reader.read(2)
        let direct = reader.read(4) << postfix
        var modes = [UInt8](repeating: 0, count: literalBlocks.types)
        for index in modes.indices { modes[index] = UInt8(reader.read(2)) }
        try checkInput(reader)
        postfixBits = postfix
        directCodes = direct
        contextModes = modes
        phase = .treeCount(0)
    }

    /// NTREESL or NTREESD, and RLEMAX when there is a context map.
    private mutating func readTreeCount(_ reader: inout BrotliBitReader, _ map: Int) throws {
        let trees = readSmallCount(&reader)
        var runLengthCodes = 0
        if trees >= 2, reader.read(1) == 1 { runLengthCodes = reader.read(4) + 1 }
        try checkInput(reader)
        if map == 0 {
            literalTrees = trees
            literalContextMap = [UInt8](repeating: 0, count: 64 * literalBlocks.types)
        } else {
            distanceTrees = trees
            distanceContextMap = [UInt8](repeating: 0, count: 4 * distanceBlocks.types)
        }
        if trees >= 2 {
            contextMapReading = ContextMapReading(runLengthCodes: runLengthCodes)
            startCode(alphabetSize: trees + runLengthCodes, target: .contextMap(map))
        } else {
            phase = map == 0 ? .treeCount(1) : .nextTree
        }
    }

    /// One symbol of a context map: a value or a run of zeros.
    private mutating func readContextMapEntry(_ reader: inout BrotliBitReader, _ map: Int) throws {
        let size = map == 0 ? literalContextMap.count : distanceContextMap.count
        let reading = contextMapReading
        var value = 0
        var count = 1
        let symbol = tables.withUnsafeBufferPointer { reader.decode($0, at: reading.table) }
        if symbol > reading.runLengthCodes {
            value = symbol - reading.runLengthCodes
        } else if symbol > 0 {
            count = (1 << symbol) + reader.read(symbol)
        }
        try checkInput(reader)
        guard reading.index + count <= size else {
            throw invalid(reader, "a run of zeros goes past the end of a context map")
        }
        if value != 0 {
            if map == 0 {
                literalContextMap[reading.index] = UInt8(value)
            } else {
                distanceContextMap[reading.index] = UInt8(value)
            }
        }
        contextMapReading.index += count
        if contextMapReading.index == size { phase = .contextMapTransform(map) }
    }

    /// The IMTF bit, and the inverse move-to-front transform when it is set.
    private mutating func readContextMapTransform(_ reader: inout BrotliBitReader, _ map: Int) throws {
        let transform = reader.read(1) == 1
        try checkInput(reader)
        if transform {
            if map == 0 {
                Self.inverseMoveToFront(&literalContextMap)
            } else {
                Self.inverseMoveToFront(&distanceContextMap)
            }
        }
        phase = map == 0 ? .treeCount(1) : .nextTree
    }

    private static func inverseMoveToFront(_ values: inout [UInt8]) {
        var order = [UInt8](repeating: 0, count: 256)
        for index in 0..<256 { order[index] = UInt8(index) }
        for position in values.indices {
            let index = Int(values[position])
            let value = order[index]
            values[position] = value
            var slot = index
            while slot > 0 {
                order[slot] = order[slot - 1]
                slot -= 1
            }
            order[0] = value
        }
    }

    /// Starts the next of the NTREESL literal, NBLTYPESI insert-and-copy and NTREESD distance codes, or the commands.
    private mutating func startNextTree() {
        if literalTreeOffsets.count < literalTrees {
            startCode(alphabetSize: 256, target: .tree)
        } else if commandTreeOffsets.count < commandBlocks.types {
            startCode(alphabetSize: 704, target: .tree)
        } else if distanceTreeOffsets.count < distanceTrees {
            startCode(alphabetSize: 16 + directCodes + (48 << postfixBits), target: .tree)
        } else {
            phase = .commandStart
        }
    }

    // MARK: Prefix codes

    private mutating func startCode(alphabetSize: Int, target: CodeTarget) {
        codeReading.alphabetSize = alphabetSize
        codeReading.target = target
        codeReading.lengthTable.removeAll(keepingCapacity: true)
        phase = .readingCode
    }

    /// The order code length code lengths come in (RFC 7932 section 3.5).
    private static let codeLengthOrder = [1, 2, 3, 4, 0, 5, 17, 6, 16, 7, 8, 9, 10, 11, 12, 13, 14, 15]
    /// The fixed code of a code length code length, by the next 4 bits: `length << 8 | symbol`.
    private static let codeLengthCodeLengths: [Int] = [
        2 << 8 | 0, 2 << 8 | 4, 2 << 8 | 3, 3 << 8 | 2, 2 << 8 | 0, 2 << 8 | 4, 2 << 8 | 3, 4 << 8 | 1,
        2 << 8 | 0, 2 << 8 | 4, 2 << 8 | 3, 3 << 8 | 2, 2 << 8 | 0, 2 << 8 | 4, 2 << 8 | 3, 4 << 8 | 5,
    ]

    /// One unit of a prefix code: its header (a whole simple code), or one code length symbol of a complex code.
    private mutating func readCodeUnit(_ reader: inout BrotliBitReader) throws {
        if codeReading.lengthTable.isEmpty {
            try readCodeHeader(&reader)
            return
        }
        let symbol = codeReading.lengthTable.withUnsafeBufferPointer { reader.decode($0, at: 0) }
        var extra = 0
        if symbol >= 16 { extra = reader.read(symbol == 16 ? 2 : 3) }
        try checkInput(reader)
        var state = codeReading
        if symbol < 16 {
            state.lengths[state.symbol] = UInt8(symbol)
            state.symbol += 1
            state.repeatCount = 0
            if symbol != 0 {
                state.previousLength = symbol
                state.space -= (1 << 15) >> symbol
            }
        } else {
            let length = symbol == 16 ? state.previousLength : 0
            if state.repeatLength != length {
                state.repeatCount = 0
                state.repeatLength = length
            }
            let before = state.repeatCount
            var count = before > 0 ? (before - 2) << (symbol == 16 ? 2 : 3) : 0
            count += extra + 3
            let added = count - before
            guard state.symbol + added <= state.alphabetSize else {
                throw invalid(reader, "a repeated code length goes past the end of the alphabet")
            }
            for index in state.symbol..<(state.symbol + added) { state.lengths[index] = UInt8(length) }
            state.symbol += added
            state.repeatCount = count
            if length != 0 { state.space -= added * ((1 << 15) >> length) }
        }
        codeReading = state
        guard state.space <= 0 || state.symbol >= state.alphabetSize else { return }
        guard state.space == 0 else {
            throw invalid(reader, state.space > 0 ? "a prefix code is incomplete" : "a prefix code is over-subscribed")
        }
        guard let offset = BrotliPrefixCode.appendTable(lengths: state.lengths, to: &tables) else {
            throw invalid(reader, "a prefix code is not complete")
        }
        finishCode(offset)
    }

    /// HSKIP, and either a simple code or the code length code of a complex one.
    private mutating func readCodeHeader(_ reader: inout BrotliBitReader) throws {
        let alphabetSize = codeReading.alphabetSize
        let skip = reader.read(2)
        if skip == 1 {
            let count = reader.read(2) + 1
            var bits = 0
            while (1 << bits) < alphabetSize { bits += 1 }
            var symbols = [Int](repeating: 0, count: count)
            for index in 0..<count { symbols[index] = reader.read(bits) }
            let treeSelect = count == 4 ? reader.read(1) : 0
            try checkInput(reader)
            for (index, symbol) in symbols.enumerated() {
                guard symbol < alphabetSize else { throw invalid(reader, "a simple prefix code's symbol is too large") }
                guard !symbols[..<index].contains(symbol) else {
                    throw invalid(reader, "a simple prefix code repeats a symbol")
                }
            }
            if count == 1 {
                let offset = tables.count
                BrotliPrefixCode.appendSingleSymbolTable(symbols[0], to: &tables)
                finishCode(offset)
                return
            }
            let shapes: [[UInt8]] = [[1, 1], [1, 2, 2], treeSelect == 0 ? [2, 2, 2, 2] : [1, 2, 3, 3]]
            var lengths = [UInt8](repeating: 0, count: alphabetSize)
            for (index, symbol) in symbols.enumerated() { lengths[symbol] = shapes[count - 2][index] }
            guard let offset = BrotliPrefixCode.appendTable(lengths: lengths, to: &tables) else {
                throw invalid(reader, "a simple prefix code is not complete")
            }
            finishCode(offset)
            return
        }
        var lengths = [UInt8](repeating: 0, count: 18)
        var space = 32
        var nonZero = 0
        var lastSymbol = 0
        for index in skip..<18 {
            let code = Self.codeLengthCodeLengths[reader.peek(4)]
            reader.skip(code >> 8)
            let length = code & 0xFF
            lengths[Self.codeLengthOrder[index]] = UInt8(length)
            if length != 0 {
                space -= 32 >> length
                nonZero += 1
                lastSymbol = Self.codeLengthOrder[index]
                if space <= 0 { break }
            }
        }
        try checkInput(reader)
        var table: [UInt32] = []
        if nonZero == 1 {
            BrotliPrefixCode.appendSingleSymbolTable(lastSymbol, to: &table)
        } else {
            guard space == 0, BrotliPrefixCode.appendTable(lengths: lengths, to: &table) != nil else {
                throw invalid(reader, "the code length code of a prefix code is not complete")
            }
        }
        codeReading.lengthTable = table
        codeReading.lengths = [UInt8](repeating: 0, count: alphabetSize)
        codeReading.symbol = 0
        codeReading.previousLength = 8
        codeReading.repeatCount = 0
        codeReading.repeatLength = 0
        codeReading.space = 1 << 15
    }

    private mutating func finishCode(_ offset: Int) {
        switch codeReading.target {
        case let .blockType(category):
            var blocks = self.blocks(category)
            blocks.typeTable = offset
            setBlocks(category, blocks)
            startCode(alphabetSize: 26, target: .blockCount(category))
        case let .blockCount(category):
            var blocks = self.blocks(category)
            blocks.countTable = offset
            setBlocks(category, blocks)
            phase = .firstBlockCount(category)
        case let .contextMap(map):
            contextMapReading.table = offset
            phase = .contextMap(map)
        case .tree:
            if literalTreeOffsets.count < literalTrees {
                literalTreeOffsets.append(offset)
            } else if commandTreeOffsets.count < commandBlocks.types {
                commandTreeOffsets.append(offset)
            } else {
                distanceTreeOffsets.append(offset)
            }
            phase = .nextTree
        }
    }

    // MARK: Output

    /// Where output must stop to hand over a chunk: the ring's end, or `outputChunk` past what was handed over.
    private var softEnd: Int { min(ringCapacity, flushed + Self.outputChunk) }

    /// Hands the bytes made so far to `output`.
    private mutating func emit(_ output: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard ringPosition > flushed else { return }
        let range = flushed..<ringPosition
        flushed = ringPosition
        try ring.withUnsafeBytes { try output(UnsafeRawBufferPointer(rebasing: $0[range])) }
    }

    /// Called at `softEnd`: hands over the output, and at the ring's end grows it (until it is the window) or wraps.
    private mutating func makeRoom(_ output: (UnsafeRawBufferPointer) throws -> Void) throws {
        try emit(output)
        guard ringPosition == ringCapacity else { return }
        if ringCapacity < 1 << windowBits {
            let grown = min(1 << windowBits, ringCapacity * 2)
            ring.append(contentsOf: repeatElement(0, count: grown - ringCapacity))  // the slack moves up
            ringCapacity = grown
        } else {
            ringPosition = 0
            flushed = 0
        }
    }

    // MARK: Commands

    private enum CommandOutcome {
        case needInput
        case needRoom
        case metaBlockDone
    }

    /// Decodes commands until the meta-block ends (true) or the input runs out (false).
    private mutating func runCommands(
        _ reader: inout BrotliBitReader, _ output: (UnsafeRawBufferPointer) throws -> Void
    ) throws -> Bool {
        let tables = self.tables
        let literalMap = literalContextMap
        let distanceMap = distanceContextMap
        let literalOffsets = literalTreeOffsets
        let commandOffsets = commandTreeOffsets
        let distanceOffsets = distanceTreeOffsets
        let modes = contextModes
        while true {
            if ringPosition == softEnd { try makeRoom(output) }
            var ring: [UInt8] = []
            swap(&ring, &self.ring)
            defer { swap(&ring, &self.ring) }
            let outcome = try ring.withUnsafeMutableBufferPointer { ring in
                try tables.withUnsafeBufferPointer { tables in
                    try literalMap.withUnsafeBufferPointer { literalMap in
                        try BrotliTables.contextLookup.withUnsafeBufferPointer { lookup in
                            try commandLoop(
                                &reader, ring: ring, tables: tables, literalMap: literalMap, lookup: lookup,
                                distanceMap: distanceMap, literalOffsets: literalOffsets,
                                commandOffsets: commandOffsets, distanceOffsets: distanceOffsets, modes: modes)
                        }
                    }
                }
            }
            switch outcome {
            case .needInput: return false
            case .metaBlockDone: return true
            case .needRoom: continue
            }
        }
    }

    /// Reads a block switch command (RFC 7932 section 6) into `blocks`.
    @inline(__always)
    private static func switchBlock(
        _ blocks: inout BlockSwitch, _ reader: inout BrotliBitReader, _ tables: UnsafeBufferPointer<UInt32>
    ) {
        let symbol = reader.decode(tables, at: blocks.typeTable)
        var type = symbol == 0 ? blocks.previous : symbol == 1 ? blocks.current + 1 : symbol - 2
        if type >= blocks.types { type -= blocks.types }
        blocks.previous = blocks.current
        blocks.current = type
        let code = reader.decode(tables, at: blocks.countTable)
        blocks.remaining = BrotliTables.blockCountBase[code] + reader.read(BrotliTables.blockCountExtra[code])
    }

    // swiftlint:disable:next function_parameter_count function_body_length cyclomatic_complexity
    private mutating func commandLoop(
        _ source: inout BrotliBitReader, ring: UnsafeMutableBufferPointer<UInt8>, tables: UnsafeBufferPointer<UInt32>,
        literalMap: UnsafeBufferPointer<UInt8>, lookup: UnsafeBufferPointer<UInt8>, distanceMap: [UInt8],
        literalOffsets: [Int], commandOffsets: [Int], distanceOffsets: [Int], modes: [UInt8]
    ) throws -> CommandOutcome {
        // A local copy, so that the bit buffer can stay in registers; written back however the loop ends.
        var reader = source
        defer { source = reader }
        let commands = BrotliTables.commands
        // `lookup` (`BrotliTables.contextLookup`) has 2,048 entries: it is indexed below, unchecked, only by
        // `modeBase + p1` and `modeBase + 256 + p2` with `modeBase` `(mode & 3) << 9` (at most 1,536) and `p1`, `p2`
        // below 256 (bytes, or literals masked to 8 bits), so at most 2,047.
        precondition(lookup.count == 2048, "the context lookup table has the wrong size")
        let mask = ringCapacity - 1
        // The phases of a command follow one another: each is a test in turn, not a jump through the switch.
        while true {
            if case .commandStart = phase {
                if commandBlocks.remaining == 0 {
                    let mark = reader.position
                    var blocks = commandBlocks
                    Self.switchBlock(&blocks, &reader, tables)
                    if reader.overran {
                        reader.reset(to: mark)
                        return .needInput
                    }
                    commandBlocks = blocks
                }
                let mark = reader.position
                reader.refill()
                let command = commands[reader.decodeFilled(tables, at: commandOffsets[commandBlocks.current])]
                let insert = Int(command.insertBase) + reader.read(Int(command.insertExtra))
                let copy = Int(command.copyBase) + reader.read(Int(command.copyExtra))
                if reader.overran {
                    reader.reset(to: mark)
                    return .needInput
                }
                guard insert <= metaRemaining else {
                    throw Self.malformed("a command inserts \(insert) literals, past the meta-block's end")
                }
                commandBlocks.remaining -= 1
                insertRemaining = insert
                copyLength = copy
                implicitDistance = command.implicitDistance
                // With no literals (and bytes left to make) the literal phase would change nothing: skip it.
                phase = insert == 0 && metaRemaining > 0 ? .distance : .literals
            }
            if case .literals = phase {
                var position = ringPosition
                let end = softEnd
                var remaining = insertRemaining
                var blocks = literalBlocks
                var p1 = 0
                var p2 = 0
                if produced >= 1 { p1 = Int(ring[(position - 1) & mask]) }
                if produced >= 2 { p2 = Int(ring[(position - 2) & mask]) }
                var mapBase = blocks.current << 6
                var modeBase = Int(modes[blocks.current] & 3) << 9
                var outcome: CommandOutcome?
                // Literals that surely fit in the input (one, with a block switch, is at most 69 bits) go unchecked.
                var unchecked = min(remaining, end - position, (reader.bitsLeft - 64) / 69)
                while unchecked > 0 {
                    if blocks.remaining == 0 {
                        Self.switchBlock(&blocks, &reader, tables)
                        mapBase = blocks.current << 6
                        modeBase = Int(modes[blocks.current] & 3) << 9
                    }
                    // One refill (57 bits or more) serves up to three literals of at most 15 bits each, all in the
                    // current block. A block count is at least 1, so `batch` is too.
                    var batch = min(unchecked, blocks.remaining, 3)
                    unchecked &-= batch
                    blocks.remaining &-= batch
                    remaining &-= batch
                    reader.refill()
                    repeat {
                        let context = Int(lookup[modeBase + p1] | lookup[modeBase + 256 + p2])
                        let literal = reader.decodeFilled(
                            tables, at: literalOffsets[Int(literalMap[mapBase + context])])
                        ring[position] = UInt8(truncatingIfNeeded: literal)
                        position &+= 1
                        p2 = p1
                        p1 = literal & 0xFF
                        batch &-= 1
                    } while batch > 0
                }
                while remaining > 0 {
                    if position == end {
                        outcome = .needRoom
                        break
                    }
                    var mark = reader.position
                    if blocks.remaining == 0 {
                        var switched = blocks
                        Self.switchBlock(&switched, &reader, tables)
                        if reader.overran {
                            reader.reset(to: mark)
                            outcome = .needInput
                            break
                        }
                        blocks = switched
                        mapBase = blocks.current << 6
                        modeBase = Int(modes[blocks.current] & 3) << 9
                        mark = reader.position
                    }
                    let context = Int(lookup[modeBase + p1] | lookup[modeBase + 256 + p2])
                    let tree = Int(literalMap[mapBase + context])
                    let literal = reader.decode(tables, at: literalOffsets[tree])
                    if reader.overran {
                        reader.reset(to: mark)
                        outcome = .needInput
                        break
                    }
                    ring[position] = UInt8(truncatingIfNeeded: literal)
                    position += 1
                    p2 = p1
                    p1 = literal & 0xFF
                    blocks.remaining -= 1
                    remaining -= 1
                }
                let written = insertRemaining - remaining
                produced += written
                metaRemaining -= written
                ringPosition = position
                insertRemaining = remaining
                literalBlocks = blocks
                if let outcome { return outcome }
                if metaRemaining == 0 {
                    phase = .metaBlockEnd
                    return .metaBlockDone
                }
                phase = .distance
            }
            if case .distance = phase {
                var distance: Int
                var distanceCode = 0
                if implicitDistance {
                    distance = lastDistances[(distanceCursor - 1) & 3]
                } else {
                    if distanceBlocks.remaining == 0 {
                        let mark = reader.position
                        var blocks = distanceBlocks
                        Self.switchBlock(&blocks, &reader, tables)
                        if reader.overran {
                            reader.reset(to: mark)
                            return .needInput
                        }
                        distanceBlocks = blocks
                    }
                    let mark = reader.position
                    let context = copyLength > 4 ? 3 : copyLength - 2
                    let tree = Int(distanceMap[(distanceBlocks.current << 2) + context])
                    reader.refill()
                    distanceCode = reader.decodeFilled(tables, at: distanceOffsets[tree])
                    if distanceCode < 16 {
                        let last = lastDistances[(distanceCursor - 1 - BrotliTables.shortCodeIndex[distanceCode]) & 3]
                        distance = last + BrotliTables.shortCodeDelta[distanceCode]
                    } else if distanceCode < 16 + directCodes {
                        distance = distanceCode - 15
                    } else {
                        let code = distanceCode - directCodes - 16
                        let extraBits = 1 + (code >> (postfixBits + 1))
                        let offset = ((2 + ((code >> postfixBits) & 1)) << extraBits) - 4
                        let extra = reader.read(extraBits)
                        distance =
                            ((offset + extra) << postfixBits) + (code & ((1 << postfixBits) - 1))
                            + directCodes + 1
                    }
                    if reader.overran {
                        reader.reset(to: mark)
                        return .needInput
                    }
                    guard distance > 0 else { throw Self.malformed("a short distance code makes a distance below 1") }
                    distanceBlocks.remaining -= 1
                }
                let maximumDistance = min((1 << windowBits) - 16, produced)
                if distance > maximumDistance {
                    try startWord(distance: distance - maximumDistance - 1)
                    phase = .word
                } else {
                    if distanceCode != 0 {
                        lastDistances[distanceCursor] = distance
                        distanceCursor = (distanceCursor + 1) & 3
                    }
                    guard copyLength <= metaRemaining else {
                        throw Self.malformed("a command copies \(copyLength) bytes, past the meta-block's end")
                    }
                    copyRemaining = copyLength
                    copyDistance = distance
                    phase = .copy
                }
            }
            if case .copy = phase {
                var position = ringPosition
                let end = softEnd
                while copyRemaining > 0 {
                    if position == end { break }
                    let source = (position - copyDistance) & mask
                    let count = min(copyRemaining, end - position, ringCapacity - source)
                    if copyDistance >= 16, let base = ring.baseAddress {
                        // 16 bytes at a time, up to 15 past the end: into the slack or bytes older than the window.
                        // Each 16 bytes read lie before the write position (the distance is at least 16), or past
                        // the ring's end into the slack, whose copies are overwritten before they are handed over.
                        var done = 0
                        while done < count {
                            let from = UnsafeRawPointer(base + source + done)
                            let low = from.loadUnaligned(as: UInt64.self)
                            let high = from.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                            let to = UnsafeMutableRawPointer(base + position + done)
                            to.storeBytes(of: low, as: UInt64.self)
                            to.storeBytes(of: high, toByteOffset: 8, as: UInt64.self)
                            done &+= 16
                        }
                    } else if copyDistance >= 8, let base = ring.baseAddress {
                        // 8 bytes at a time, up to 7 past the end: into the slack or bytes older than the window.
                        var done = 0
                        while done < count {
                            let word = UnsafeRawPointer(base + source + done).loadUnaligned(as: UInt64.self)
                            UnsafeMutableRawPointer(base + position + done).storeBytes(of: word, as: UInt64.self)
                            done += 8
                        }
                    } else if count <= 16 || (source < position && position - source < count) {
                        for index in 0..<count { ring[position + index] = ring[source + index] }
                    } else if let base = ring.baseAddress {
                        UnsafeMutableRawPointer(base + position).copyMemory(from: base + source, byteCount: count)
                    }
                    position += count
                    copyRemaining -= count
                }
                let written = position - ringPosition
                produced += written
                metaRemaining -= written
                ringPosition = position
                if copyRemaining > 0 { return .needRoom }
                if metaRemaining == 0 {
                    phase = .metaBlockEnd
                    return .metaBlockDone
                }
                phase = .commandStart
            }
            if case .word = phase {
                var position = ringPosition
                let end = softEnd
                while wordPosition < wordLength, position < end {
                    ring[position] = word[wordPosition]
                    position += 1
                    wordPosition += 1
                }
                let written = position - ringPosition
                produced += written
                metaRemaining -= written
                ringPosition = position
                if wordPosition < wordLength { return .needRoom }
                if metaRemaining == 0 {
                    phase = .metaBlockEnd
                    return .metaBlockDone
                }
                phase = .commandStart
            }
            guard case .commandStart = phase else { return .metaBlockDone }
        }
    }

    /// Puts the static dictionary word `wordID` of length `copyLength`, transformed, in `word` (RFC 7932 section 8).
    private mutating func startWord(distance wordID: Int) throws {
        let length = copyLength
        guard length >= 4, length <= 24 else {
            throw Self.malformed("a distance past the window refers to a dictionary word of length \(length)")
        }
        let bits = BrotliTables.dictionaryBits[length]
        let transformID = wordID >> bits
        guard transformID < BrotliTables.transforms.count else {
            throw Self.malformed("a dictionary reference names transform \(transformID) (there are 121)")
        }
        let start = BrotliTables.dictionaryOffsets[length] + (wordID & ((1 << bits) - 1)) * length
        let transform = BrotliTables.transforms[transformID]
        let kind = Int(transform.kind)
        var base = start
        var baseLength = length
        if kind >= 3, kind <= 11 {
            let omitted = min(kind - 2, length)
            base += omitted
            baseLength -= omitted
        } else if kind >= 12 {
            baseLength -= min(kind - 11, length)
        }
        let total = transform.prefix.count + baseLength + transform.suffix.count
        guard total <= metaRemaining else {
            throw Self.malformed("a dictionary word of \(total) bytes goes past the meta-block's end")
        }
        var count = 0
        for byte in transform.prefix {
            word[count] = byte
            count += 1
        }
        let dictionary = BrotliDictionary.bytes
        let wordStart = count
        for index in base..<(base + baseLength) {
            word[count] = dictionary[index]
            count += 1
        }
        if kind == 1 || kind == 2 {
            var index = wordStart
            let wordEnd = count
            while index < wordEnd {
                index += ferment(at: index, end: wordEnd)
                if kind == 1 { break }
            }
        }
        for byte in transform.suffix {
            word[count] = byte
            count += 1
        }
        wordLength = count
        wordPosition = 0
    }

    /// Upper-cases the (UTF-8) character at `index` as RFC 7932 section 8 says; returns its length.
    private mutating func ferment(at index: Int, end: Int) -> Int {
        let byte = word[index]
        if byte < 192 {
            if byte >= 97, byte <= 122 { word[index] = byte ^ 32 }
            return 1
        }
        if byte < 224 {
            if index + 1 < end { word[index + 1] ^= 32 }
            return 2
        }
        if index + 2 < end { word[index + 2] ^= 5 }
        return 3
    }
}
