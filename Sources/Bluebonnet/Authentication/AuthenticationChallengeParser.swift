import Foundation

/// Parses `WWW-Authenticate` and `Proxy-Authenticate` field values by the RFC 9110 `challenge` grammar:
///
///     challenge  = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
///     auth-param = token BWS "=" BWS ( token / quoted-string )
///     token68    = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
///
/// The field is the server's, so it is untrusted: every malformed input is a thrown `Failure`, and its size, the
/// number of challenges and of parameters are bounded.
struct AuthenticationChallengeParser {
    /// Why a field could not be parsed.
    enum Failure: Error, Equatable {
        /// The field is longer than `maximumLength` bytes.
        case tooLong(limit: Int)
        /// More than `maximumChallenges` challenges, or more than `maximumParameters` parameters in one.
        case tooManyElements(limit: Int)
        /// A quoted string has no closing quote.
        case unterminatedQuotedString(offset: Int)
        /// A byte the grammar does not allow here.
        case unexpectedCharacter(offset: Int)
        /// One challenge names the same parameter twice (RFC 9110: each may occur only once).
        case duplicateParameter(String)
    }

    /// The longest field parsed, in bytes.
    var maximumLength = 16 * 1024
    /// The most challenges in one field.
    var maximumChallenges = 32
    /// The most parameters in one challenge.
    var maximumParameters = 32

    /// The challenges of `field`, in order.
    ///
    /// - Parameter field: One field value, or several joined with commas (as repeated fields are combined).
    /// - Returns: The challenges; empty for an empty field.
    /// - Throws: `Failure`.
    func parse(_ field: String) throws(Failure) -> [AuthenticationChallenge] {
        let bytes = Array(field.utf8)
        guard bytes.count <= maximumLength else { throw .tooLong(limit: maximumLength) }
        var cursor = Cursor(bytes: bytes)
        var challenges: [AuthenticationChallenge] = []
        while true {
            cursor.skipListSeparators()
            if cursor.isAtEnd { break }
            guard challenges.count < maximumChallenges else { throw .tooManyElements(limit: maximumChallenges) }
            challenges.append(try parseChallenge(&cursor))
        }
        return challenges
    }

    /// Parses one challenge; on return the cursor is at the end or at the start of the next challenge.
    private func parseChallenge(_ cursor: inout Cursor) throws(Failure) -> AuthenticationChallenge {
        guard let scheme = cursor.readToken() else { throw .unexpectedCharacter(offset: cursor.offset) }
        var challenge = AuthenticationChallenge(scheme: scheme)
        let spaces = cursor.skipSpaces()
        if cursor.isAtEnd || cursor.peek == UInt8(ascii: ",") { return challenge }
        guard spaces > 0 else { throw .unexpectedCharacter(offset: cursor.offset) }
        if let token68 = cursor.readToken68() {
            challenge.token68 = token68
            return challenge
        }
        var names = Set<String>()
        while true {
            let (name, value) = try parseParameter(&cursor)
            guard names.insert(name).inserted else { throw .duplicateParameter(name) }
            guard challenge.parameters.count < maximumParameters else {
                throw .tooManyElements(limit: maximumParameters)
            }
            challenge.parameters.append((name, value))
            cursor.skipSpaces()
            if cursor.isAtEnd { return challenge }
            guard cursor.peek == UInt8(ascii: ",") else { throw .unexpectedCharacter(offset: cursor.offset) }
            let separator = cursor.offset
            cursor.skipListSeparators()
            if cursor.isAtEnd { return challenge }
            // What follows a comma is another parameter of this challenge only if it reads `token BWS =`; anything
            // else begins the next challenge.
            guard cursor.startsParameter else {
                cursor.offset = separator
                return challenge
            }
        }
    }

    private func parseParameter(_ cursor: inout Cursor) throws(Failure) -> (String, String) {
        guard let name = cursor.readToken() else { throw .unexpectedCharacter(offset: cursor.offset) }
        cursor.skipSpaces()
        guard cursor.peek == UInt8(ascii: "=") else { throw .unexpectedCharacter(offset: cursor.offset) }
        cursor.offset += 1
        cursor.skipSpaces()
        if cursor.peek == UInt8(ascii: "\"") {
            return (name.lowercased(), try cursor.readQuotedString())
        }
        guard let value = cursor.readToken() else { throw .unexpectedCharacter(offset: cursor.offset) }
        return (name.lowercased(), value)
    }

    /// A position in the field's bytes.
    private struct Cursor {
        let bytes: [UInt8]
        var offset = 0

        var isAtEnd: Bool { offset >= bytes.count }
        var peek: UInt8? { offset < bytes.count ? bytes[offset] : nil }

        @discardableResult
        mutating func skipSpaces() -> Int {
            let start = offset
            while let byte = peek, byte == 0x20 || byte == 0x09 { offset += 1 }
            return offset - start
        }

        /// Skips whitespace and the empty elements a `#rule` list allows (`a, , b`).
        mutating func skipListSeparators() {
            while let byte = peek, byte == 0x20 || byte == 0x09 || byte == UInt8(ascii: ",") { offset += 1 }
        }

        mutating func readToken() -> String? {
            let start = offset
            while let byte = peek, HeaderValidator.isTokenByte(byte) { offset += 1 }
            guard offset > start else { return nil }
            return String(decoding: bytes[start..<offset], as: UTF8.self)
        }

        /// A token68, only if it stands alone: followed by the end or a comma. Otherwise the cursor is unchanged.
        mutating func readToken68() -> String? {
            let start = offset
            while let byte = peek, Self.isToken68Byte(byte) { offset += 1 }
            guard offset > start else { return nil }
            while peek == UInt8(ascii: "=") { offset += 1 }
            let end = offset
            skipSpaces()
            guard isAtEnd || peek == UInt8(ascii: ",") else {
                offset = start
                return nil
            }
            return String(decoding: bytes[start..<end], as: UTF8.self)
        }

        /// Whether the cursor is at `token BWS "="` and not at a token68 padded with `=`.
        var startsParameter: Bool {
            var probe = self
            guard probe.readToken() != nil else { return false }
            probe.skipSpaces()
            guard probe.peek == UInt8(ascii: "=") else { return false }
            probe.offset += 1
            probe.skipSpaces()
            guard let next = probe.peek else { return false }
            return next != UInt8(ascii: "=") && next != UInt8(ascii: ",")
        }

        mutating func readQuotedString() throws(Failure) -> String {
            let start = offset
            offset += 1
            var value: [UInt8] = []
            while let byte = peek {
                offset += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(decoding: value, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    guard let escaped = peek, escaped == 0x09 || escaped >= 0x20, escaped != 0x7F else {
                        throw .unterminatedQuotedString(offset: start)
                    }
                    value.append(escaped)
                    offset += 1
                case 0x09, 0x20...0x7E, 0x80...0xFF:
                    value.append(byte)
                default:
                    throw .unexpectedCharacter(offset: offset - 1)
                }
            }
            throw .unterminatedQuotedString(offset: start)
        }

        static func isToken68Byte(_ byte: UInt8) -> Bool {
            HeaderValidator.isASCIIAlphanumeric(byte) || "-._~+/".utf8.contains(byte)
        }
    }
}
