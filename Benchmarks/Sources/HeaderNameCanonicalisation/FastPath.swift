// The "fast path" arm: the same results for every ASCII name, from one pass over the name's UTF-8 bytes, without
// bridging to `NSString` and without building a `String` per Unicode scalar. A name with any byte of 0x80 or above
// goes to the current code unchanged.
//
// Why the byte rules below give `capitalized`'s result on ASCII: `String._capitalized()` walks the scalars with one
// bit of state, "the last scalar was cased". An uppercase letter stays uppercase unless the last scalar was cased
// (then it is lowercased); a lowercase letter is title-cased (for ASCII: uppercased) unless the last scalar was cased;
// a scalar in CF's case-ignorable set leaves the state as it was; anything else clears it. In ASCII, CF's uppercase
// and lowercase sets are exactly A–Z and a–z, and its case-ignorable set is exactly `'`, `^` and `` ` `` (so `-`,
// `_`, `.`, digits and every other byte start a new word). `verify` checks this against Foundation on every ASCII
// string of up to two bytes and every printable one of three.

/// Whether every byte is ASCII, folding the bytes together so the loop has no branch per byte.
@inline(__always)
private func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    var union: UInt8 = 0
    for byte in bytes {
        union |= byte
    }
    return union < 0x80
}

/// One step of ASCII title-casing: `byte`'s replacement, given and updating "the last byte was a letter".
@inline(__always)
private func titleCaseStep(_ byte: UInt8, _ lastWasLetter: inout Bool) -> UInt8 {
    switch byte {
    case UInt8(ascii: "A")...UInt8(ascii: "Z"):
        defer { lastWasLetter = true }
        return lastWasLetter ? byte | 0x20 : byte
    case UInt8(ascii: "a")...UInt8(ascii: "z"):
        defer { lastWasLetter = true }
        return lastWasLetter ? byte : byte & 0xDF
    case UInt8(ascii: "'"), UInt8(ascii: "^"), UInt8(ascii: "`"):
        return byte
    default:
        lastWasLetter = false
        return byte
    }
}

/// `byte` lowercased if it is an ASCII capital letter.
@inline(__always)
private func asciiLowercased(_ byte: UInt8) -> UInt8 {
    (byte &- UInt8(ascii: "A")) < 26 ? byte | 0x20 : byte
}

/// Whether the ASCII bytes equal `lowercaseLiteral` (lowercase ASCII) ignoring ASCII case.
@inline(__always)
private func equalsIgnoringASCIICase(_ bytes: UnsafeBufferPointer<UInt8>, _ lowercaseLiteral: StaticString) -> Bool {
    guard bytes.count == lowercaseLiteral.utf8CodeUnitCount else { return false }
    let literal = lowercaseLiteral.utf8Start
    for index in 0..<bytes.count where asciiLowercased(bytes[index]) != literal[index] {
        return false
    }
    return true
}

/// What one name becomes, decided from its bytes.
private enum NameOutcome {
    case drop
    case keep
    case wwwAuthenticate
    case titleCased(String)
    case notASCII
}

private func canonicalOutcome(_ bytes: UnsafeBufferPointer<UInt8>) -> NameOutcome {
    if bytes.isEmpty {
        return .drop
    }
    guard isASCII(bytes) else {
        return .notASCII
    }
    // `x-` or `X-`: only 0x58 and 0x78 give 0x78 with the 0x20 bit set.
    if bytes.count >= 2, bytes[0] | 0x20 == UInt8(ascii: "x"), bytes[1] == UInt8(ascii: "-") {
        return .keep
    }
    if equalsIgnoringASCIICase(bytes, "www-authenticate") {
        return .wwwAuthenticate
    }
    // Find the first byte title-casing changes; a name already in canonical form (what most servers send) is kept
    // as it is, with no new string.
    var lastWasLetter = false
    var first = 0
    while first < bytes.count {
        var state = lastWasLetter
        if titleCaseStep(bytes[first], &state) != bytes[first] {
            break
        }
        lastWasLetter = state
        first += 1
    }
    if first == bytes.count {
        return .keep
    }
    let titleCased = String(unsafeUninitializedCapacity: bytes.count) { output in
        var index = 0
        while index < first {
            output[index] = bytes[index]
            index += 1
        }
        var state = lastWasLetter
        while index < bytes.count {
            output[index] = titleCaseStep(bytes[index], &state)
            index += 1
        }
        return bytes.count
    }
    return .titleCased(titleCased)
}

/// The fast path for one field name: the same result as `currentCanonicalName(_:)`.
func fastCanonicalName(_ name: String) -> String? {
    let (canonical, _) = fastCanonicalNameReportingASCII(name)
    return canonical
}

/// The fast path for one name, and whether it took the ASCII path (`false`: the current code decided).
@inline(__always)
func fastCanonicalNameReportingASCII(_ name: String) -> (String?, Bool) {
    var name = name
    let outcome = name.withUTF8 { canonicalOutcome($0) }
    switch outcome {
    case .drop:
        return (nil, true)
    case .keep:
        return (name, true)
    case .wwwAuthenticate:
        return ("WWW-Authenticate", true)
    case .titleCased(let titleCased):
        return (titleCased, true)
    case .notASCII:
        return (currentCanonicalName(name), false)
    }
}

/// The fast path over a whole head. When every name was ASCII, each canonical name is the only key that can match
/// its look-up case-insensitively (an ASCII name whose lowercase form is `content-length` title-cases to exactly
/// `Content-Length`, and `x-` names and `WWW-Authenticate` can match none of the three), so the three look-ups are
/// plain dictionary look-ups; otherwise they are the current code's.
func fastSanitize(_ head: [String: String]) -> SanitizedHead {
    var fields: [String: String] = [:]
    var allASCII = true
    for (name, value) in head {
        let (canonical, ascii) = fastCanonicalNameReportingASCII(name)
        allASCII = allASCII && ascii
        guard let canonical else { continue }
        fields[canonical] = value
    }
    if allASCII {
        return SanitizedHead(
            fields: fields,
            contentLength: fields["Content-Length"],
            contentDisposition: fields["Content-Disposition"],
            contentType: fields["Content-Type"])
    }
    return SanitizedHead(
        fields: fields,
        contentLength: currentLookup("content-length", in: fields),
        contentDisposition: currentLookup("content-disposition", in: fields),
        contentType: currentLookup("content-type", in: fields))
}
