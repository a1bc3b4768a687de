import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Fixed documents and encodings: `/json`, `/xml`, `/html`, `/encoding/utf8`, `/base64/{value}`, `/image/{format}`,
/// `/gzip`, `/deflate`, `/brotli`, `/zstd`, `/encoded`.
enum ContentRoutes {
    static func respond(_ call: HTTPBinCall, kind: String, argument: String?) -> Response {
        switch kind {
        case "json":
            return HTTPBinResponses.json(SampleDocuments.slideshow)
        case "xml":
            return HTTPBinResponses.text(SampleDocuments.xml, contentType: "application/xml")
        case "html":
            return HTTPBinResponses.text(SampleDocuments.html, contentType: "text/html; charset=utf-8")
        case "encoding" where argument == "utf8":
            return HTTPBinResponses.text(SampleDocuments.utf8Demo, contentType: "text/html; charset=utf-8")
        case "base64":
            guard let argument, let data = decodeBase64URL(argument) else {
                return HTTPBinResponses.text(
                    "Incorrect Base64 data try: SFRUUEJJTiBpcyBhd2Vzb21l", contentType: "text/html; charset=utf-8")
            }
            return HTTPBinResponses.bytes(data, contentType: "text/html; charset=utf-8")
        case "image":
            return image(call, format: argument)
        case "gzip", "deflate":
            var echo = call.getEcho
            echo.removeValue(forKey: "args")
            echo.removeValue(forKey: "url")
            echo[kind == "gzip" ? "gzipped" : "deflated"] = true
            echo["method"] = call.method
            let plain =
                (try? JSONSerialization.data(
                    withJSONObject: echo, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data()
            guard let compressed = Zlib.compress(plain, format: kind == "gzip" ? .gzip : .zlib) else {
                return HTTPBinResponses.text("compression failed", status: .internalServerError)
            }
            return HTTPBinResponses.bytes(
                compressed, contentType: "application/json", headers: [("Content-Encoding", kind)])
        case "brotli", "zstd":
            var echo = call.getEcho
            echo.removeValue(forKey: "args")
            echo.removeValue(forKey: "url")
            echo[kind] = true
            echo["method"] = call.method
            let plain =
                (try? JSONSerialization.data(
                    withJSONObject: echo, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])) ?? Data()
            let coding = kind == "brotli" ? "br" : "zstd"
            return HTTPBinResponses.bytes(
                StoredCodings.encode(plain, codings: [coding]) ?? Data(), contentType: "application/json",
                headers: [("Content-Encoding", coding)])
        case "encoded":
            return encoded(call)
        default:
            return HTTPBinResponses.notFound()
        }
    }

    /// `/encoded?codings=gzip,br`: the request's body with the codings applied in order and named in
    /// `Content-Encoding`; with `raw=1` the body is taken as already coded (a reference encoder's output) and sent as
    /// it came. `chunk=N` sends it in chunks of N bytes, so the client meets the stream cut anywhere; `delay_ms=D`
    /// waits D ms between chunks (a slow link).
    static func encoded(_ call: HTTPBinCall) -> Response {
        let codings = (call.queryValue("codings") ?? "").split(separator: ",").map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        let body: Data
        if call.queryValue("raw") == "1" {
            body = call.body
        } else {
            guard let coded = StoredCodings.encode(call.body, codings: codings) else {
                return HTTPBinResponses.badRequest("Unknown coding in \(codings)")
            }
            body = coded
        }
        let header = codings.joined(separator: ", ")
        guard let chunk = call.queryValue("chunk").flatMap(Int.init), chunk > 0 else {
            return HTTPBinResponses.bytes(
                body, contentType: "application/octet-stream", headers: [("Content-Encoding", header)])
        }
        let delay = min(call.queryValue("delay_ms").flatMap(UInt64.init) ?? 0, 1000)
        var fields = HTTPFields()
        fields[.contentType] = "application/octet-stream"
        fields[.contentEncoding] = header
        return Response(
            status: .ok, headers: fields,
            body: ResponseBody { writer in
                var offset = body.startIndex
                while offset < body.endIndex {
                    let end = min(offset + chunk, body.endIndex)
                    try await writer.write(ByteBuffer(bytes: body[offset..<end]))
                    offset = end
                    if delay > 0, offset < body.endIndex { try await Task.sleep(nanoseconds: delay * 1_000_000) }
                }
                try await writer.finish(nil)
            })
    }

    /// `/json-array/{n}`: a JSON array of `n` records (`id`, `name`, `score`, `tags`), the same bytes every time,
    /// about 90 bytes a record; the benchmark workloads decode it when nginx is not available. `?head=nginx` sends
    /// it under the eight fields nginx sends for a static file, `?head=api` under fifteen (`RealisticHead`).
    static func jsonArray(count: Int?, head: String? = nil) -> Response {
        guard let count, (0...200_000).contains(count) else { return HTTPBinResponses.badRequest("Invalid count") }
        guard let head else {
            return HTTPBinResponses.bytes(BenchmarkDocuments.records(count), contentType: "application/json")
        }
        guard let realistic = RealisticHead(rawValue: head) else { return HTTPBinResponses.badRequest("Invalid head") }
        return realistic.response(BenchmarkDocuments.records(count))
    }

    static func image(_ call: HTTPBinCall, format: String?) -> Response {
        let images: [String: (Data, String)] = [
            "png": (SampleImages.png, "image/png"),
            "jpeg": (SampleImages.jpeg, "image/jpeg"),
            "gif": (SampleImages.gif, "image/gif"),
            "webp": (SampleImages.webp, "image/webp"),
        ]
        if let format, let (data, type) = images[format] {
            return HTTPBinResponses.bytes(data, contentType: type)
        }
        guard format == nil else { return HTTPBinResponses.notFound() }
        let accept = call.header("Accept")?.lowercased() ?? "image/png"
        let order = ["webp", "png", "jpeg", "gif"]
        let chosen = order.first { accept.contains("image/\($0)") } ?? "png"
        let (data, type) = images[chosen]!
        return HTTPBinResponses.bytes(data, contentType: type)
    }

    static func decodeBase64URL(_ value: String) -> Data? {
        var base64 = value.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        while base64.count % 4 != 0 { base64 += "=" }
        return Data(base64Encoded: base64)
    }
}
