import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An order-preserving, case-insensitive collection of HTTP headers.
public struct HTTPHeaders: Sendable {
    private var headers: [HTTPHeader] = []

    /// Creates an empty instance.
    public init() {}

    /// Creates an instance from an array of `HTTPHeader`s. Duplicate case-insensitive names are collapsed into the
    /// last name and value encountered.
    ///
    /// - Parameter headers: The headers, in order.
    public init(_ headers: [HTTPHeader]) {
        headers.forEach { update($0) }
    }

    /// Creates an instance from a `[String: String]`. Duplicate case-insensitive names are collapsed into the last
    /// name and value encountered.
    ///
    /// - Parameter dictionary: The names and values.
    public init(_ dictionary: [String: String]) {
        dictionary.forEach { update(HTTPHeader(name: $0.key, value: $0.value)) }
    }

    /// Case-insensitively updates or appends an `HTTPHeader` into the instance using the provided `name` and `value`.
    ///
    /// - Parameters:
    ///   - name: The `HTTPHeader` name.
    ///   - value: The `HTTPHeader` value.
    public mutating func add(name: String, value: String) {
        update(HTTPHeader(name: name, value: value))
    }

    /// Case-insensitively updates or appends the provided `HTTPHeader` into the instance.
    ///
    /// - Parameter header: The `HTTPHeader` to update or append.
    public mutating func add(_ header: HTTPHeader) {
        update(header)
    }

    /// Case-insensitively updates or appends an `HTTPHeader` into the instance using the provided `name` and `value`.
    ///
    /// - Parameters:
    ///   - name: The `HTTPHeader` name.
    ///   - value: The `HTTPHeader` value.
    public mutating func update(name: String, value: String) {
        update(HTTPHeader(name: name, value: value))
    }

    /// Case-insensitively updates or appends the provided `HTTPHeader` into the instance.
    ///
    /// - Parameter header: The `HTTPHeader` to update or append.
    public mutating func update(_ header: HTTPHeader) {
        guard let index = headers.index(of: header.name) else {
            headers.append(header)
            return
        }
        headers.replaceSubrange(index...index, with: [header])
    }

    /// Case-insensitively removes an `HTTPHeader`, if it exists, from the instance.
    ///
    /// - Parameter name: The name of the `HTTPHeader` to remove.
    public mutating func remove(name: String) {
        guard let index = headers.index(of: name) else { return }
        headers.remove(at: index)
    }

    /// Sorts the current instance by header name, case insensitively.
    public mutating func sort() {
        headers.sort { $0.name.lowercased() < $1.name.lowercased() }
    }

    /// Returns an instance sorted by header name.
    ///
    /// - Returns: A copy of the current instance sorted by name.
    public func sorted() -> HTTPHeaders {
        var headers = self
        headers.sort()
        return headers
    }

    /// Case-insensitively find a header's value by name.
    ///
    /// - Parameter name: The name of the header to search for, case-insensitively.
    /// - Returns: The value of header, if it exists.
    public func value(for name: String) -> String? {
        guard let index = headers.index(of: name) else { return nil }
        return headers[index].value
    }

    /// Case-insensitively access the header with the given name.
    ///
    /// - Parameter name: The name of the header.
    public subscript(_ name: String) -> String? {
        get { value(for: name) }
        set {
            if let value = newValue {
                update(name: name, value: value)
            } else {
                remove(name: name)
            }
        }
    }

    /// The dictionary representation of all headers. Names that differ only by case would collide, which the
    /// case-insensitive storage already prevents.
    public var dictionary: [String: String] {
        let namesAndValues = headers.map { ($0.name, $0.value) }
        return Dictionary(namesAndValues, uniquingKeysWith: { _, last in last })
    }
}

extension HTTPHeaders: ExpressibleByDictionaryLiteral {
    /// Creates headers from a literal such as `["Accept": "application/json"]`.
    ///
    /// - Parameter elements: The names and values, in order.
    public init(dictionaryLiteral elements: (String, String)...) {
        elements.forEach { update(name: $0.0, value: $0.1) }
    }
}

extension HTTPHeaders: ExpressibleByArrayLiteral {
    /// Creates headers from a literal such as `[.accept("application/json")]`.
    ///
    /// - Parameter elements: The headers, in order.
    public init(arrayLiteral elements: HTTPHeader...) {
        self.init(elements)
    }
}

extension HTTPHeaders: Sequence {
    /// Iterates the headers in order.
    public func makeIterator() -> IndexingIterator<[HTTPHeader]> {
        headers.makeIterator()
    }
}

extension HTTPHeaders: Collection {
    /// The first index.
    public var startIndex: Int { headers.startIndex }
    /// One past the last index.
    public var endIndex: Int { headers.endIndex }

    /// The header at `position`.
    ///
    /// - Parameter position: An index below `endIndex`.
    public subscript(position: Int) -> HTTPHeader {
        headers[position]
    }

    /// The index after `i`.
    ///
    /// - Parameter i: A valid index.
    public func index(after i: Int) -> Int {
        headers.index(after: i)
    }
}

extension HTTPHeaders: Equatable {
    /// Equal when both hold the same headers in the same order, names compared case-insensitively.
    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        guard lhs.headers.count == rhs.headers.count else { return false }
        return zip(lhs.headers, rhs.headers).allSatisfy {
            $0.name.equalsIgnoringCase($1.name) && $0.value == $1.value
        }
    }
}

extension HTTPHeaders: Hashable {
    /// Hashes names case-insensitively, matching `==`.
    public func hash(into hasher: inout Hasher) {
        for header in headers {
            hasher.combine(header.name.lowercased())
            hasher.combine(header.value)
        }
    }
}

extension HTTPHeaders: CustomStringConvertible {
    /// One `Name: Value` line per header.
    public var description: String {
        headers.map(\.description).joined(separator: "\n")
    }
}

extension Array where Element == HTTPHeader {
    /// Case-insensitively finds the index of an `HTTPHeader` with the provided name, if it exists.
    func index(of name: String) -> Int? {
        firstIndex { $0.name.equalsIgnoringCase(name) }
    }
}

// MARK: - Foundation bridges

extension URLRequest {
    /// Returns `allHTTPHeaderFields` as `HTTPHeaders`.
    public var headers: HTTPHeaders {
        get { allHTTPHeaderFields.map(HTTPHeaders.init) ?? HTTPHeaders() }
        set { allHTTPHeaderFields = newValue.dictionary }
    }
}

extension HTTPURLResponse {
    /// Returns `allHeaderFields` as `HTTPHeaders`: in the order the fields arrived for a response Bluebonnet
    /// received (a repeated field once, its values joined by commas, where it first appeared).
    public var headers: HTTPHeaders {
        guard let ordered = self as? OrderedHTTPURLResponse, !ordered.orderedFields.isEmpty else {
            return (allHeaderFields as? [String: String]).map(HTTPHeaders.init) ?? HTTPHeaders()
        }
        var headers = HTTPHeaders()
        for (name, value) in ordered.orderedFields {
            if let existing = headers.value(for: name) {
                headers.update(name: name, value: existing + ", " + value)
            } else {
                headers.add(name: name, value: value)
            }
        }
        return headers
    }
}

extension URLSessionConfiguration {
    /// Returns `httpAdditionalHeaders` as `HTTPHeaders`.
    public var headers: HTTPHeaders {
        get { (httpAdditionalHeaders as? [String: String]).map(HTTPHeaders.init) ?? HTTPHeaders() }
        set { httpAdditionalHeaders = newValue.dictionary }
    }
}
