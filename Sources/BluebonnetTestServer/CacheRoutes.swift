import Foundation
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers

/// `/cacheable/{id}`: a response whose caching headers the query sets, counting how often the origin answered, so
/// cache tests can assert hits, misses and revalidations exactly. Not an httpbin route.
///
/// Query: `cache_control`, `etag` (sent quoted), `last_modified` (seconds before the server started), `expires` (seconds from now,
/// or a raw value), `vary`, `date` (seconds before now), `age`, `status`. A request whose `If-None-Match` names
/// the ETag, or whose `If-Modified-Since` is not before `Last-Modified`, gets a 304 (counted as a revalidation).
/// The body says how many full answers were given, echoes the fields `vary` names, and `pad` bytes of `x` (to make it large).
/// `/cacheable-hits/{id}` reports the counts as JSON: `{"full": n, "notModified": m}`.
struct CacheRoutes: Sendable {
    private struct Counts: Sendable {
        var full = 0
        var notModified = 0
    }

    private let counts = NIOLockedValueBox<[String: Counts]>([:])
    /// `last_modified` counts back from here, not from each request's time, so the date stays the same between
    /// requests and a revalidation can match it.
    private let reference = Date().timeIntervalSince1970.rounded(.down)

    func respond(_ call: HTTPBinCall, kind: String, id: String?) -> Response {
        guard let id else { return HTTPBinResponses.notFound() }
        if kind == "cacheable-hits" {
            let current = counts.withLockedValue { $0[id] } ?? Counts()
            return HTTPBinResponses.json(["full": current.full, "notModified": current.notModified])
        }
        let now = Date()
        var headers: [(String, String)] = []
        if let value = call.queryValue("cache_control") { headers.append(("Cache-Control", value)) }
        let etag = call.queryValue("etag").map { "\"\($0)\"" }
        if let etag { headers.append(("ETag", etag)) }
        let lastModified = call.queryValue("last_modified").flatMap(Double.init).map {
            Date(timeIntervalSince1970: reference - $0)
        }
        if let lastModified { headers.append(("Last-Modified", DateFormatter.http.string(from: lastModified))) }
        if let expires = call.queryValue("expires") {
            headers.append(
                (
                    "Expires",
                    Double(expires).map { DateFormatter.http.string(from: now.addingTimeInterval($0)) } ?? expires
                ))
        }
        if let vary = call.queryValue("vary") { headers.append(("Vary", vary)) }
        if let age = call.queryValue("age") { headers.append(("Age", age)) }
        let date = call.queryValue("date").flatMap(Double.init).map { now.addingTimeInterval(-$0) } ?? now
        headers.append(("Date", DateFormatter.http.string(from: date)))

        var notModified = false
        if let etag, let ifNoneMatch = call.header("If-None-Match") {
            notModified = ifNoneMatch.split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == etag }
        } else if let lastModified,
            let since = call.header("If-Modified-Since").flatMap({ DateFormatter.http.date(from: $0) })
        {
            notModified =
                since.timeIntervalSince1970.rounded(.down) >= lastModified.timeIntervalSince1970.rounded(.down)
        }
        let current = counts.withLockedValue { counts -> Counts in
            if notModified {
                counts[id, default: Counts()].notModified += 1
            } else {
                counts[id, default: Counts()].full += 1
            }
            return counts[id]!
        }
        if notModified { return HTTPBinResponses.empty(status: .notModified, headers: headers) }
        var echo: [String: Any] = ["id": id, "answer": current.full]
        if let pad = call.queryValue("pad").flatMap(Int.init), (0...(8 << 20)).contains(pad) {
            echo["pad"] = String(repeating: "x", count: pad)
        }
        for name in (call.queryValue("vary") ?? "").split(separator: ",") {
            let field = name.trimmingCharacters(in: .whitespaces)
            echo[field] = call.header(field) ?? NSNull()
        }
        let status = call.queryValue("status").flatMap(Int.init) ?? 200
        return HTTPBinResponses.json(echo, status: HTTPResponse.Status(code: status), headers: headers)
    }
}
