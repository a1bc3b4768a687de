import Foundation

/// httpie's nested JSON items: a field name is a path of keys in brackets, so `user[name]=Ann`,
/// `user[tags][]=a` (append) and `points[2]:=5` (an index, padded with nulls) build nested objects and arrays, and
/// a name starting with `[` builds a top-level array. `\[` and `\]` are literal brackets.
enum NestedJSON {
    enum PathError: LocalizedError, CustomStringConvertible {
        case malformed(String)
        case conflict(String)
        case negativeIndex(String)

        var description: String {
            switch self {
            case let .malformed(name): "'\(name)': brackets do not close, or a path part is empty"
            case let .negativeIndex(name): "'\(name)': an index counts from 0; negative indexes are not supported"
            case let .conflict(name): "'\(name)': the path runs into a value of another kind set by an earlier item"
            }
        }

        var errorDescription: String? { description }
    }

    /// One step of a path.
    enum Step: Equatable {
        case key(String)
        case index(Int)
        case append
    }

    /// The steps of `name`: `a[b][]` is `.key("a"), .key("b"), .append`.
    static func steps(of name: String) throws -> [Step] {
        // `=v`: the empty key, as httpie takes it.
        if name.isEmpty { return [.key("")] }
        var steps: [Step] = []
        var current = ""
        var inBrackets = false
        var escaped = false
        var sawAny = false
        for character in name {
            if escaped {
                // Only a bracket is escaped here: any other backslash is part of the key, as httpie keeps it
                // (`a\b=1` is the key `a\b`, `c\d=2` the key `c\d`).
                if character != "[" && character != "]" { current.append("\\") }
                current.append(character)
                escaped = false
                continue
            }
            switch character {
            case "\\":
                escaped = true
            case "[" where !inBrackets:
                if !current.isEmpty || steps.isEmpty && sawAny { steps.append(.key(current)) }
                current = ""
                inBrackets = true
            case "]" where inBrackets:
                if current.isEmpty {
                    steps.append(.append)
                } else if let index = Int(current), index >= 0, current.allSatisfy(\.isASCII) {
                    steps.append(.index(index))
                } else if current.hasPrefix("-"), current.count > 1, current.dropFirst().allSatisfy(\.isASCII),
                    current.dropFirst().allSatisfy(\.isNumber)
                {
                    // httpie refuses `a[-1]` rather than take it as a key.
                    throw PathError.negativeIndex(name)
                } else {
                    steps.append(.key(current))
                }
                current = ""
                inBrackets = false
            default:
                // Text after a closing bracket, or a bracket inside brackets, is not httpie's syntax.
                guard inBrackets || steps.isEmpty else { throw PathError.malformed(name) }
                current.append(character)
            }
            sawAny = true
        }
        // A backslash at the end escapes nothing: it is part of the key.
        if escaped { current.append("\\") }
        guard !inBrackets else { throw PathError.malformed(name) }
        if !current.isEmpty { steps.append(.key(current)) }
        guard !steps.isEmpty else { throw PathError.malformed(name) }
        return steps
    }

    /// The body built from `fields` in order.
    static func build(_ fields: [(String, Any)]) throws -> Any {
        var root: Any?
        for (name, value) in fields {
            root = try insert(value, at: steps(of: name)[...], into: root, name: name)
        }
        return root ?? OrderedObject()
    }

    /// A JSON object whose members keep the order the items named them in, as httpie sends them; a member named again
    /// keeps its place.
    struct OrderedObject {
        private(set) var members: [(key: String, value: Any)] = []

        subscript(key: String) -> Any? {
            get { members.first { $0.key == key }?.value }
            set {
                let index = members.firstIndex { $0.key == key }
                switch (index, newValue) {
                case let (index?, value?): members[index].value = value
                case let (index?, nil): members.remove(at: index)
                case let (nil, value?): members.append((key, value))
                case (nil, nil): break
                }
            }
        }

        /// An object parsed from a `:=` item, its members sorted: the parser kept no order.
        init(_ dictionary: [String: Any] = [:]) {
            members = dictionary.sorted { $0.key < $1.key }.map { (key: $0.key, value: $0.value) }
        }
    }

    /// The body's bytes: compact JSON, members in order; the values of `:=` items as typed.
    static func data(_ value: Any) throws -> Data {
        var output = Data()
        try write(value, into: &output)
        return output
    }

    private static func write(_ value: Any, into output: inout Data) throws {
        switch value {
        case let object as OrderedObject:
            output.append(UInt8(ascii: "{"))
            for (index, member) in object.members.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                output.append(
                    try JSONSerialization.data(
                        withJSONObject: member.key, options: [.fragmentsAllowed, .withoutEscapingSlashes]))
                output.append(UInt8(ascii: ":"))
                try write(member.value, into: &output)
            }
            output.append(UInt8(ascii: "}"))
        case let raw as RawJSON:
            output.append(raw.text)
        case let array as [Any]:
            output.append(UInt8(ascii: "["))
            for (index, item) in array.enumerated() {
                if index > 0 { output.append(UInt8(ascii: ",")) }
                try write(item, into: &output)
            }
            output.append(UInt8(ascii: "]"))
        default:
            output.append(
                try JSONSerialization.data(
                    withJSONObject: value, options: [.fragmentsAllowed, .sortedKeys, .withoutEscapingSlashes]))
        }
    }

    private static func insert(_ value: Any, at steps: ArraySlice<Step>, into container: Any?, name: String) throws
        -> Any
    {
        guard let step = steps.first else { return value }
        let rest = steps.dropFirst()
        // A path into a `:=` value goes into the value parsed (its text can no longer be sent as typed).
        let container = (container as? RawJSON).map { $0.parsed } ?? container
        switch step {
        case let .key(key):
            let existing: OrderedObject? =
                switch container {
                case nil: OrderedObject()
                case let object as OrderedObject: object
                case let dictionary as [String: Any]: OrderedObject(dictionary)
                default: nil
                }
            guard var object = existing else { throw PathError.conflict(name) }
            object[key] = try insert(value, at: rest, into: object[key], name: name)
            return object
        case .append:
            guard var array = container.map({ $0 as? [Any] }) ?? [] else { throw PathError.conflict(name) }
            array.append(try insert(value, at: rest, into: nil, name: name))
            return array
        case let .index(index):
            guard var array = container.map({ $0 as? [Any] }) ?? [] else { throw PathError.conflict(name) }
            // A hostile or mistyped index must not allocate gigabytes of nulls.
            guard index < 10_000 else { throw PathError.malformed(name) }
            while array.count <= index { array.append(NSNull()) }
            let existing: Any? = array[index] is NSNull ? nil : array[index]
            array[index] = try insert(value, at: rest, into: existing, name: name)
            return array
        }
    }
}
