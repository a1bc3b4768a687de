import Foundation

/// Lays out JSON text already known to be valid in the shape `JSONSerialization`'s `.prettyPrinted` gives (two
/// spaces, `" : "`), keeping what the server sent: every member (a repeated key too), numbers as spelled (`1.0` stays
/// `1.0`), strings as escaped. `--sorted` orders each object's members by key (stably, so repeated keys keep their
/// order); `--unsorted` keeps the server's order.
enum JSONIndenter {
    /// A value, its scalars as their bytes in the text.
    private indirect enum Node {
        case scalar(ArraySlice<UInt8>)
        case array([Node])
        case object([(key: ArraySlice<UInt8>, value: Node)])
    }

    static func indent(_ json: String, sortingKeys: Bool = false, width: Int = 2) -> String {
        let bytes = Array(json.utf8)
        var parser = Parser(bytes: bytes[...])
        guard let node = parser.value() else { return json }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count * 2)
        render(node, depth: 0, sortingKeys: sortingKeys, width: max(0, width), into: &output)
        return String(decoding: output, as: UTF8.self)
    }

    private static func render(_ node: Node, depth: Int, sortingKeys: Bool, width: Int, into output: inout [UInt8]) {
        func newline(_ depth: Int) {
            output.append(UInt8(ascii: "\n"))
            output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: depth * width))
        }
        switch node {
        case let .scalar(text):
            output.append(contentsOf: text)
        case let .array(items):
            output.append(UInt8(ascii: "["))
            guard !items.isEmpty else { return output.append(UInt8(ascii: "]")) }
            for (index, item) in items.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                newline(depth + 1)
                render(item, depth: depth + 1, sortingKeys: sortingKeys, width: width, into: &output)
            }
            newline(depth)
            output.append(UInt8(ascii: "]"))
        case let .object(members):
            output.append(UInt8(ascii: "{"))
            guard !members.isEmpty else { return output.append(UInt8(ascii: "}")) }
            let ordered = sortingKeys ? stableSorted(members) : members
            for (index, member) in ordered.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                newline(depth + 1)
                output.append(contentsOf: member.key)
                output.append(contentsOf: " : ".utf8)
                render(member.value, depth: depth + 1, sortingKeys: sortingKeys, width: width, into: &output)
            }
            newline(depth)
            output.append(UInt8(ascii: "}"))
        }
    }

    /// Members by their keys' decoded text, repeated keys in their order.
    private static func stableSorted(_ members: [(key: ArraySlice<UInt8>, value: Node)]) -> [(
        key: ArraySlice<UInt8>, value: Node
    )] {
        let keyed = members.enumerated().map {
            (offset: $0.offset, key: decodedKey($0.element.key), member: $0.element)
        }
        return keyed.sorted { $0.key != $1.key ? $0.key < $1.key : $0.offset < $1.offset }.map(\.member)
    }

    /// A quoted key as its text, for ordering; escapes other than `\\uXXXX` and the simple ones are kept as written.
    private static func decodedKey(_ quoted: ArraySlice<UInt8>) -> String {
        let text = String(decoding: quoted.dropFirst().dropLast(), as: UTF8.self)
        guard text.contains("\\") else { return text }
        return (try? JSONDecoderLite.string(quoted)) ?? text
    }

    /// A recursive-descent reader over valid JSON: it records where each scalar starts and ends, never its value.
    private struct Parser {
        var bytes: ArraySlice<UInt8>

        mutating func skipWhitespace() {
            while let byte = bytes.first, byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
                bytes.removeFirst()
            }
        }

        mutating func value() -> Node? {
            skipWhitespace()
            guard let first = bytes.first else { return nil }
            switch first {
            case UInt8(ascii: "{"):
                bytes.removeFirst()
                var members: [(key: ArraySlice<UInt8>, value: Node)] = []
                skipWhitespace()
                if bytes.first == UInt8(ascii: "}") {
                    bytes.removeFirst()
                    return .object(members)
                }
                while true {
                    skipWhitespace()
                    guard let key = string() else { return nil }
                    skipWhitespace()
                    guard bytes.popFirst() == UInt8(ascii: ":"), let item = value() else { return nil }
                    members.append((key, item))
                    skipWhitespace()
                    switch bytes.popFirst() {
                    case UInt8(ascii: ","): continue
                    case UInt8(ascii: "}"): return .object(members)
                    default: return nil
                    }
                }
            case UInt8(ascii: "["):
                bytes.removeFirst()
                var items: [Node] = []
                skipWhitespace()
                if bytes.first == UInt8(ascii: "]") {
                    bytes.removeFirst()
                    return .array(items)
                }
                while true {
                    guard let item = value() else { return nil }
                    items.append(item)
                    skipWhitespace()
                    switch bytes.popFirst() {
                    case UInt8(ascii: ","): continue
                    case UInt8(ascii: "]"): return .array(items)
                    default: return nil
                    }
                }
            case UInt8(ascii: "\""):
                return string().map(Node.scalar)
            default:
                // A number, `true`, `false` or `null`: up to the next delimiter.
                let end =
                    bytes.firstIndex {
                        $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "]") || $0 == UInt8(ascii: "}")
                            || $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09
                    } ?? bytes.endIndex
                let scalar = bytes[bytes.startIndex..<end]
                bytes = bytes[end...]
                return scalar.isEmpty ? nil : .scalar(scalar)
            }
        }

        /// A string with its quotes, as written.
        mutating func string() -> ArraySlice<UInt8>? {
            guard bytes.first == UInt8(ascii: "\"") else { return nil }
            let start = bytes.startIndex
            var index = bytes.index(after: start)
            while index < bytes.endIndex {
                switch bytes[index] {
                case UInt8(ascii: "\\"): index += 2
                case UInt8(ascii: "\""):
                    let end = bytes.index(after: index)
                    defer { bytes = bytes[end...] }
                    return bytes[start..<end]
                default: index += 1
                }
            }
            return nil
        }
    }
}

/// Decodes one JSON string literal (with its quotes) through Foundation, for the rare key with escapes.
private enum JSONDecoderLite {
    static func string(_ quoted: ArraySlice<UInt8>) throws -> String {
        let object = try JSONSerialization.jsonObject(with: Data(quoted), options: [.fragmentsAllowed])
        return object as? String ?? ""
    }
}
