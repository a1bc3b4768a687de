/// One state of a sequence decoding table: the FSE cell with its symbol already turned into the value's baseline and
/// extra-bit count (RFC 8878, section 3.1.1.3.2.1).
struct ZstdSequenceCell: Sendable {
    var baseValue: UInt32
    var nextState: UInt16
    var stateBits: UInt8
    var extraBits: UInt8
}

/// A decoding table for literal lengths, offsets or match lengths.
struct ZstdSequenceTable: Sendable {
    var cells: [ZstdSequenceCell]
    var log: Int

    /// Which of the three tables: their alphabets, largest accuracy logs and predefined distributions differ.
    enum Kind: Sendable {
        case literalLengths, offsets, matchLengths

        var name: String {
            switch self {
            case .literalLengths: "literal lengths"
            case .offsets: "offsets"
            case .matchLengths: "match lengths"
            }
        }

        var maximumSymbol: Int {
            switch self {
            case .literalLengths: 35
            case .offsets: 31
            case .matchLengths: 52
            }
        }

        var maximumLog: Int {
            switch self {
            case .literalLengths, .matchLengths: 9
            case .offsets: 8
            }
        }

        /// The baseline and extra bits of a code.
        func value(of code: Int) -> (base: UInt32, bits: UInt8) {
            switch self {
            case .offsets:
                return (UInt32(1) << UInt32(code), UInt8(code))
            case .literalLengths:
                if code < 16 { return (UInt32(code), 0) }
                let entry = ZstdSequenceTable.literalLengthCodes[code - 16]
                return (entry.base, entry.bits)
            case .matchLengths:
                if code < 32 { return (UInt32(code + 3), 0) }
                let entry = ZstdSequenceTable.matchLengthCodes[code - 32]
                return (entry.base, entry.bits)
            }
        }
    }

    static let literalLengthCodes: [(base: UInt32, bits: UInt8)] = [
        (16, 1), (18, 1), (20, 1), (22, 1), (24, 2), (28, 2), (32, 3), (40, 3),
        (48, 4), (64, 6), (128, 7), (256, 8), (512, 9), (1024, 10), (2048, 11), (4096, 12),
        (8192, 13), (16384, 14), (32768, 15), (65536, 16),
    ]

    static let matchLengthCodes: [(base: UInt32, bits: UInt8)] = [
        (35, 1), (37, 1), (39, 1), (41, 1), (43, 2), (47, 2), (51, 3), (59, 3),
        (67, 4), (83, 4), (99, 5), (131, 7), (259, 8), (515, 9), (1027, 10), (2051, 11),
        (4099, 12), (8195, 13), (16387, 14), (32771, 15), (65539, 16),
    ]

    static let predefinedLiteralLengths: ZstdSequenceTable = predefined(
        [
            4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1,
            -1, -1, -1, -1,
        ], log: 6, kind: .literalLengths)

    static let predefinedMatchLengths: ZstdSequenceTable = predefined(
        [
            1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
            1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1, -1,
        ], log: 6, kind: .matchLengths)

    static let predefinedOffsets: ZstdSequenceTable = predefined(
        [1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1],
        log: 5, kind: .offsets)

    private static func predefined(_ probabilities: [Int16], log: Int, kind: Kind) -> ZstdSequenceTable {
        // The distributions above are valid; a failure here is a typo caught by the first test.
        let cells = (try? ZstdFSE.buildTable(probabilities, log: log, what: kind.name)) ?? []
        return make(cells, log: log, kind: kind)
    }

    static func predefined(_ kind: Kind) -> ZstdSequenceTable {
        switch kind {
        case .literalLengths: predefinedLiteralLengths
        case .offsets: predefinedOffsets
        case .matchLengths: predefinedMatchLengths
        }
    }

    static func make(_ cells: [ZstdFSECell], log: Int, kind: Kind) -> ZstdSequenceTable {
        ZstdSequenceTable(
            cells: cells.map { cell in
                let value = kind.value(of: Int(cell.symbol))
                return ZstdSequenceCell(
                    baseValue: value.base, nextState: cell.base, stateBits: cell.bits, extraBits: value.bits)
            },
            log: log)
    }

    /// A one-state table that always decodes `symbol` (RLE_Mode).
    static func rle(_ symbol: UInt8, kind: Kind) throws -> ZstdSequenceTable {
        guard Int(symbol) <= kind.maximumSymbol else {
            throw zstdMalformed("the \(kind.name) RLE code \(symbol) is above the largest, \(kind.maximumSymbol)")
        }
        return make([ZstdFSECell(symbol: symbol, bits: 0, base: 0)], log: 0, kind: kind)
    }

    /// Reads an FSE_Compressed_Mode description; returns the table and the description's size.
    static func read(_ source: UnsafeRawBufferPointer, kind: Kind) throws -> (ZstdSequenceTable, Int) {
        let (probabilities, log, size) = try ZstdFSE.readDistribution(
            source, maximumSymbol: kind.maximumSymbol, maximumLog: kind.maximumLog, what: kind.name)
        let cells = try ZstdFSE.buildTable(probabilities, log: log, what: kind.name)
        return (make(cells, log: log, kind: kind), size)
    }
}
