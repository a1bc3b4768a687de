/// Re-indents JSON text already known to be valid, keeping its key order, in the layout `JSONSerialization`'s
/// `.prettyPrinted` gives (two spaces, `" : "`), so `--unsorted` output reads like the sorted one.
enum JSONIndenter {
    static func indent(_ json: String) -> String {
        var output = ""
        output.reserveCapacity(json.utf8.count * 2)
        var depth = 0
        var inString = false
        var escaped = false
        var characters = Array(json)[...]
        func newline() { output += "\n" + String(repeating: "  ", count: depth) }
        while let character = characters.popFirst() {
            if inString {
                output.append(character)
                if escaped { escaped = false } else if character == "\\" { escaped = true } else if character == "\"" { inString = false }
                continue
            }
            switch character {
            case "\"":
                inString = true
                output.append(character)
            case "{", "[":
                output.append(character)
                // An empty container stays on one line.
                let rest = characters.drop { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "\t" }
                if let next = rest.first, next == "}" || next == "]" {
                    output.append(next)
                    characters = rest.dropFirst()
                } else {
                    depth += 1
                    newline()
                }
            case "}", "]":
                depth = max(0, depth - 1)
                newline()
                output.append(character)
            case ",":
                output.append(character)
                newline()
            case ":":
                output += " : "
            case " ", "\n", "\r", "\t":
                break
            default:
                output.append(character)
            }
        }
        return output
    }
}
