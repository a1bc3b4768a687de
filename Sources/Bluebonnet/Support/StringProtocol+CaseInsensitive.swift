extension StringProtocol {
    /// Whether the two are equal but for letter case, as HTTP compares its tokens (field names, methods, schemes)
    /// and as Alamofire's `HTTPHeaders` compares names (`lowercased()`). ASCII, which every token is, is compared byte
    /// by byte; anything else falls back to `lowercased()`. Foundation's `caseInsensitiveCompare` bridges both to
    /// `NSString` and costs thousands of instructions a call, on the path of every request.
    ///
    /// - Parameter other: The string to compare with.
    /// - Returns: `true` when they are equal ignoring case.
    func equalsIgnoringCase<Other: StringProtocol>(_ other: Other) -> Bool {
        var lhs = utf8.makeIterator()
        var rhs = other.utf8.makeIterator()
        while true {
            switch (lhs.next(), rhs.next()) {
            case (nil, nil):
                return true
            case let (left?, right?):
                if left >= 0x80 || right >= 0x80 { return lowercased() == other.lowercased() }
                if left != right && Self.asciiLowercased(left) != Self.asciiLowercased(right) { return false }
            default:
                // One ended first: unequal, unless a non-ASCII rest lowercases to another length.
                return !isASCII || !other.isASCII ? lowercased() == other.lowercased() : false
            }
        }
    }

    private var isASCII: Bool { utf8.allSatisfy { $0 < 0x80 } }

    private static func asciiLowercased(_ byte: UInt8) -> UInt8 {
        (0x41...0x5A).contains(byte) ? byte | 0x20 : byte
    }
}
