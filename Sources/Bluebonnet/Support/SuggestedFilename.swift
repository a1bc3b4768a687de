import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The file name a response suggests: `Content-Disposition`'s `filename*` (RFC 8187, UTF-8 or ISO-8859-1) or
/// `filename` (RFC 6266), else the last component of the URL, made safe to use as a name in a directory.
enum SuggestedFilename {
    /// The longest name kept, in UTF-8 bytes: most file systems allow 255.
    static let maximumLength = 255

    /// The sanitised name, or `nil` when nothing usable is suggested.
    static func name(for response: HTTPURLResponse) -> String? {
        let fromHeader = response.value(forHTTPHeaderField: "Content-Disposition").flatMap(fromContentDisposition)
        if let name = fromHeader.flatMap(sanitised) { return name }
        return response.url.map(\.lastPathComponent).flatMap(sanitised)
    }

    /// The name in a `Content-Disposition` value, `filename*` winning over `filename`.
    static func fromContentDisposition(_ value: String) -> String? {
        var plain: String?
        var extended: String?
        for parameter in parameters(of: value) {
            switch parameter.name.lowercased() {
            case "filename*": extended = extended ?? decodeExtended(parameter.value)
            case "filename": plain = plain ?? parameter.value
            default: continue
            }
        }
        return extended ?? plain
    }

    /// The `name=value` parameters after the disposition type; quoted strings unescaped.
    static func parameters(of value: String) -> [(name: String, value: String)] {
        var result: [(String, String)] = []
        var scalars = Substring(value)
        // Skip the disposition type.
        guard let firstSemicolon = scalars.firstIndex(of: ";") else { return [] }
        scalars = scalars[scalars.index(after: firstSemicolon)...]
        while !scalars.isEmpty {
            scalars = scalars.drop { $0 == " " || $0 == "\t" || $0 == ";" }
            guard let equals = scalars.firstIndex(of: "=") else { break }
            let name = scalars[..<equals].trimmingCharacters(in: .whitespaces)
            scalars = scalars[scalars.index(after: equals)...].drop { $0 == " " || $0 == "\t" }
            var parameterValue = ""
            if scalars.first == "\"" {
                scalars = scalars.dropFirst()
                var escaped = false
                while let character = scalars.first {
                    scalars = scalars.dropFirst()
                    if escaped { parameterValue.append(character); escaped = false; continue }
                    if character == "\\" { escaped = true; continue }
                    if character == "\"" { break }
                    parameterValue.append(character)
                }
                scalars = scalars.drop { $0 != ";" }
            } else {
                let end = scalars.firstIndex(of: ";") ?? scalars.endIndex
                parameterValue = scalars[..<end].trimmingCharacters(in: .whitespaces)
                scalars = scalars[end...]
            }
            result.append((name, parameterValue))
        }
        return result
    }

    /// `charset'language'percent-encoded` (RFC 8187); UTF-8 and ISO-8859-1 only, as the RFC requires of recipients.
    static func decodeExtended(_ value: String) -> String? {
        let parts = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        let encoding: String.Encoding
        switch parts[0].lowercased() {
        case "utf-8": encoding = .utf8
        case "iso-8859-1": encoding = .isoLatin1
        default: return nil
        }
        var bytes: [UInt8] = []
        var iterator = Array(parts[2].utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%") {
                guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                    return nil
                }
                bytes.append(high << 4 | low)
            } else {
                bytes.append(byte)
            }
        }
        return String(bytes: bytes, encoding: encoding)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// A name that stays in the directory it is put in and shows what it is: only its last path component (either
    /// separator), no control characters, no bidirectional formatting characters (a right-to-left override makes
    /// `invoice\u{202E}fdp.exe` read as `invoice` + `exe.pdf`), not `.` or `..`, no leading dots (hidden files), at
    /// most `maximumLength` bytes.
    static func sanitised(_ name: String) -> String? {
        let last = name.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        var cleaned = String(String.UnicodeScalarView(last.unicodeScalars.filter { !isControlOrBidiFormatting($0) }))
        cleaned = cleaned.trimmingCharacters(in: .whitespaces)
        while cleaned.hasPrefix(".") { cleaned.removeFirst() }
        while cleaned.utf8.count > maximumLength { cleaned.removeLast() }
        return cleaned.isEmpty ? nil : cleaned
    }

    /// C0 and C1 controls, DEL, and the bidirectional formatting characters: ALM (U+061C), LRM and RLM
    /// (U+200E/F), the embeddings and overrides (U+202A–U+202E) and the isolates (U+2066–U+2069).
    static func isControlOrBidiFormatting(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0..<0x20, 0x7F, 0x80...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
