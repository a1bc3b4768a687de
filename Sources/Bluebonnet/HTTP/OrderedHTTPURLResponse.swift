import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// An `HTTPURLResponse` that remembers its header fields in the order they arrived: FoundationNetworking keeps them
/// in a dictionary, and `HTTPURLResponse.headers` then reads them back in this order.
final class OrderedHTTPURLResponse: HTTPURLResponse, @unchecked Sendable {
    // Immutable after init, like the rest of the response.
    /// Each field as received, repeated fields apart.
    let orderedFields: [(name: String, value: String)]

    /// Makes the response; repeated fields are joined by commas in `allHeaderFields`, as FoundationNetworking does,
    /// under the first spelling of the name (`set-cookie` and `Set-Cookie` are one field).
    init(url: URL, statusCode: Int, httpVersion: String, orderedFields: [(name: String, value: String)]) {
        self.orderedFields = orderedFields
        // FoundationNetworking's initialiser is failable in signature only: it has no path that returns `nil`.
        super.init(
            url: url, statusCode: statusCode, httpVersion: httpVersion, headerFields: Self.joined(orderedFields))!
    }

    /// Up to how many fields `joined(_:)` finds a repeated name by comparing it with the fields before it.
    static let fieldsComparedPairwise = 32

    /// The fields as one dictionary: a repeated field's values joined by `", "` under the first spelling of its name.
    ///
    /// A head of a few dozen fields (every real one) is joined by comparing each name with those before it, ASCII
    /// case folded byte by byte: no string is lowercased or hashed twice, which was most of what building the response
    /// cost beside FoundationNetworking's own initialiser. A longer head, which only a hostile server sends, is
    /// joined through a dictionary of lowercased names, so that its cost stays linear.
    static func joined(_ orderedFields: [(name: String, value: String)]) -> [String: String] {
        var fields = [String: String](minimumCapacity: orderedFields.count)
        if orderedFields.count <= fieldsComparedPairwise {
            for index in orderedFields.indices {
                let (name, value) = orderedFields[index]
                if let first = orderedFields[..<index].first(where: { $0.name.equalsIgnoringCase(name) }) {
                    fields[first.name, default: ""] += ", " + value
                } else {
                    fields[name] = value
                }
            }
            return fields
        }
        var firstSpelling: [String: String] = [:]
        for (name, value) in orderedFields {
            let lowercased = name.lowercased()
            let key = firstSpelling[lowercased, default: name]
            firstSpelling[lowercased] = key
            fields[key] = fields[key].map { $0 + ", " + value } ?? value
        }
        return fields
    }

    required init?(coder: NSCoder) {
        orderedFields = []
        super.init(coder: coder)
    }

    /// Darwin's answer rather than FoundationNetworking's `"Unknown"` whenever no `Content-Disposition` names a file:
    /// the header's file name, else the URL's last path component (both made safe as a file name), else `"Unknown"`.
    override var suggestedFilename: String? {
        SuggestedFilename.name(for: self) ?? "Unknown"
    }
}

extension HTTPURLResponse: AlamofireExtended {}

extension AlamofireExtension where ExtendedType: HTTPURLResponse {
    /// Every header field as the server sent it, in order, a repeated field (`Set-Cookie`) once per line: what
    /// `allHeaderFields` and `headers` join by commas. For a response Bluebonnet did not receive, the fields of
    /// `allHeaderFields`.
    public var fields: [HTTPHeader] {
        if let ordered = type as? OrderedHTTPURLResponse, !ordered.orderedFields.isEmpty {
            return ordered.orderedFields.map { HTTPHeader(name: $0.name, value: $0.value) }
        }
        return type.headers.map { $0 }
    }
}
