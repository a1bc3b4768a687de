import Foundation

/// One `Set-Cookie` header field, parsed by RFC 6265 §5.2 (with RFC 6265bis's `SameSite`): what the server asked
/// for, before the jar decides whether and how to store it.
struct SetCookie: Equatable, Sendable {
    /// The largest name and value together, in bytes, that is kept (RFC 6265bis, and every browser): past it a
    /// server is only filling memory.
    static let maximumNameAndValueLength = 4096
    /// The largest attribute value read, in bytes.
    static let maximumAttributeValueLength = 1024

    var name: String
    var value: String
    /// `Expires`, when it parsed.
    var expires: Date?
    /// `Max-Age` in seconds, when it parsed; it prevails over `Expires`.
    var maxAge: Int64?
    /// `Domain` without its leading dot, lower-cased; `nil` when absent or empty.
    var domain: String?
    /// `Path`, when it starts with `/`.
    var path: String?
    var secure = false
    var httpOnly = false
    var sameSite: CookieSameSitePolicy?

    /// Parses one header field's value.
    ///
    /// - Parameter field: The value of a `Set-Cookie` field.
    /// - Returns: The cookie, or `nil` when §5.2 says to ignore the field: no `=` in the first pair, an empty name,
    ///   a control character, or a name and value past `maximumNameAndValueLength`.
    init?(_ field: String) {
        var parts = field.split(separator: ";", omittingEmptySubsequences: false)[...]
        guard let pair = parts.popFirst(), let equals = pair.firstIndex(of: "=") else { return nil }
        let name = pair[..<equals].trimmingWhitespace()
        let value = pair[pair.index(after: equals)...].trimmingWhitespace()
        guard !name.isEmpty, name.utf8.count + value.utf8.count <= Self.maximumNameAndValueLength,
            !Self.hasControlCharacter(name), !Self.hasControlCharacter(value)
        else { return nil }
        self.name = String(name)
        self.value = String(value)
        for attribute in parts {
            let (attributeName, attributeValue): (Substring, Substring)
            if let equals = attribute.firstIndex(of: "=") {
                attributeName = attribute[..<equals].trimmingWhitespace()
                attributeValue = attribute[attribute.index(after: equals)...].trimmingWhitespace()
            } else {
                attributeName = attribute.trimmingWhitespace()
                attributeValue = ""
            }
            guard attributeValue.utf8.count <= Self.maximumAttributeValueLength else { continue }
            apply(attributeName.lowercased(), attributeValue)
        }
    }

    /// Applies one attribute; an unknown one, or one whose value does not parse, is ignored, as §5.2 says.
    private mutating func apply(_ name: String, _ value: Substring) {
        switch name {
        case "expires":
            if let date = HTTPDate.parse(value) { expires = date }
        case "max-age":
            // `-`? then digits only; anything else leaves the attribute out.
            let digits = value.hasPrefix("-") ? value.dropFirst() : value
            guard !digits.isEmpty, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return }
            // A value too long for 64 bits is still a number of seconds: far in the future, or far in the past.
            let magnitude = Int64(digits) ?? Int64.max
            maxAge = value.hasPrefix("-") ? -magnitude : magnitude
        case "domain":
            var domain = value
            if domain.hasPrefix(".") { domain = domain.dropFirst() }
            // §5.2.3 leaves an empty `Domain` undefined and advises ignoring it, so an earlier one stands.
            guard !domain.isEmpty else { return }
            self.domain = domain.lowercased()
        case "path":
            path = value.hasPrefix("/") ? String(value) : nil
        case "secure":
            secure = true
        case "httponly":
            httpOnly = true
        case "samesite":
            switch value.lowercased() {
            case "strict": sameSite = .strict
            case "lax": sameSite = .lax
            case "none": sameSite = CookieSameSitePolicy.none
            default: sameSite = nil
            }
        default:
            break
        }
    }

    /// RFC 6265bis: a name or value with a control character (other than tab) is refused whole.
    private static func hasControlCharacter(_ text: Substring) -> Bool {
        text.utf8.contains { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }
    }
}
