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
        var fields: [String: String] = [:]
        var firstSpelling: [String: String] = [:]
        for (name, value) in orderedFields {
            let key = firstSpelling[name.lowercased(), default: name]
            firstSpelling[name.lowercased()] = key
            fields[key] = fields[key].map { $0 + ", " + value } ?? value
        }
        // FoundationNetworking's initialiser is failable in signature only: it has no path that returns `nil`.
        super.init(url: url, statusCode: statusCode, httpVersion: httpVersion, headerFields: fields)!
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
