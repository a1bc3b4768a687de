import Bluebonnet
import Foundation

/// The httpie-style items after the URL: `Header:value`, `name=value`, `name:=json`, `name==query`, `name@file`.
struct RequestItems {
    var headers = HTTPHeaders()
    var query: [(String, String)] = []
    var fields: [(String, any Sendable)] = []
    /// Files to send as multipart parts: (field name, path).
    var files: [(String, String)] = []

    enum ParseError: Error, CustomStringConvertible {
        case unrecognized(String)
        case invalidJSON(String)

        var description: String {
            switch self {
            case let .unrecognized(item): return "'\(item)' is not an item: use Header:value, name=value, name:=json, name==value or name@file"
            case let .invalidJSON(item): return "'\(item)': the value after := is not JSON"
            }
        }
    }

    init(_ items: [String]) throws {
        for item in items {
            // The earliest separator wins, and at one position the longer one (":=" before ":", "==" before "=").
            guard let (name, separator, value) = Self.split(item) else { throw ParseError.unrecognized(item) }
            switch separator {
            case "==": query.append((name, value))
            case ":=":
                guard let json = try? JSONSerialization.jsonObject(with: Data(value.utf8), options: [.fragmentsAllowed]) else {
                    throw ParseError.invalidJSON(item)
                }
                fields.append((name, SendableJSON(json)))
            case "=": fields.append((name, value))
            case "@": files.append((name, value))
            default: headers.add(name: name, value: value)
            }
        }
    }

    static func split(_ item: String) -> (String, String, String)? {
        let separators = [":=", "==", ":", "=", "@"]
        var best: (String.Index, String)?
        for separator in separators {
            guard let range = item.range(of: separator) else { continue }
            if best == nil || range.lowerBound < best!.0 || (range.lowerBound == best!.0 && separator.count > best!.1.count) {
                best = (range.lowerBound, separator)
            }
        }
        guard let (index, separator) = best, index > item.startIndex else { return nil }
        let name = String(item[..<index])
        let value = String(item[item.index(index, offsetBy: separator.count)...])
        return (name, separator, value)
    }
}

/// A parsed JSON value handed to `JSONSerialization` again; it is never mutated.
struct SendableJSON: @unchecked Sendable {
    // @unchecked: a JSON value made of Foundation's immutable containers, built once and only read.
    let value: Any
    init(_ value: Any) { self.value = value }
}
