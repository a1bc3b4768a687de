import Foundation

/// Says whether bytes are one JSON text by RFC 8259 (any value at the top, white space around it), without building
/// it: a 10 MB body took `JSONSerialization` 1.1 s and 550 MB only to be told it was valid. Nesting deeper than
/// `maximumDepth` counts as invalid, which keeps the recursive indenter's stack bounded against a hostile body.
enum JSONValidator {
    /// As deep as `JSONSerialization` nests.
    static let maximumDepth = 512

    /// Reads the bytes in place: `Data`'s own subscript costs a bounds and representation check per byte, which made
    /// an 11.7 MB body take 0.5 s.
    static func isValid(_ data: Data) -> Bool {
        data.withUnsafeBytes { isValid(buffer: $0) }
    }

    private static func isValid(buffer: UnsafeRawBufferPointer) -> Bool {
        stop(in: buffer) == nil
    }

    /// Where `data` stops being JSON, as a person finds it in an editor: the line and column (from 1) of the byte
    /// the reader stopped at; `nil` when it is one JSON text.
    static func firstError(in data: Data) -> (line: Int, column: Int)? {
        let bytes = [UInt8](data)
        guard let offset = bytes.withUnsafeBytes({ stop(in: $0) }) else { return nil }
        let before = bytes[..<offset]
        let line = before.reduce(1) { $1 == 0x0A ? $0 + 1 : $0 }
        let lineStart = before.lastIndex(of: 0x0A).map { $0 + 1 } ?? 0
        return (line, String(decoding: bytes[lineStart..<offset], as: UTF8.self).count + 1)
    }

    /// The offset the reader stopped at, `nil` when the bytes are one JSON text.
    private static func stop(in buffer: UnsafeRawBufferPointer) -> Int? {
        var reader = Reader(bytes: buffer)
        reader.skipWhitespace()
        guard reader.value() else { return min(reader.index, buffer.endIndex) - buffer.startIndex }
        reader.skipWhitespace()
        return reader.index == buffer.endIndex ? nil : reader.index - buffer.startIndex
    }

    /// A reader over bytes that stay valid while it reads (the caller's `withUnsafeBytes`).
    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var index: Int
        /// What encloses the reader: `true` for an object, `false` for an array.
        var open: [Bool] = []

        init(bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
            index = bytes.startIndex
        }

        var current: UInt8? { index < bytes.endIndex ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 { index += 1 }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard current == byte else { return false }
            index += 1
            return true
        }

        /// One value, containers included, read without recursion.
        mutating func value() -> Bool {
            while true {
                // A value starts here: a scalar, or a container whose first member or item comes next.
                skipWhitespace()
                switch current {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    let isObject = current == UInt8(ascii: "{")
                    index += 1
                    guard open.count < JSONValidator.maximumDepth else { return false }
                    open.append(isObject)
                    skipWhitespace()
                    if take(isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        open.removeLast()
                    } else {
                        if isObject { guard key() else { return false } }
                        continue
                    }
                case UInt8(ascii: "\""):
                    guard string() else { return false }
                case UInt8(ascii: "t"):
                    guard literal("true") else { return false }
                case UInt8(ascii: "f"):
                    guard literal("false") else { return false }
                case UInt8(ascii: "n"):
                    guard literal("null") else { return false }
                default:
                    guard number() else { return false }
                }
                // A value ended: close what it ends, or go on to the next member or item.
                while let isObject = open.last {
                    skipWhitespace()
                    if take(UInt8(ascii: ",")) {
                        if isObject {
                            skipWhitespace()
                            guard key() else { return false }
                        }
                        break
                    }
                    guard take(isObject ? UInt8(ascii: "}") : UInt8(ascii: "]")) else { return false }
                    open.removeLast()
                }
                if open.isEmpty { return true }
            }
        }

        /// A member's key and its colon.
        mutating func key() -> Bool {
            guard current == UInt8(ascii: "\""), string() else { return false }
            skipWhitespace()
            return take(UInt8(ascii: ":"))
        }

        mutating func string() -> Bool {
            guard take(UInt8(ascii: "\"")) else { return false }
            while let byte = current {
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return true
                case UInt8(ascii: "\\"):
                    guard let escaped = current else { return false }
                    index += 1
                    switch escaped {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"),
                        UInt8(ascii: "f"),
                        UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        continue
                    case UInt8(ascii: "u"):
                        for _ in 0..<4 {
                            guard let digit = current, digit.isHexDigit else { return false }
                            index += 1
                        }
                    default:
                        return false
                    }
                case 0x00..<0x20:
                    return false
                default:
                    continue
                }
            }
            return false
        }

        mutating func literal(_ word: StaticString) -> Bool {
            let text = UnsafeBufferPointer(start: word.utf8Start, count: word.utf8CodeUnitCount)
            for byte in text {
                guard take(byte) else { return false }
            }
            return true
        }

        mutating func number() -> Bool {
            _ = take(UInt8(ascii: "-"))
            if take(UInt8(ascii: "0")) {
                // A leading zero stands alone.
            } else {
                guard digits() else { return false }
            }
            if take(UInt8(ascii: ".")) { guard digits() else { return false } }
            if take(UInt8(ascii: "e")) || take(UInt8(ascii: "E")) {
                if !take(UInt8(ascii: "+")) { _ = take(UInt8(ascii: "-")) }
                guard digits() else { return false }
            }
            return true
        }

        /// One or more decimal digits.
        mutating func digits() -> Bool {
            let start = index
            while let byte = current, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) { index += 1 }
            return index > start
        }
    }
}

extension UInt8 {
    fileprivate var isHexDigit: Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(self)
            || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains(self)
    }
}
