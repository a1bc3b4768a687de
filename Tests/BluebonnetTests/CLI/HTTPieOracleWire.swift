import Foundation

/// One HTTP/1.1 request as bytes on the wire: its request line, its header fields in the order sent (names as sent),
/// and its body with any chunked framing taken off.
struct WireRequest: Equatable {
    var line: String
    var headers: [(name: String, value: String)]
    var body: Data
    /// Whether the body came in chunked framing.
    var chunked = false
    /// A pseudo-request: a TLS handshake arrived where a request was expected.
    var isTLSHandshake = false
    /// Whether all of the body is here: a request printed without its body (`--print=H`) has a length and no body.
    var bodyShown = true

    static func == (lhs: WireRequest, rhs: WireRequest) -> Bool {
        lhs.line == rhs.line && lhs.body == rhs.body && lhs.chunked == rhs.chunked
            && lhs.headers.map { [$0.name, $0.value] } == rhs.headers.map { [$0.name, $0.value] }
    }

    /// What a client sent when it spoke TLS to the plain echo server.
    static let tlsHandshake = WireRequest(line: "<TLS handshake>", headers: [], body: Data(), isTLSHandshake: true)

    /// The value of the first field named `name`, whatever its case.
    func value(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// What parsing found at the start of some bytes.
    enum Parse {
        /// More bytes are needed.
        case incomplete
        /// The bytes do not start with a request.
        case malformed
        /// A request, and how many bytes it took.
        case request(WireRequest, length: Int)
    }

    /// Parses the request at the start of `bytes`. `lenient` is for a request printed rather than sent (`--offline`):
    /// the body is whatever follows the head, up to its `Content-Length` if it has one, and a body shorter than
    /// that is taken as it is.
    static func parse(_ bytes: [UInt8], lenient: Bool = false) -> Parse {
        guard let headEnd = find([13, 10, 13, 10], in: bytes, from: 0) else {
            return lenient ? .malformed : .incomplete
        }
        let head = bytes[..<headEnd]
        var lines = split(Array(head), on: [13, 10])
        guard !lines.isEmpty else { return .malformed }
        let line = escaped(lines.removeFirst())
        guard line.split(separator: " ").count == 3 else { return .malformed }
        var headers: [(name: String, value: String)] = []
        for field in lines {
            guard let colon = field.firstIndex(of: UInt8(ascii: ":")) else { return .malformed }
            let name = escaped(Array(field[..<colon]))
            var value = Array(field[(colon + 1)...])
            while value.first == 0x20 || value.first == 0x09 { value.removeFirst() }
            while value.last == 0x20 || value.last == 0x09 { value.removeLast() }
            headers.append((name, escaped(value)))
        }
        var request = WireRequest(line: line, headers: headers, body: Data())
        let bodyStart = headEnd + 4
        if request.value("Transfer-Encoding")?.lowercased().contains("chunked") == true {
            guard let (body, end) = dechunk(bytes, from: bodyStart) else { return lenient ? .malformed : .incomplete }
            request.body = body
            request.chunked = true
            return .request(request, length: end)
        }
        let declared = request.value("Content-Length").flatMap { Int($0) } ?? 0
        if lenient {
            // What follows a body without a length is a printer's separator (newlines), not the body.
            var end = min(bytes.count, bodyStart + (request.value("Content-Length") == nil ? bytes.count : declared))
            if request.value("Content-Length") == nil {
                while end > bodyStart, bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D { end -= 1 }
            }
            request.body = Data(bytes[bodyStart..<max(bodyStart, end)])
            request.bodyShown = request.value("Content-Length") == nil || request.body.count == declared
            return .request(request, length: max(bodyStart, end))
        }
        guard bytes.count >= bodyStart + declared else { return .incomplete }
        request.body = Data(bytes[bodyStart..<(bodyStart + declared)])
        return .request(request, length: bodyStart + declared)
    }

    /// A chunked body starting at `start`: its content, and where its framing ends (after the trailers).
    private static func dechunk(_ bytes: [UInt8], from start: Int) -> (Data, Int)? {
        var body = Data()
        var index = start
        while true {
            guard let lineEnd = find([13, 10], in: bytes, from: index) else { return nil }
            let sizeText =
                String(decoding: bytes[index..<lineEnd], as: UTF8.self)
                .split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard let size = Int(sizeText, radix: 16), size >= 0 else { return nil }
            index = lineEnd + 2
            if size == 0 {
                // Trailer fields, then an empty line.
                while true {
                    guard let end = find([13, 10], in: bytes, from: index) else { return nil }
                    let empty = end == index
                    index = end + 2
                    if empty { return (body, index) }
                }
            }
            guard bytes.count >= index + size + 2 else { return nil }
            body.append(contentsOf: bytes[index..<(index + size)])
            index += size + 2
        }
    }

    static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard needle.count <= bytes.count, start <= bytes.count - needle.count else { return nil }
        var index = start
        while index <= bytes.count - needle.count {
            if bytes[index] == needle[0], Array(bytes[index..<(index + needle.count)]) == needle { return index }
            index += 1
        }
        return nil
    }

    private static func split(_ bytes: [UInt8], on separator: [UInt8]) -> [[UInt8]] {
        var parts: [[UInt8]] = []
        var start = 0
        while let end = find(separator, in: bytes, from: start) {
            parts.append(Array(bytes[start..<end]))
            start = end + separator.count
        }
        parts.append(Array(bytes[start...]))
        return parts
    }

    /// Bytes as text that tells every byte apart: printable ASCII as it is, anything else as `\xHH`.
    static func escaped<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        var text = ""
        for byte in bytes {
            if byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\") {
                text.append(Character(Unicode.Scalar(byte)))
            } else {
                text += String(format: "\\x%02X", byte)
            }
        }
        return text
    }
}

/// JSON text with the writer's choices taken out, and nothing else: white space between tokens dropped, and each
/// string written one way (its escapes decoded, then only `"`, `\` and controls escaped). Members keep their order,
/// repeated keys stay, and numbers keep their spelling (`1.0`, `1e400` and `Infinity` stay as they are).
enum JSONTokens {
    /// The canonical text of `data`, or `nil` when it is not a sequence of JSON tokens.
    static func canonical(_ data: Data) -> Data? {
        let bytes = [UInt8](data)
        var output = [UInt8]()
        var index = 0
        var sawToken = false
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case 0x20, 0x09, 0x0A, 0x0D:
                index += 1
            case UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: ","),
                UInt8(ascii: ":"):
                output.append(byte)
                index += 1
            case UInt8(ascii: "\""):
                guard let (text, end) = string(bytes, from: index) else { return nil }
                output += text
                index = end
                sawToken = true
            default:
                // A number or a literal (Python writes NaN and Infinity): copied as spelled.
                let start = index
                while index < bytes.count, isWordByte(bytes[index]) { index += 1 }
                guard index > start, isNumberOrLiteral(Array(bytes[start..<index])) else { return nil }
                output += bytes[start..<index]
                sawToken = true
            }
        }
        return sawToken || !output.isEmpty ? Data(output) : nil
    }

    /// A JSON number, or a literal (`true`, `false`, `null`, and Python's `NaN`, `Infinity`, `-Infinity`).
    private static func isNumberOrLiteral(_ word: [UInt8]) -> Bool {
        let text = String(decoding: word, as: UTF8.self)
        if ["true", "false", "null", "NaN", "Infinity", "-Infinity"].contains(text) { return true }
        return text.range(of: #"^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$"#, options: .regularExpression) != nil
    }

    private static func isWordByte(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: ".")
    }

    /// The string token at `start`, written canonically, and the index after it.
    private static func string(_ bytes: [UInt8], from start: Int) -> ([UInt8], Int)? {
        var units: [UInt16] = []
        var raw: [UInt8] = []
        var index = start + 1
        func flushRaw() -> Bool {
            guard !raw.isEmpty else { return true }
            guard let text = String(validating: raw, as: UTF8.self) else { return false }
            units += Array(text.utf16)
            raw = []
            return true
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                guard flushRaw() else { return nil }
                var output: [UInt8] = [UInt8(ascii: "\"")]
                for scalar in decode(units) {
                    switch scalar {
                    case .some("\""): output += Array(#"\""#.utf8)
                    case .some("\\"): output += Array(#"\\"#.utf8)
                    case let .some(scalar) where scalar.value < 0x20:
                        output += Array(String(format: "\\u%04x", scalar.value).utf8)
                    case let .some(scalar): output += Array(String(scalar).utf8)
                    case let .none(unit): output += Array(String(format: "\\u%04x", unit).utf8)
                    }
                }
                output.append(UInt8(ascii: "\""))
                return (output, index + 1)
            }
            if byte == UInt8(ascii: "\\") {
                guard flushRaw(), index + 1 < bytes.count else { return nil }
                let escape = bytes[index + 1]
                index += 2
                switch escape {
                case UInt8(ascii: "\""): units.append(0x22)
                case UInt8(ascii: "\\"): units.append(0x5C)
                case UInt8(ascii: "/"): units.append(0x2F)
                case UInt8(ascii: "b"): units.append(0x08)
                case UInt8(ascii: "f"): units.append(0x0C)
                case UInt8(ascii: "n"): units.append(0x0A)
                case UInt8(ascii: "r"): units.append(0x0D)
                case UInt8(ascii: "t"): units.append(0x09)
                case UInt8(ascii: "u"):
                    guard index + 4 <= bytes.count,
                        let unit = UInt16(String(decoding: bytes[index..<(index + 4)], as: UTF8.self), radix: 16)
                    else { return nil }
                    units.append(unit)
                    index += 4
                default: return nil
                }
                continue
            }
            raw.append(byte)
            index += 1
        }
        return nil
    }

    /// UTF-16 units as scalars; a lone surrogate is kept as its unit.
    private static func decode(_ units: [UInt16]) -> [Unit] {
        var result: [Unit] = []
        var index = 0
        while index < units.count {
            let unit = units[index]
            if UTF16.isLeadSurrogate(unit), index + 1 < units.count, UTF16.isTrailSurrogate(units[index + 1]) {
                let value = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(units[index + 1]) - 0xDC00)
                result.append(Unicode.Scalar(value).map(Unit.some) ?? .none(unit))
                index += 2
            } else {
                result.append(Unicode.Scalar(unit).map(Unit.some) ?? .none(unit))
                index += 1
            }
        }
        return result
    }

    private enum Unit {
        case some(Unicode.Scalar)
        case none(UInt16)
    }
}

/// A command line as a shell splits it: white space between words, `'...'` literal, `"..."` with `\"`, `\\`, `\$`
/// and `` \` `` escapes, `$'...'` with C escapes (`\n`, `\t`, `\r`, `\\`, `\'`, `\xHH`, `\e`), and a backslash
/// elsewhere escaping the next character.
enum ShellWords {
    struct Unterminated: Error, CustomStringConvertible {
        let line: String
        var description: String { "unterminated quote in: \(line)" }
    }

    static func split(_ line: String) throws -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        let characters = Array(line)
        var index = 0
        while index < characters.count {
            let character = characters[index]
            switch character {
            case " ", "\t", "\n":
                if inWord { words.append(current) }
                current = ""
                inWord = false
                index += 1
            case "'":
                inWord = true
                guard let end = characters[(index + 1)...].firstIndex(of: "'") else { throw Unterminated(line: line) }
                current += String(characters[(index + 1)..<end])
                index = end + 1
            case "\"":
                inWord = true
                index += 1
                while true {
                    guard index < characters.count else { throw Unterminated(line: line) }
                    let inner = characters[index]
                    if inner == "\"" { break }
                    if inner == "\\", index + 1 < characters.count, "\"\\$`".contains(characters[index + 1]) {
                        current.append(characters[index + 1])
                        index += 2
                    } else {
                        current.append(inner)
                        index += 1
                    }
                }
                index += 1
            case "$" where index + 1 < characters.count && characters[index + 1] == "'":
                inWord = true
                index += 2
                var bytes: [UInt8] = []
                while true {
                    guard index < characters.count else { throw Unterminated(line: line) }
                    let inner = characters[index]
                    if inner == "'" { break }
                    if inner == "\\", index + 1 < characters.count {
                        let escape = characters[index + 1]
                        index += 2
                        switch escape {
                        case "n": bytes.append(0x0A)
                        case "t": bytes.append(0x09)
                        case "r": bytes.append(0x0D)
                        case "e": bytes.append(0x1B)
                        case "x":
                            let digits = String(characters[index..<min(index + 2, characters.count)])
                            bytes.append(UInt8(digits, radix: 16) ?? 0)
                            index += digits.count
                        default: bytes += Array(String(escape).utf8)
                        }
                    } else {
                        bytes += Array(String(inner).utf8)
                        index += 1
                    }
                }
                current += String(decoding: bytes, as: UTF8.self)
                index += 1
            case "\\" where index + 1 < characters.count:
                inWord = true
                current.append(characters[index + 1])
                index += 2
            default:
                inWord = true
                current.append(character)
                index += 1
            }
        }
        if inWord { words.append(current) }
        return words
    }
}
