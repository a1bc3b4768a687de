import Foundation

// The "current" arm: the work FoundationNetworking's `HTTPURLResponse.init(url:statusCode:httpVersion:headerFields:)`
// does for each header field (swift-corelibs-foundation `swift-6.3.1-RELEASE`, 58ed1c970a179b3564e2f29963870e0aa25a3e0a,
// Sources/FoundationNetworking/URLResponse.swift), expressed with the same Foundation and standard library calls:
//
// 1. `sanitize(headerFields:)`: for every field, an empty name is dropped; a name with the prefix `x-` or `X-`
//    (`hasPrefix`) is kept as it is; a name equal to `WWW-Authenticate` by `caseInsensitiveCompare` (corelibs: bridged
//    to `NSString`, `CFStringCompareWithOptionsAndLocale`) becomes exactly `WWW-Authenticate`; any other name becomes
//    `name.capitalized` (swift-foundation's `String._capitalized()`, a loop over Unicode scalars with CF's case tables).
//    The value is stored under the new name in a new `[String: String]`.
// 2. Three look-ups, `content-length`, `content-disposition` and `content-type`, each lowercasing the keys of that
//    dictionary one by one until one matches (`valueForCaseInsensitiveKey`): `Content-Disposition` is rarely sent, so
//    that one lowercases every key.

/// What `sanitize(headerFields:)` makes of one field name: `nil` drops the field.
func currentCanonicalName(_ name: String) -> String? {
    if name.isEmpty {
        return nil
    }
    if name.hasPrefix("x-") || name.hasPrefix("X-") {
        return name
    }
    if name.caseInsensitiveCompare("WWW-Authenticate") == .orderedSame {
        return "WWW-Authenticate"
    }
    return name.capitalized
}

/// The initializer's case-insensitive look-up: the value of the first key whose `lowercased()` equals `key`'s.
func currentLookup(_ key: String, in fields: [String: String]) -> String? {
    let wanted = key.lowercased()
    for (name, value) in fields where name.lowercased() == wanted {
        return value
    }
    return nil
}

/// What the initializer derives from a head's fields, per field and per head, before it parses `Content-Type`.
struct SanitizedHead: Equatable {
    var fields: [String: String]
    var contentLength: String?
    var contentDisposition: String?
    var contentType: String?
}

/// The current code over a whole head.
func currentSanitize(_ head: [String: String]) -> SanitizedHead {
    var fields: [String: String] = [:]
    for (name, value) in head {
        guard let canonical = currentCanonicalName(name) else { continue }
        fields[canonical] = value
    }
    return SanitizedHead(
        fields: fields,
        contentLength: currentLookup("content-length", in: fields),
        contentDisposition: currentLookup("content-disposition", in: fields),
        contentType: currentLookup("content-type", in: fields))
}
