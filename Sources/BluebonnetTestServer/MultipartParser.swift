import Foundation

/// Splits a `multipart/form-data` body into its parts, enough for httpbin's `form` and `files`.
enum MultipartParser {
    struct Part {
        var name: String
        var fileName: String?
        var contentType: String?
        var body: Data
    }

    static func boundary(from contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "boundary" else {
                continue
            }
            return pair[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        return nil
    }

    static func parse(_ body: Data, boundary: String) -> [Part] {
        let delimiter = Data("--\(boundary)".utf8)
        var parts: [Part] = []
        var searchStart = body.startIndex
        guard var current = body.range(of: delimiter, in: searchStart..<body.endIndex) else { return [] }
        while true {
            searchStart = current.upperBound
            // "--" right after a delimiter closes the body.
            if body[searchStart...].starts(with: Data("--".utf8)) { break }
            guard let next = body.range(of: delimiter, in: searchStart..<body.endIndex) else { break }
            var section = body[searchStart..<next.lowerBound]
            if section.starts(with: Data("\r\n".utf8)) { section = section.dropFirst(2) }
            if section.suffix(2) == Data("\r\n".utf8) { section = section.dropLast(2) }
            if let part = parsePart(Data(section)) { parts.append(part) }
            current = next
        }
        return parts
    }

    private static func parsePart(_ section: Data) -> Part? {
        guard let split = section.range(of: Data("\r\n\r\n".utf8)) else { return nil }
        let headerText = String(decoding: section[section.startIndex..<split.lowerBound], as: UTF8.self)
        var part = Part(name: "", fileName: nil, contentType: nil, body: Data(section[split.upperBound...]))
        for line in headerText.components(separatedBy: "\r\n") {
            let pieces = line.split(separator: ":", maxSplits: 1)
            guard pieces.count == 2 else { continue }
            let name = pieces[0].trimmingCharacters(in: .whitespaces).lowercased()
            let value = pieces[1].trimmingCharacters(in: .whitespaces)
            if name == "content-type" { part.contentType = value }
            if name == "content-disposition" {
                part.name = parameter("name", in: value) ?? ""
                part.fileName = parameter("filename", in: value)
            }
        }
        return part
    }

    private static func parameter(_ name: String, in value: String) -> String? {
        for piece in value.split(separator: ";").dropFirst() {
            let pair = piece.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == name else { continue }
            var raw = pair[1].trimmingCharacters(in: .whitespaces)
            if raw.hasPrefix("\""), raw.hasSuffix("\""), raw.count >= 2 { raw = String(raw.dropFirst().dropLast()) }
            return raw.replacingOccurrences(of: "\\\"", with: "\"")
        }
        return nil
    }
}
