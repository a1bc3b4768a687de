import Foundation
import HTTPTypes
import Hummingbird

/// Routes whose answer depends on request state: caching validators, Basic auth and cookies.
enum StateRoutes {
    static func respond(_ call: HTTPBinCall, kind: String, segments: [String]) -> Response {
        switch kind {
        case "cache":
            if let seconds = segments.first.flatMap(Int.init) {
                return HTTPBinResponses.json(call.getEcho, headers: [("Cache-Control", "public, max-age=\(seconds)")])
            }
            if call.header("If-Modified-Since") != nil || call.header("If-None-Match") != nil {
                return HTTPBinResponses.empty(status: .notModified)
            }
            let lastModified = DateFormatter.http.string(from: Date())
            return HTTPBinResponses.json(
                call.getEcho, headers: [("Last-Modified", lastModified), ("ETag", UUID().uuidString.lowercased())])
        case "etag":
            guard let etag = segments.first else { return HTTPBinResponses.notFound() }
            let quoted = "\"\(etag)\""
            if let ifNoneMatch = call.header("If-None-Match"), matches(ifNoneMatch, etag) {
                return HTTPBinResponses.empty(status: .notModified, headers: [("ETag", quoted)])
            }
            if let ifMatch = call.header("If-Match"), !matches(ifMatch, etag) {
                return HTTPBinResponses.empty(status: .preconditionFailed)
            }
            return HTTPBinResponses.json(call.getEcho, headers: [("ETag", quoted)])
        case "basic-auth", "hidden-basic-auth":
            guard segments.count == 2 else { return HTTPBinResponses.notFound() }
            let expected = "Basic " + Data("\(segments[0]):\(segments[1])".utf8).base64EncodedString()
            if call.header("Authorization") == expected {
                return HTTPBinResponses.json(["authenticated": true, "user": segments[0]])
            }
            if kind == "hidden-basic-auth" { return HTTPBinResponses.notFound() }
            // `?realm=none` challenges without a realm.
            let challenge = call.queryValue("realm") == "none" ? "Basic" : "Basic realm=\"Fake Realm\""
            return HTTPBinResponses.empty(status: .unauthorized, headers: [("WWW-Authenticate", challenge)])
        case "cookies":
            return cookies(call, action: segments.first)
        default:
            return HTTPBinResponses.notFound()
        }
    }

    /// httpbin's `/bearer`: any bearer token is accepted.
    static func bearer(_ call: HTTPBinCall) -> Response {
        guard let header = call.header("Authorization"), header.hasPrefix("Bearer "), header.count > 7 else {
            return HTTPBinResponses.empty(status: .unauthorized, headers: [("WWW-Authenticate", "Bearer")])
        }
        return HTTPBinResponses.json(["authenticated": true, "token": String(header.dropFirst(7))])
    }

    static func matches(_ header: String, _ etag: String) -> Bool {
        header.split(separator: ",").contains { candidate in
            let trimmed = candidate.trimmingCharacters(in: .whitespaces)
            return trimmed == "*" || trimmed == "\"\(etag)\"" || trimmed == "W/\"\(etag)\"" || trimmed == etag
        }
    }

    static func cookies(_ call: HTTPBinCall, action: String?) -> Response {
        switch action {
        case nil:
            var jar: [String: String] = [:]
            for pair in (call.header("Cookie") ?? "").split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                guard let name = parts.first?.trimmingCharacters(in: .whitespaces), !name.isEmpty else { continue }
                jar[name] = parts.count > 1 ? String(parts[1]) : ""
            }
            return HTTPBinResponses.json(["cookies": jar])
        case "set":
            let headers =
                [("Location", "/cookies")] + call.query.map { ("Set-Cookie", "\($0.name)=\($0.value); Path=/") }
            return HTTPBinResponses.empty(status: .found, headers: headers)
        case "delete":
            let expired = "Thu, 01 Jan 1970 00:00:00 GMT"
            let headers =
                [("Location", "/cookies")]
                + call.query.map { ("Set-Cookie", "\($0.name)=; Expires=\(expired); Max-Age=0; Path=/") }
            return HTTPBinResponses.empty(status: .found, headers: headers)
        default:
            return HTTPBinResponses.notFound()
        }
    }
}

extension DateFormatter {
    /// RFC 9110 IMF-fixdate.
    static let http: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter
    }()
}
