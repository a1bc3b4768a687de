/// The directives of a `Cache-Control` field (RFC 9111 §5.2), request or response, read tolerantly: unknown
/// directives are ignored, and a malformed number leaves its directive out.
struct CacheControl: Equatable, Sendable {
    var maxAge: Int?
    var noCache = false
    var noStore = false
    var mustRevalidate = false
    var isPublic = false
    var isPrivate = false
    /// `s-maxage`: parsed to honour §3.5 (it lets a response to an authorized request be stored), never a lifetime
    /// here, since this is a private cache.
    var sharedMaxAge: Int?
    /// `max-stale`: `Int.max` when it has no value.
    var maxStale: Int?
    var minFresh: Int?
    var onlyIfCached = false
    var immutable = false

    /// Reads every `Cache-Control` value of a message (their directives add up) and `Pragma: no-cache`, which a
    /// request without `Cache-Control` means as `no-cache` (§5.4).
    ///
    /// - Parameters:
    ///   - value:  The `Cache-Control` field, fields joined by commas.
    ///   - pragma: The `Pragma` field.
    init(_ value: String?, pragma: String? = nil) {
        guard let value, !value.isEmpty else {
            if let pragma, pragma.lowercased().contains("no-cache") { noCache = true }
            return
        }
        for directive in Self.directives(in: value) {
            let seconds = directive.value.flatMap(Self.deltaSeconds)
            switch directive.name {
            case "max-age": if let seconds { maxAge = seconds }
            case "s-maxage": if let seconds { sharedMaxAge = seconds }
            case "no-cache": noCache = true
            case "no-store": noStore = true
            case "must-revalidate", "proxy-revalidate": mustRevalidate = true
            case "public": isPublic = true
            case "private": isPrivate = true
            case "max-stale": maxStale = directive.value == nil ? Int.max : seconds ?? maxStale
            case "min-fresh": if let seconds { minFresh = seconds }
            case "only-if-cached": onlyIfCached = true
            case "immutable": immutable = true
            default: break
            }
        }
    }

    /// `name[=value]` pairs split at commas outside quotes; names lower-cased, quotes removed from values.
    private static func directives(in value: String) -> [(name: String, value: String?)] {
        var result: [(String, String?)] = []
        var current = ""
        var quoted = false
        for character in value + "," {
            if character == "\"" { quoted.toggle() }
            guard character == ",", !quoted else {
                current.append(character)
                continue
            }
            let parts = current.split(separator: "=", maxSplits: 1)
            current = ""
            guard let name = parts.first?.trimmingWhitespace(), !name.isEmpty else { continue }
            var argument = parts.count > 1 ? String(parts[1].trimmingWhitespace()) : nil
            if let text = argument, text.count >= 2, text.hasPrefix("\""), text.hasSuffix("\"") {
                argument = String(text.dropFirst().dropLast())
            }
            result.append((name.lowercased(), argument))
        }
        return result
    }

    /// `delta-seconds`: digits only; a value too large for `Int` is the largest (§1.2.2).
    static func deltaSeconds(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
        return Int(text) ?? Int(Int32.max)
    }
}
