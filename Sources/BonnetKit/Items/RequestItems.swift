import Bluebonnet
import Foundation

/// The httpie-style items after the URL: `Header:value`, `Header:` (remove it), `Header;` (send it empty),
/// `name=value`, `name=@file` (the file's text), `name:=json`, `name:=@file` (the file's JSON), `name==query` and
/// `name@file` (a multipart file part).
struct RequestItems {
    var headers = HTTPHeaders()
    /// Headers to leave out, even the session's defaults (`Header:` with nothing after the colon).
    var removedHeaders: [String] = []
    /// Query parameters in order, repeated names kept.
    var query: [(String, String)] = []
    var fields: [(String, any Sendable)] = []
    /// Files to send as multipart parts: (field name, path).
    var files: [(String, String)] = []
    /// httpie's `@file`: a file that is the whole request body.
    var bodyFile: String?

    enum ParseError: Error, CustomStringConvertible {
        case unrecognized(String)
        case invalidJSON(String)
        case unreadableFile(item: String, path: String)
        case notText(item: String, path: String)
        case twoBodyFiles(String)

        var description: String {
            switch self {
            case let .unrecognized(item):
                return "'\(item)' is not an item: use Header:value, name=value, name:=json, name==value or name@file"
            case let .invalidJSON(item):
                return "'\(item)': the value after := is not JSON"
            case let .unreadableFile(item, path):
                return "'\(item)': cannot read \(path)"
            case let .notText(item, path):
                return "'\(item)': \(path) is not UTF-8 text; send a file as a part with name@file"
            case let .twoBodyFiles(item):
                return "'\(item)': the body is already a file; give one @file"
            }
        }
    }

    /// Reads `items`, the files they name (`name=@file`, `name:=@file`) relative to `console`'s folder.
    init(_ items: [String], in console: Console) throws {
        for item in items {
            // `@file`: the file is the body (an item with no name before its `@`).
            if item.hasPrefix("@"), item.count > 1 {
                guard bodyFile == nil else { throw ParseError.twoBodyFiles(item) }
                bodyFile = String(item.dropFirst())
                continue
            }
            // `Header;` is httpie's way to send a header with an empty value.
            if item.hasSuffix(";"), Self.split(item) == nil, item.count > 1 {
                addHeader(String(item.dropLast()), "")
                continue
            }
            // The earliest separator wins, and at one position the longer one (":=" before ":", "==" before "=").
            guard let (name, separator, value) = Self.split(item) else { throw ParseError.unrecognized(item) }
            switch separator {
            case "==" where value.hasPrefix("@"):
                // httpie's `name==@file`: the file's text, its final newlines dropped.
                query.append((name, try Self.text(ofFile: String(value.dropFirst()), item: item, in: console)))
            case "==":
                query.append((name, value))
            case ":=":
                let text =
                    value.hasPrefix("@")
                    ? try Self.contents(of: console.file(String(value.dropFirst())), item: item) : Data(value.utf8)
                // Sent as typed: its members' order, repeated keys and numbers' spelling (`1.0`, `-0.0`, `1e400`) are
                // the user's, which parsing and writing again would change.
                guard JSONValidator.isValid(text) else { throw ParseError.invalidJSON(item) }
                fields.append((name, RawJSON(text)))
            case "=" where value.hasPrefix("@"):
                let path = String(value.dropFirst())
                let bytes = try Self.contents(of: console.file(path), item: item)
                guard let text = String(data: bytes, encoding: .utf8) else {
                    throw ParseError.notText(item: item, path: path)
                }
                fields.append((name, text))
            case ":" where value.hasPrefix("@"):
                // httpie's `Header:@file`: the header's value is the file's text, its final newlines dropped.
                addHeader(name, try Self.text(ofFile: String(value.dropFirst()), item: item, in: console))
            case "=":
                fields.append((name, value))
            case "@":
                files.append((name, value))
            default:
                if value.isEmpty { removedHeaders.append(name) } else { addHeader(name, value) }
            }
        }
    }

    /// Adds a header; a repeated one is sent with every value, in order, as one field (RFC 9110 §5.3: the same
    /// meaning as separate lines), `Cookie`'s joined by `; `.
    private mutating func addHeader(_ name: String, _ value: String) {
        guard let existing = headers.value(for: name) else { return headers.add(name: name, value: value) }
        let separator = name.caseInsensitiveCompare("Cookie") == .orderedSame ? "; " : ", "
        headers.update(
            name: name, value: existing.isEmpty ? value : value.isEmpty ? existing : existing + separator + value)
    }

    /// The query string of `query`, order kept, each name and value escaped as httpie (Python's `urlencode`) does.
    var encodedQuery: String {
        query.map { "\(Self.formEscaped($0.0))=\(Self.formEscaped($0.1))" }.joined(separator: "&")
    }

    /// `text` escaped for a query or a URL-encoded form as httpie escapes it (Python's `quote_plus`): its UTF-8
    /// bytes, letters, digits and `_.-~` as they are, a space as `+`, every other byte as `%XX`.
    static func formEscaped(_ text: String) -> String {
        var escaped = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "-"),
                UInt8(ascii: "~"):
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " "):
                escaped += "+"
            default:
                escaped += String(format: "%%%02X", byte)
            }
        }
        return escaped
    }

    /// A file's UTF-8 text without its final newlines, for `name==@file` and `Header:@file`.
    private static func text(ofFile path: String, item: String, in console: Console) throws -> String {
        let bytes = try contents(of: console.file(path), item: item)
        guard var text = String(data: bytes, encoding: .utf8) else { throw ParseError.notText(item: item, path: path) }
        while text.hasSuffix("\n") { text.removeLast() }
        return text
    }

    private static func contents(of file: URL, item: String) throws -> Data {
        guard let data = try? Data(contentsOf: file) else {
            throw ParseError.unreadableFile(item: item, path: file.path)
        }
        return data
    }

    /// A field's value as text (a form field's): a string as it is, a JSON value (`name:=json`) as its JSON text, a
    /// JSON string without its quotes.
    static func text(of value: any Sendable) -> String {
        guard let json = value as? RawJSON else { return "\(value)" }
        return json.parsed as? String ?? String(decoding: json.text, as: UTF8.self)
    }

    static func split(_ item: String) -> (String, String, String)? {
        // The earliest separator not escaped with a backslash (httpie's `key\=with\=equals=value`), and at one
        // position the longer one.
        let characters = Array(item)
        let separators: [[Character]] = [[":", "="], ["=", "="], [":"], ["="], ["@"]]
        var index = 0
        while index < characters.count {
            if characters[index] == "\\", index + 1 < characters.count {
                index += 2
                continue
            }
            if let separator = separators.first(where: { Array(characters[index...].prefix($0.count)) == $0 }) {
                // As in httpie, a field or a query parameter may have an empty name (`=v` is the field ""), but a
                // header or a file part may not.
                guard index > 0 || separator != [":"] && separator != ["@"] else { return nil }
                let name = unescaped(String(characters[..<index]))
                let value = unescaped(String(characters[(index + separator.count)...]))
                return (name, String(separator), value)
            }
            index += 1
        }
        return nil
    }

    /// `text` with the backslash taken off an escaped separator (`\=`, `\:`, `\@`, `\;`, `\\`); other backslashes
    /// (a nested JSON path's `\[`) stay for the later parse.
    static func unescaped(_ text: String) -> String {
        guard text.contains("\\") else { return text }
        var result = ""
        var escaping = false
        for character in text {
            if escaping {
                if !"=:@;\\".contains(character) { result.append("\\") }
                result.append(character)
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                result.append(character)
            }
        }
        if escaping { result.append("\\") }
        return result
    }
}

/// A `name:=json` value: its text as typed (white space around it trimmed), sent as it is, and the value parsed,
/// for an item whose path goes into it (`a:={"b":1} a[c]=2`) and for a form field's text; `nil` when Foundation
/// cannot hold it (`1e400`).
struct RawJSON: @unchecked Sendable {
    // @unchecked: the parsed value is made of Foundation's immutable containers, built once and only read.
    let text: Data
    let parsed: Any?

    init(_ text: Data) {
        let isSpace: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }
        let start = text.firstIndex { !isSpace($0) } ?? text.endIndex
        let end = text.lastIndex { !isSpace($0) }.map { $0 + 1 } ?? start
        self.text = Data(text[start..<max(start, end)])
        parsed = try? JSONSerialization.jsonObject(with: self.text, options: [.fragmentsAllowed])
    }
}
