import Bluebonnet
import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Prints responses the way httpie does: status line, headers, then the body, pretty and coloured on a terminal.
public struct Output: Sendable {
    let colored: Bool
    /// Whether JSON bodies are reformatted (`--pretty=all|format`).
    let formats: Bool
    /// Whether standard output is a terminal: control characters are then shown escaped, and binary as a note.
    let toTerminal: Bool
    /// Whether a body is rendered as text rather than written byte for byte: on a terminal, or when `--pretty` asks
    /// for colours or formatting (whatever `NO_COLOR` then says about the colours themselves).
    let rendersBody: Bool
    /// Whether headers and JSON keys are sorted (httpie's `--sorted`, the default) or kept in the server's order.
    let sorts: Bool
    /// What `--format-options` changed of that: header order, JSON key order, JSON indentation, JSON formatting.
    var formatOptions = FormatOptions()
    /// The media type a body is rendered as, in place of the response's (`--response-mime`).
    var mimeType: String?
    /// The charset a body is decoded with, in place of the response's (`--response-charset`).
    var charset: String?
    /// The colours (`--style`).
    var style = ColorStyle.auto

    /// A printer for output that is or is not a terminal; colours unless `colored` is false (by default: on a
    /// terminal), and never with `NO_COLOR` in `environment`.
    public init(
        colored: Bool? = nil, formats: Bool = true, toTerminal: Bool, sorts: Bool = true, environment: [String: String]
    ) {
        self.sorts = sorts
        self.colored = (colored ?? toTerminal) && environment["NO_COLOR"] == nil
        self.formats = formats
        self.toTerminal = toTerminal
        rendersBody = toTerminal || (colored ?? false) || formats
    }

    /// The standard reason phrase of `status` (`Not Found`).
    static func statusPhrase(_ status: Int) -> String {
        let phrase = HTTPURLResponse.localizedString(forStatusCode: status)
        return phrase.lowercased() == "ok" ? "OK" : phrase.capitalized
    }

    /// `text` in the colour of the SGR `code` (`1;35`), when colouring.
    public func paint(_ text: String, _ code: String) -> String {
        colored ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    /// The status line, `HTTP/1.1 200 OK`, coloured by the status's class.
    public func statusLine(_ response: HTTPURLResponse, protocolName: String? = nil) -> String {
        // The standard phrase: NIO's parser keeps no reason phrase of the server's (`200 Everything Fine`).
        let reason = Self.statusPhrase(response.statusCode)
        let color =
            response.statusCode < 300 ? style.success : response.statusCode < 400 ? style.redirect : style.failure
        return paint(Self.httpVersion(protocolName), style.version) + " "
            + paint("\(response.statusCode) \(reason)", "1;\(color)")
    }

    /// `HTTP/1.1`, `HTTP/2`, ... from the protocol's ALPN name; `HTTP/1.1` when it is not known.
    static func httpVersion(_ protocolName: String?) -> String {
        switch protocolName?.lowercased() {
        case "h2": "HTTP/2"
        case let name? where name.hasPrefix("http/"): "HTTP/" + name.dropFirst(5)
        default: "HTTP/1.1"
        }
    }

    /// The header fields as received, a repeated one (`Set-Cookie`) once per line; sorted by name (stably) unless
    /// `--unsorted`.
    func headers(_ response: HTTPURLResponse) -> String {
        let fields = response.af.fields
        let ordered =
            (formatOptions.sortsHeaders ?? sorts)
            ? fields.enumerated().sorted { lhs, rhs in
                let order = lhs.element.name.lowercased().compare(rhs.element.name.lowercased())
                return order == .orderedSame ? lhs.offset < rhs.offset : order == .orderedAscending
            }.map(\.element) : fields
        return ordered.map { paint($0.name, style.headerName) + ": " + sanitized($0.value) }.joined(separator: "\n")
    }

    /// `text` with every control character but tab and newline shown as `\u{..}` on a terminal, so a server cannot
    /// retitle, recolour or rewrite it; unchanged when the output is not a terminal.
    func sanitized(_ text: String) -> String {
        guard toTerminal else { return text }
        var result = ""
        result.unicodeScalars.reserveCapacity(text.unicodeScalars.count)
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x09, 0x0A: result.unicodeScalars.append(scalar)
            case 0x00...0x1F, 0x7F...0x9F: result += "\\u{\(String(scalar.value, radix: 16))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// Writes the body: on a terminal, or with colours or formatting asked for, as text (pretty JSON, the
    /// response's charset, control characters shown escaped on a terminal, binary as a note there); otherwise byte
    /// for byte, so a file gets exactly what the server sent.
    func writeBody(_ data: Data?, response: HTTPURLResponse, to stream: ConsoleStream) throws {
        guard let data, !data.isEmpty else { return }
        guard rendersBody, toTerminal || !data.contains(0) else {
            try stream.write(data)
            return
        }
        let text = body(data, contentType: renderedContentType(response.value(forHTTPHeaderField: "Content-Type")))
        try stream.write(text, terminator: text.hasSuffix("\n") ? "" : "\n")
    }

    /// `contentType` with `mimeType` and `charset` put in place of its own, for rendering only.
    func renderedContentType(_ contentType: String?) -> String? {
        guard mimeType != nil || charset != nil else { return contentType }
        let fields = (contentType ?? "").split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        let type = mimeType ?? fields.first.flatMap { $0.isEmpty ? nil : $0 } ?? "application/octet-stream"
        var parameters = fields.dropFirst().filter { !$0.isEmpty }
        if let charset {
            parameters.removeAll { $0.lowercased().hasPrefix("charset=") }
            parameters.append("charset=\(charset)")
        }
        return ([type] + parameters).joined(separator: "; ")
    }

    /// The body as text for a terminal.
    public func body(_ data: Data?, contentType: String?) -> String {
        guard let data, !data.isEmpty else { return "" }
        // Text in the charset the response names (UTF-16 included), its control characters shown escaped.
        if let encoding = Self.encoding(ofContentType: contentType), encoding != .utf8,
            let text = String(data: data, encoding: encoding)
        {
            return sanitized(text)
        }
        // Otherwise a NUL is binary, whatever the type says.
        guard !data.contains(0) else { return binaryNote(data.count) }
        let looksLikeJSON =
            contentType?.lowercased().contains("json") == true || data.first == UInt8(ascii: "{")
            || data.first == UInt8(ascii: "[")
        // Validated, then laid out from the server's own text: a dictionary would drop repeated keys and
        // respell numbers (`1.0` as `1`), and unsorted it would lose the key order.
        if formats, formatOptions.formatsJSON ?? true, looksLikeJSON,
            JSONValidator.isValid(data),
            let text = String(data: data, encoding: .utf8)
        {
            return colorJSON(
                sanitized(
                    JSONIndenter.indent(
                        text, sortingKeys: formatOptions.sortsKeys ?? sorts, width: formatOptions.indent ?? 2)))
        }
        // `--pretty=colors`: coloured as the server laid it out.
        if colored, looksLikeJSON, JSONValidator.isValid(data), let text = String(data: data, encoding: .utf8) {
            return colorJSON(sanitized(text))
        }
        if formats, formatOptions.formatsXML ?? true, contentType?.lowercased().contains("xml") == true,
            let pretty = Self.prettyXML(data)
        {
            return sanitized(pretty)
        }
        if let text = String(data: data, encoding: .utf8) { return sanitized(text) }
        return binaryNote(data.count)
    }

    /// The largest XML body laid out; a larger one is shown as it came.
    static let maximumFormattedXML = 8 << 20

    /// `data` laid out as XML, or `nil` when it is not well-formed (or too large). External entities are never
    /// loaded; an XML declaration is kept only when the server sent one.
    static func prettyXML(_ data: Data) -> String? {
        guard data.count <= maximumFormattedXML else { return nil }
        // Checked by a strict parser first: libxml2's document parser repairs what is not well-formed, and a
        // repaired body is not what the server sent.
        let parser = XMLParser(data: data)
        parser.shouldResolveExternalEntities = false
        let balance = ElementBalance()
        parser.delegate = balance
        guard parser.parse(), parser.parserError == nil, balance.isWellFormed,
            let document = try? XMLDocument(data: data, options: [.nodeLoadExternalEntitiesNever])
        else { return nil }
        var text = document.xmlString(options: [.nodePrettyPrint])
        let declared = String(decoding: data.prefix(64), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines).hasPrefix("<?xml")
        if !declared, text.hasPrefix("<?xml"), let end = text.firstIndex(of: "\n") {
            text.removeSubrange(...end)
        }
        return text
    }

    private func binaryNote(_ count: Int) -> String {
        paint(
            "+-----------------------------------------+\n| NOTE: binary data not shown in terminal |\n| (\(count) bytes)"
                .padding(toLength: 86, withPad: " ", startingAt: 0) + "\n+-----------------------------------------+",
            "2")
    }

    /// The encoding a `Content-Type`'s `charset` names, for the charsets a terminal user meets.
    static func encoding(ofContentType contentType: String?) -> String.Encoding? {
        guard let contentType else { return nil }
        let charset = contentType.split(separator: ";").dropFirst().lazy
            .map { $0.trimmingCharacters(in: .whitespaces) }
            .first { $0.lowercased().hasPrefix("charset=") }?
            .dropFirst(8).trimmingCharacters(in: CharacterSet(charactersIn: "\"")).lowercased()
        switch charset {
        case "utf-8", "utf8": return .utf8
        case "iso-8859-1", "latin1", "iso8859-1", "l1": return .isoLatin1
        case "us-ascii", "ascii": return .ascii
        case "windows-1252", "cp1252": return .windowsCP1252
        case "utf-16": return .utf16
        case "utf-16le": return .utf16LittleEndian
        case "utf-16be": return .utf16BigEndian
        default: return nil
        }
    }

    /// Colours JSON text as it is, formatted or not, in the style's colours for keys, strings, numbers and `true`,
    /// `false` and `null` (`auto`: blue, yellow, cyan, magenta); punctuation and white space untouched. The text was validated as JSON first, so a string always ends.
    /// Works on the UTF-8 bytes, so a large body costs a copy of itself and its colour codes, nothing per character.
    func colorJSON(_ text: String) -> String {
        guard colored else { return text }
        let bytes = Array(text.utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count + bytes.count / 2)
        let quote = UInt8(ascii: "\""), backslash = UInt8(ascii: "\\")
        func append(_ range: Range<Int>, _ code: String) {
            output.append(contentsOf: [0x1B, UInt8(ascii: "[")])
            output.append(contentsOf: code.utf8)
            output.append(UInt8(ascii: "m"))
            output.append(contentsOf: bytes[range])
            output.append(contentsOf: [0x1B, UInt8(ascii: "["), UInt8(ascii: "0"), UInt8(ascii: "m")])
        }
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case quote:
                var end = index + 1
                while end < bytes.count, bytes[end] != quote { end += bytes[end] == backslash ? 2 : 1 }
                end = min(end + 1, bytes.count)
                var next = end
                while next < bytes.count, Self.isJSONSpace(bytes[next]) { next += 1 }
                append(index..<end, next < bytes.count && bytes[next] == UInt8(ascii: ":") ? style.key : style.string)
                index = end
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                var end = index + 1
                while end < bytes.count, Self.isNumberByte(bytes[end]) { end += 1 }
                append(index..<end, style.number)
                index = end
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                var end = index + 1
                while end < bytes.count, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(bytes[end]) { end += 1 }
                append(index..<end, style.literal)
                index = end
            default:
                output.append(byte)
                index += 1
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// JSON's white space.
    private static func isJSONSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// A byte a JSON number is made of after its first: digits, `.`, `e`, `E`, `+`, `-`.
    private static func isNumberByte(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || byte == 0x2E || byte == 0x65 || byte == 0x45 || byte == 0x2B || byte == 0x2D
    }
}

/// httpie's `--format-options`: `headers.sort`, `json.sort_keys`, `json.indent`, `json.format` and `xml.format`, comma-separated
/// `key:value` pairs; a later one wins. `nil` leaves the choice to `--sorted`/`--unsorted` and `--pretty`.
struct FormatOptions: Equatable {
    var sortsHeaders: Bool?
    var sortsKeys: Bool?
    var indent: Int?
    var formatsJSON: Bool?
    var formatsXML: Bool?

    struct Invalid: Error, CustomStringConvertible {
        let option: String
        var description: String {
            "--format-options: '\(option)' is not one of headers.sort:BOOL, json.sort_keys:BOOL, json.indent:N, "
                + "json.format:BOOL, xml.format:BOOL (XML is laid out with two spaces, not another indent)"
        }
    }

    init() {}

    init(_ specs: [String]) throws {
        for option in specs.flatMap({ $0.split(separator: ",") }) {
            let parts = option.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2 else { throw Invalid(option: String(option)) }
            let flag: Bool? =
                switch parts[1].lowercased() {
                case "true": true
                case "false": false
                default: nil
                }
            switch (parts[0], flag, Int(parts[1])) {
            case let ("headers.sort", value?, _): sortsHeaders = value
            case let ("json.sort_keys", value?, _): sortsKeys = value
            case let ("json.format", value?, _): formatsJSON = value
            case let ("xml.format", value?, _): formatsXML = value
            case let ("json.indent", _, width?) where (0...16).contains(width): indent = width
            default: throw Invalid(option: String(option))
            }
        }
    }
}

/// Whether every element a parse started also ended, and there was one root: FoundationXML's `XMLParser` on
/// Linux reports success for a document cut short (`<a>`), so the elements are counted.
private final class ElementBalance: NSObject, XMLParserDelegate {
    private var depth = 0
    private var roots = 0
    private var failed = false

    var isWellFormed: Bool { !failed && depth == 0 && roots == 1 }

    func parser(
        _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        if depth == 0 { roots += 1 }
        depth += 1
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        depth -= 1
        if depth < 0 { failed = true }
    }

    func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) {
        failed = true
    }
}
