import Bluebonnet
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Prints responses the way httpie does: status line, headers, then the body, pretty and coloured on a terminal.
struct Output {
    let colored: Bool

    init(colored: Bool? = nil) {
        self.colored = colored ?? (isatty(STDOUT_FILENO) != 0 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil)
    }

    func paint(_ text: String, _ code: String) -> String {
        colored ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    func statusLine(_ response: HTTPURLResponse) -> String {
        let phrase = HTTPURLResponse.localizedString(forStatusCode: response.statusCode)
        let reason = phrase.lowercased() == "ok" ? "OK" : phrase.capitalized
        let color = response.statusCode < 300 ? "32" : response.statusCode < 400 ? "33" : "31"
        return paint("HTTP/1.1", "34") + " " + paint("\(response.statusCode) \(reason)", "1;\(color)")
    }

    func headers(_ response: HTTPURLResponse) -> String {
        response.headers.sorted().map { paint($0.name, "36") + ": " + $0.value }.joined(separator: "\n")
    }

    func body(_ data: Data?, contentType: String?) -> String {
        guard let data, !data.isEmpty else { return "" }
        if contentType?.lowercased().contains("json") == true || data.first == UInt8(ascii: "{") || data.first == UInt8(ascii: "[") {
            if let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]),
               let pretty = try? JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes]) {
                return colorJSON(String(decoding: pretty, as: UTF8.self))
            }
        }
        if let text = String(data: data, encoding: .utf8) { return text }
        return paint("+-----------------------------------------+\n| NOTE: binary data not shown in terminal |\n| (\(data.count) bytes)".padding(toLength: 86, withPad: " ", startingAt: 0) + "\n+-----------------------------------------+", "2")
    }

    /// Colours JSON keys and string values line by line; the text is the serializer's own pretty output.
    func colorJSON(_ text: String) -> String {
        guard colored else { return text }
        return text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            guard let colon = line.range(of: "\" : ") else { return String(line) }
            let key = line[..<colon.lowerBound] + "\""
            let rest = line[colon.upperBound...]
            let value = rest.hasPrefix("\"") ? paint(String(rest), "33") : String(rest)
            return paint(String(key), "34") + " : " + value
        }.joined(separator: "\n")
    }
}
