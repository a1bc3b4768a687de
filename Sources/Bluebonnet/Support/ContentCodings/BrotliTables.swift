/// The fixed tables of RFC 7932: lengths and extra bits of the variable-length fields, the context lookup tables,
/// the static dictionary's word counts and the word transforms.
enum BrotliTables {
    /// One word transform of RFC 7932 section 8: a prefix, an elementary transform and a suffix.
    struct Transform: Sendable {
        let prefix: [UInt8]
        /// 0 identity, 1 ferment the first character, 2 ferment all, 3...11 omit the first 1...9 bytes, 12...20 omit
        /// the last 1...9 bytes.
        let kind: UInt8
        let suffix: [UInt8]

        init(_ prefix: String, _ kind: UInt8, _ suffix: String) {
            self.prefix = Array(prefix.utf8)
            self.kind = kind
            self.suffix = Array(suffix.utf8)
        }
    }

    /// RFC 7932 section 5: the smallest insert length of each insert length code, and its number of extra bits.
    static let insertBase: [Int] = [
        0, 1, 2, 3, 4, 5, 6, 8, 10, 14, 18, 26, 34, 50, 66, 98, 130, 194, 322, 578, 1090, 2114, 6210, 22594,
    ]
    static let insertExtra: [Int] = [0, 0, 0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 7, 8, 9, 10, 12, 14, 24]
    /// RFC 7932 section 5: the smallest copy length of each copy length code, and its number of extra bits.
    static let copyBase: [Int] = [
        2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 14, 18, 22, 30, 38, 54, 70, 102, 134, 198, 326, 582, 1094, 2118,
    ]
    static let copyExtra: [Int] = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 7, 8, 9, 10, 24]
    /// RFC 7932 section 6: the smallest block count of each block count code, and its number of extra bits.
    static let blockCountBase: [Int] = [
        1, 5, 9, 13, 17, 25, 33, 41, 49, 65, 81, 97, 113, 145, 177, 209, 241, 305, 369, 497, 753, 1265, 2289, 4337,
        8433, 16625,
    ]
    static let blockCountExtra: [Int] = [
        2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 7, 8, 9, 10, 11, 12, 13, 24,
    ]
    /// RFC 7932 section 5: the insert and copy length code ranges of each 64-symbol cell of the insert-and-copy
    /// alphabet, as (first insert code, first copy code); the first two cells also mean distance code 0.
    static let commandCells: [(insert: Int, copy: Int)] = [
        (0, 0), (0, 8), (0, 0), (0, 8), (8, 0), (8, 8), (0, 16), (16, 0), (8, 16), (16, 8), (16, 16),
    ]

    /// One insert-and-copy length symbol unpacked (RFC 7932 section 5).
    struct Command: Sendable {
        let insertBase: Int32
        let insertExtra: UInt8
        let copyExtra: UInt8
        let copyBase: Int32
        /// The command reuses the last distance (distance code 0) without coding it.
        let implicitDistance: Bool
    }

    /// The 704 insert-and-copy length symbols unpacked.
    static let commands: [Command] = (0..<704).map { symbol in
        let cell = commandCells[symbol >> 6]
        let insertCode = cell.insert + ((symbol >> 3) & 7)
        let copyCode = cell.copy + (symbol & 7)
        return Command(
            insertBase: Int32(insertBase[insertCode]), insertExtra: UInt8(insertExtra[insertCode]),
            copyExtra: UInt8(copyExtra[copyCode]), copyBase: Int32(copyBase[copyCode]), implicitDistance: symbol < 128)
    }

    /// RFC 7932 section 4: which of the last distances each short distance code takes (0 the last), and what it adds.
    static let shortCodeIndex: [Int] = [0, 1, 2, 3, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1]
    static let shortCodeDelta: [Int] = [0, 0, 0, 0, -1, 1, -2, 2, -3, 3, -1, 1, -2, 2, -3, 3]

    /// RFC 7932 section 8, `NDBITS`: log2 of the number of dictionary words of each length 0...24.
    static let dictionaryBits: [Int] = [
        0, 0, 0, 0, 10, 10, 11, 11, 10, 10, 10, 10, 10, 9, 9, 8, 7, 7, 8, 7, 7, 6, 6, 5, 5,
    ]
    /// RFC 7932 section 8, `DOFFSET`: where the words of each length 0...24 start in the dictionary.
    static let dictionaryOffsets: [Int] = {
        var offsets = [Int](repeating: 0, count: 25)
        for length in 4..<24 { offsets[length + 1] = offsets[length] + (length << dictionaryBits[length]) }
        return offsets
    }()

    /// The context ID of a literal is `contextLookup[mode * 512 + p1] | contextLookup[mode * 512 + 256 + p2]` for the
    /// modes LSB6, MSB6, UTF8 and signed (0...3) of RFC 7932 section 7.1.
    static let contextLookup: [UInt8] = {
        var table = [UInt8](repeating: 0, count: 2048)
        for byte in 0..<256 {
            table[byte] = UInt8(byte & 0x3F)
            table[512 + byte] = UInt8(byte >> 2)
            table[1024 + byte] = lut0[byte]
            table[1024 + 256 + byte] = lut1[byte]
            table[1536 + byte] = lut2[byte] << 3
            table[1536 + 256 + byte] = lut2[byte]
        }
        return table
    }()

    /// RFC 7932 section 7.1, `Lut0`: the UTF-8 context mode's contribution of the last byte.
    static let lut0: [UInt8] = [
        0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 4, 0, 0, 4, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        8, 12, 16, 12, 12, 20, 12, 16, 24, 28, 12, 12, 32, 12, 36, 12,
        44, 44, 44, 44, 44, 44, 44, 44, 44, 44, 32, 32, 24, 40, 28, 12,
        12, 48, 52, 52, 52, 48, 52, 52, 52, 48, 52, 52, 52, 52, 52, 48,
        52, 52, 52, 52, 52, 48, 52, 52, 52, 52, 52, 24, 12, 28, 12, 12,
        12, 56, 60, 60, 60, 56, 60, 60, 60, 56, 60, 60, 60, 60, 60, 56,
        60, 60, 60, 60, 60, 56, 60, 60, 60, 60, 60, 24, 12, 28, 12, 0,
        0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1,
        0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1,
        0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1,
        0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1,
        2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3,
        2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3,
        2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3,
        2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3, 2, 3,
    ]
    /// RFC 7932 section 7.1, `Lut1`: the UTF-8 context mode's contribution of the byte before it.
    static let lut1: [UInt8] = [
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
        2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1,
        1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
        2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1,
        1, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
        3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 1, 1, 1, 1, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
        2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    ]
    /// RFC 7932 section 7.1, `Lut2`: the signed context mode's class of a byte.
    static let lut2: [UInt8] = [
        0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
        2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
        2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
        2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
        3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
        3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
        3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
        3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3,
        4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
        4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
        4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
        4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4,
        5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
        5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
        5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5, 5,
        6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 7,
    ]
    /// RFC 7932 appendix B: the 121 word transforms, as (prefix, elementary transform, suffix).
    static let transforms: [Transform] = [
        Transform("", 0, ""),  // 0
        Transform("", 0, " "),  // 1
        Transform(" ", 0, " "),  // 2
        Transform("", 3, ""),  // 3
        Transform("", 1, " "),  // 4
        Transform("", 0, " the "),  // 5
        Transform(" ", 0, ""),  // 6
        Transform("s ", 0, " "),  // 7
        Transform("", 0, " of "),  // 8
        Transform("", 1, ""),  // 9
        Transform("", 0, " and "),  // 10
        Transform("", 4, ""),  // 11
        Transform("", 12, ""),  // 12
        Transform(", ", 0, " "),  // 13
        Transform("", 0, ", "),  // 14
        Transform(" ", 1, " "),  // 15
        Transform("", 0, " in "),  // 16
        Transform("", 0, " to "),  // 17
        Transform("e ", 0, " "),  // 18
        Transform("", 0, "\""),  // 19
        Transform("", 0, "."),  // 20
        Transform("", 0, "\">"),  // 21
        Transform("", 0, "\n"),  // 22
        Transform("", 14, ""),  // 23
        Transform("", 0, "]"),  // 24
        Transform("", 0, " for "),  // 25
        Transform("", 5, ""),  // 26
        Transform("", 13, ""),  // 27
        Transform("", 0, " a "),  // 28
        Transform("", 0, " that "),  // 29
        Transform(" ", 1, ""),  // 30
        Transform("", 0, ". "),  // 31
        Transform(".", 0, ""),  // 32
        Transform(" ", 0, ", "),  // 33
        Transform("", 6, ""),  // 34
        Transform("", 0, " with "),  // 35
        Transform("", 0, "'"),  // 36
        Transform("", 0, " from "),  // 37
        Transform("", 0, " by "),  // 38
        Transform("", 7, ""),  // 39
        Transform("", 8, ""),  // 40
        Transform(" the ", 0, ""),  // 41
        Transform("", 15, ""),  // 42
        Transform("", 0, ". The "),  // 43
        Transform("", 2, ""),  // 44
        Transform("", 0, " on "),  // 45
        Transform("", 0, " as "),  // 46
        Transform("", 0, " is "),  // 47
        Transform("", 18, ""),  // 48
        Transform("", 12, "ing "),  // 49
        Transform("", 0, "\n\t"),  // 50
        Transform("", 0, ":"),  // 51
        Transform(" ", 0, ". "),  // 52
        Transform("", 0, "ed "),  // 53
        Transform("", 11, ""),  // 54
        Transform("", 9, ""),  // 55
        Transform("", 17, ""),  // 56
        Transform("", 0, "("),  // 57
        Transform("", 1, ", "),  // 58
        Transform("", 19, ""),  // 59
        Transform("", 0, " at "),  // 60
        Transform("", 0, "ly "),  // 61
        Transform(" the ", 0, " of "),  // 62
        Transform("", 16, ""),  // 63
        Transform("", 20, ""),  // 64
        Transform(" ", 1, ", "),  // 65
        Transform("", 1, "\""),  // 66
        Transform(".", 0, "("),  // 67
        Transform("", 2, " "),  // 68
        Transform("", 1, "\">"),  // 69
        Transform("", 0, "=\""),  // 70
        Transform(" ", 0, "."),  // 71
        Transform(".com/", 0, ""),  // 72
        Transform(" the ", 0, " of the "),  // 73
        Transform("", 1, "'"),  // 74
        Transform("", 0, ". This "),  // 75
        Transform("", 0, ","),  // 76
        Transform(".", 0, " "),  // 77
        Transform("", 1, "("),  // 78
        Transform("", 1, "."),  // 79
        Transform("", 0, " not "),  // 80
        Transform(" ", 0, "=\""),  // 81
        Transform("", 0, "er "),  // 82
        Transform(" ", 2, " "),  // 83
        Transform("", 0, "al "),  // 84
        Transform(" ", 2, ""),  // 85
        Transform("", 0, "='"),  // 86
        Transform("", 2, "\""),  // 87
        Transform("", 1, ". "),  // 88
        Transform(" ", 0, "("),  // 89
        Transform("", 0, "ful "),  // 90
        Transform(" ", 1, ". "),  // 91
        Transform("", 0, "ive "),  // 92
        Transform("", 0, "less "),  // 93
        Transform("", 2, "'"),  // 94
        Transform("", 0, "est "),  // 95
        Transform(" ", 1, "."),  // 96
        Transform("", 2, "\">"),  // 97
        Transform(" ", 0, "='"),  // 98
        Transform("", 1, ","),  // 99
        Transform("", 0, "ize "),  // 100
        Transform("", 2, "."),  // 101
        Transform("\u{A0}", 0, ""),  // 102
        Transform(" ", 0, ","),  // 103
        Transform("", 1, "=\""),  // 104
        Transform("", 2, "=\""),  // 105
        Transform("", 0, "ous "),  // 106
        Transform("", 2, ", "),  // 107
        Transform("", 1, "='"),  // 108
        Transform(" ", 1, ","),  // 109
        Transform(" ", 2, "=\""),  // 110
        Transform(" ", 2, ", "),  // 111
        Transform("", 2, ","),  // 112
        Transform("", 2, "("),  // 113
        Transform("", 2, ". "),  // 114
        Transform(" ", 2, "."),  // 115
        Transform("", 2, "='"),  // 116
        Transform(" ", 2, ". "),  // 117
        Transform(" ", 1, "=\""),  // 118
        Transform(" ", 2, "='"),  // 119
        Transform(" ", 1, "='"),  // 120
    ]
}
