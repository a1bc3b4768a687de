import Foundation

/// A node of the form being built: nothing yet, a string, an array or an ordered object.
final class FormNode {
    enum Value {
        case empty
        case string(String)
        case array([FormNode])
        case object([(key: String, node: FormNode)])
    }

    var value: Value = .empty
}

/// The `Encoder` that fills one `FormNode`.
struct FormValueEncoder: Encoder {
    let node: FormNode
    let options: URLEncodedFormEncoder
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    // Containers are paths, as in Alamofire: making one changes nothing; the node becomes an object when a key is
    // written through it, an array when an element is appended (a node of the other kind is replaced then).

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(FormKeyedContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        FormUnkeyedContainer(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        FormSingleValueContainer(encoder: self)
    }

    /// An encoder for a new child node at `key`.
    func child(_ node: FormNode, key: any CodingKey) -> FormValueEncoder {
        FormValueEncoder(node: node, options: options, codingPath: codingPath + [key])
    }

    /// Writes `value` into this node, applying the date, data and bool options before a type's own encoding.
    func box(_ value: any Encodable) throws {
        switch value {
        case let date as Date:
            switch options.dateEncoding {
            case .deferredToDate: try date.encode(to: self)
            case .secondsSince1970: node.value = .string("\(date.timeIntervalSince1970)")
            case .millisecondsSince1970: node.value = .string("\(date.timeIntervalSince1970 * 1000)")
            case .iso8601: node.value = .string(ISO8601DateFormatter().string(from: date))
            case let .formatted(formatter): node.value = .string(formatter.string(from: date))
            case let .custom(closure): node.value = .string(try closure(date))
            }
        case let data as Data:
            switch options.dataEncoding {
            case .deferredToData: try data.encode(to: self)
            case .base64: node.value = .string(data.base64EncodedString())
            case let .custom(closure): node.value = .string(try closure(data))
            }
        case let bool as Bool:
            node.value = .string(options.boolEncoding.encode(bool))
        case let decimal as Decimal:
            node.value = .string(decimal.description)
        default:
            try value.encode(to: self)
        }
    }
}

struct FormKeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let encoder: FormValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    /// The child at `key`, added if new.
    private func childNode(for key: Key) -> FormNode {
        childNode(named: encoder.options.keyEncoding.encode(key.stringValue))
    }

    private func childNode(named name: String) -> FormNode {
        var pairs: [(key: String, node: FormNode)] = []
        if case let .object(existing) = encoder.node.value { pairs = existing }
        if let existing = pairs.first(where: { $0.key == name }) { return existing.node }
        let node = FormNode()
        pairs.append((name, node))
        encoder.node.value = .object(pairs)
        return node
    }

    mutating func encodeNil(forKey key: Key) throws {
        guard let value = encoder.options.nilEncoding.encodeNil() else { return }
        childNode(for: key).value = .string(value)
    }

    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try encoder.child(childNode(for: key), key: key).box(value)
    }

    // Synthesized `Encodable` calls `encodeIfPresent` for optionals and skips `nil` by default; these send `nil`
    // through `nilEncoding` so `.dropValue` and `.null` apply to optional properties too.
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { try encodeOptional(value, key) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { try encodeOptional(value, key) }

    private mutating func encodeOptional<T: Encodable>(_ value: T?, _ key: Key) throws {
        if let value { try encode(value, forKey: key) } else { try encodeNil(forKey: key) }
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key)
        -> KeyedEncodingContainer<NestedKey>
    {
        encoder.child(childNode(for: key), key: key).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        encoder.child(childNode(for: key), key: key).unkeyedContainer()
    }

    /// An encoder for this container's own node, as Alamofire's is: a superclass's values sit beside the subclass's.
    mutating func superEncoder() -> any Encoder {
        encoder
    }

    mutating func superEncoder(forKey key: Key) -> any Encoder {
        encoder.child(childNode(for: key), key: key)
    }
}

struct FormUnkeyedContainer: UnkeyedEncodingContainer {
    let encoder: FormValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    var count: Int {
        guard case let .array(nodes) = encoder.node.value else { return 0 }
        return nodes.count
    }

    private func appendNode() -> (FormNode, FormIndexKey) {
        let node = FormNode()
        var nodes: [FormNode] = []
        if case let .array(existing) = encoder.node.value { nodes = existing }
        let key = FormIndexKey(intValue: nodes.count)
        nodes.append(node)
        encoder.node.value = .array(nodes)
        return (node, key)
    }

    mutating func encodeNil() throws {
        guard let value = encoder.options.nilEncoding.encodeNil() else { return }
        appendNode().0.value = .string(value)
    }

    mutating func encode<T: Encodable>(_ value: T) throws {
        let (node, key) = appendNode()
        try encoder.child(node, key: key).box(value)
    }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<
        NestedKey
    > {
        let (node, key) = appendNode()
        return encoder.child(node, key: key).container(keyedBy: keyType)
    }

    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        let (node, key) = appendNode()
        return encoder.child(node, key: key).unkeyedContainer()
    }

    /// An encoder for the array's own node, as Alamofire's is.
    mutating func superEncoder() -> any Encoder {
        encoder
    }
}

struct FormSingleValueContainer: SingleValueEncodingContainer {
    let encoder: FormValueEncoder
    var codingPath: [any CodingKey] { encoder.codingPath }

    mutating func encodeNil() throws {
        encoder.node.value = encoder.options.nilEncoding.encodeNil().map(FormNode.Value.string) ?? .empty
    }

    mutating func encode(_ value: Bool) throws {
        encoder.node.value = .string(encoder.options.boolEncoding.encode(value))
    }
    mutating func encode(_ value: String) throws { encoder.node.value = .string(value) }
    mutating func encode(_ value: Double) throws { encoder.node.value = .string("\(value)") }
    mutating func encode(_ value: Float) throws { encoder.node.value = .string("\(value)") }
    mutating func encode(_ value: Int) throws { encoder.node.value = .string("\(value)") }
    mutating func encode(_ value: Int8) throws { encoder.node.value = .string("\(value)") }
    mutating func encode(_ value: Int16) throws { encoder.node.value = .string("\(value)") }
    mutating func encode(_ value: Int32) throws { encoder.node.value = .string("\(value)") }
    mutating func encode(_ value: Int64) throws { encoder.node.value = .string("\(value)") }
    mutating func encode(_ value: UInt) throws { encoder.node.value = .string("\(value)") }
    mutating func encode(_ value: UInt8) throws { encoder.node.value = .string("\(value)") }
    mutating func encode(_ value: UInt16) throws { encoder.node.value = .string("\(value)") }
    mutating func encode(_ value: UInt32) throws { encoder.node.value = .string("\(value)") }
    mutating func encode(_ value: UInt64) throws { encoder.node.value = .string("\(value)") }

    mutating func encode<T: Encodable>(_ value: T) throws {
        try encoder.box(value)
    }
}

/// Coding keys for array positions and `super`.
struct FormIndexKey: CodingKey {
    let stringValue: String
    let intValue: Int?

    init(intValue: Int) {
        stringValue = "\(intValue)"
        self.intValue = intValue
    }

    init(stringValue: String) {
        self.stringValue = stringValue
        intValue = nil
    }
}

/// Writes a form tree as `key=value` pairs joined by `&`.
struct FormSerializer {
    let options: URLEncodedFormEncoder

    func serialize(_ pairs: [(key: String, node: FormNode)]) -> String {
        var segments = pairs.compactMap { serialize($0.node, forKey: $0.key) }
        if options.alphabetizeKeyValuePairs { segments.sort() }
        return segments.joined(separator: "&")
    }

    func serialize(_ node: FormNode, forKey key: String) -> String? {
        switch node.value {
        case .empty:
            return nil
        case let .string(string):
            return "\(escape(key))=\(escape(string))"
        case let .array(nodes):
            // Alphabetized by key, as Alamofire orders elements of different shapes (`a[][]` before `a[]=` before
            // `a[][x]`), but stably: elements under the same key keep their order, where sorting whole pairs (as
            // Alamofire does) would send `[9, 10]` as `a[]=10&a[]=9` and reorder the array the server rebuilds.
            var segments = nodes.enumerated().compactMap { index, child in
                serialize(child, forKey: options.arrayEncoding.encode(key, atIndex: index))
            }
            if options.alphabetizeKeyValuePairs {
                segments = segments.enumerated().sorted { first, second in
                    let (one, other) = (Self.sortKey(first.element), Self.sortKey(second.element))
                    return one == other ? first.offset < second.offset : one < other
                }.map(\.element)
            }
            return segments.isEmpty ? nil : segments.joined(separator: "&")
        case let .object(pairs):
            var segments = pairs.compactMap { subkey, child in
                serialize(child, forKey: key + options.keyPathEncoding.encodeKeyPath(subkey))
            }
            if options.alphabetizeKeyValuePairs { segments.sort() }
            return segments.isEmpty ? nil : segments.joined(separator: "&")
        }
    }

    /// What an element is ordered by: its first pair's key with the `=` after it, so that a key that continues
    /// (`a[][]`) sorts before the same key ending (`a[]=`), as whole pairs compare.
    private static func sortKey(_ segment: String) -> Substring {
        guard let equals = segment.firstIndex(of: "=") else { return segment[...] }
        return segment[...equals]
    }

    func escape(_ string: String) -> String {
        var allowed = options.allowedCharacters
        allowed.insert(charactersIn: " ")
        let escaped = string.addingPercentEncoding(withAllowedCharacters: allowed) ?? string
        return options.spaceEncoding.encode(escaped)
    }
}
