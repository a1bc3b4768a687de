import Foundation
import HTTPTypes
import Hummingbird

/// One request to the test server, read whole and parsed the way httpbin reports it.
struct HTTPBinCall: Sendable {
    /// The largest body the server reads.
    static let maximumBody = 256 * 1024 * 1024

    let method: String
    let path: String
    let segments: [String]
    let query: [(name: String, value: String)]
    let headers: [(name: String, value: String)]
    let body: Data
    let origin: String
    let url: String
    let host: String
    /// The request-target as received: path and query.
    let target: String

    init(request: Request, context: TestServerContext) async throws {
        method = request.method.rawValue
        path = request.uri.path
        segments = path.split(separator: "/").map { String($0).removingPercentEncoding ?? String($0) }
        query = Self.parseForm(request.uri.query ?? "")
        // HTTPTypes keeps Host as the `:authority` pseudo-header; httpbin lists it with the others.
        headers =
            (request.head.authority.map { [("Host", $0)] } ?? [])
            + request.headers.map { (Self.titleCased($0.name.rawName), $0.value) }
        let buffer = try await request.body.collect(upTo: Self.maximumBody)
        body = Data(buffer.readableBytesView)
        origin = context.remoteAddress ?? "127.0.0.1"
        host = request.head.authority ?? "127.0.0.1"
        url = "http://\(host)\(request.uri.string)"
        target = request.uri.string
    }

    func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    func queryValue(_ name: String) -> String? {
        query.first { $0.name == name }?.value
    }

    /// httpbin's `args`/`form` shape: a single value as a string, repeated names as an array.
    static func grouped(_ pairs: [(name: String, value: String)]) -> [String: Any] {
        var result: [String: Any] = [:]
        for (name, value) in pairs {
            switch result[name] {
            case nil: result[name] = value
            case let existing as String: result[name] = [existing, value]
            case let existing as [String]: result[name] = existing + [value]
            default: break
            }
        }
        return result
    }

    var headersObject: [String: String] {
        var result: [String: String] = [:]
        for (name, value) in headers {
            result[name] = result[name].map { "\($0),\(value)" } ?? value
        }
        return result
    }

    /// `/get`'s body.
    var getEcho: [String: Any] {
        ["args": Self.grouped(query), "headers": headersObject, "origin": origin, "url": url]
    }

    /// `/post`'s body: `args`, `data`, `files`, `form`, `headers`, `json`, `origin`, `url`.
    var bodyEcho: [String: Any] {
        var echo = getEcho
        let contentType = header("Content-Type")?.lowercased() ?? ""
        var form: [String: Any] = [:]
        var files: [String: Any] = [:]
        var data = ""
        if contentType.hasPrefix("application/x-www-form-urlencoded") {
            form = Self.grouped(Self.parseForm(String(decoding: body, as: UTF8.self)))
        } else if contentType.hasPrefix("multipart/form-data"),
            // The boundary is case-sensitive: read it from the header as sent, not the lowercased copy.
            let boundary = MultipartParser.boundary(from: header("Content-Type") ?? "")
        {
            let parts = MultipartParser.parse(body, boundary: boundary)
            var fields: [(name: String, value: String)] = []
            var fileFields: [(name: String, value: String)] = []
            for part in parts {
                if part.fileName != nil {
                    fileFields.append((part.name, Self.textOrDataURL(part.body, contentType: part.contentType)))
                } else {
                    fields.append((part.name, String(decoding: part.body, as: UTF8.self)))
                }
            }
            form = Self.grouped(fields)
            files = Self.grouped(fileFields)
        } else {
            data = Self.textOrDataURL(body, contentType: contentType.isEmpty ? nil : contentType)
        }
        echo["data"] = data
        echo["form"] = form
        echo["files"] = files
        echo["json"] = (try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])) ?? NSNull()
        if body.isEmpty { echo["json"] = NSNull() }
        return echo
    }

    /// UTF-8 text as it is; anything else as a `data:` URL, as httpbin does.
    static func textOrDataURL(_ data: Data, contentType: String?) -> String {
        if let text = String(data: data, encoding: .utf8) { return text }
        return "data:\(contentType ?? "application/octet-stream");base64,\(data.base64EncodedString())"
    }

    /// Parses `a=1&b=2` with `+` as space, as HTML forms and httpbin do.
    static func parseForm(_ string: String) -> [(name: String, value: String)] {
        string.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) -> String {
                let spaced = part.replacingOccurrences(of: "+", with: " ")
                return spaced.removingPercentEncoding ?? spaced
            }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    static func titleCased(_ name: String) -> String {
        name.split(separator: "-", omittingEmptySubsequences: false)
            .map { $0.prefix(1).uppercased() + $0.dropFirst().lowercased() }
            .joined(separator: "-")
    }
}
