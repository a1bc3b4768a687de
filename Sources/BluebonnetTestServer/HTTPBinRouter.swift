import Foundation
import HTTPTypes
import Hummingbird

/// Dispatches test-server requests by path, with httpbin's names and shapes.
struct HTTPBinRouter: Sendable {
    let auth = AuthRoutes()
    let cacheable = CacheRoutes()

    func respond(to request: Request, context: TestServerContext) async throws -> Response {
        // Streamed, never collected: the one route whose body may be larger than memory.
        if request.uri.path == DrainRoute.path { return try await DrainRoute.respond(to: request) }
        let call = try await HTTPBinCall(request: request, context: context)
        let first = call.segments.first ?? ""
        let argument = call.segments.count > 1 ? call.segments[1] : nil
        switch (first, call.method) {
        case ("get", "GET"), ("get", "HEAD"):
            return HTTPBinResponses.json(call.getEcho)
        case ("post", "POST"), ("put", "PUT"), ("patch", "PATCH"), ("delete", "DELETE"):
            return HTTPBinResponses.json(call.bodyEcho)
        case ("get", _), ("post", _), ("put", _), ("patch", _), ("delete", _):
            return HTTPBinResponses.text("Method Not Allowed\n", status: .methodNotAllowed)
        case ("anything", _):
            var echo = call.bodyEcho
            echo["method"] = call.method
            return HTTPBinResponses.json(echo)
        case ("headers", _):
            return HTTPBinResponses.json(["headers": call.headersObject])
        case ("user-agent", _):
            return HTTPBinResponses.json(["user-agent": call.header("User-Agent") ?? ""])
        case ("ip", _):
            return HTTPBinResponses.json(["origin": call.origin])
        case ("status", _):
            return StatusRoutes.status(argument)
        case ("redirect", _), ("relative-redirect", _), ("absolute-redirect", _), ("redirect-to", _):
            return RedirectRoutes.respond(call, kind: first, argument: argument)
        case ("response-headers", _):
            return StatusRoutes.responseHeaders(call)
        case ("echo", _):
            return StatusRoutes.echo(call)
        case ("json-array", _):
            return ContentRoutes.jsonArray(count: argument.flatMap(Int.init), head: call.queryValue("head"))
        case ("bytes", _), ("stream", _), ("delay", _), ("range", _), ("drip", _), ("chunked", _), ("truncated", _),
            ("download", _), ("slices", _):
            return try await BodyRoutes.respond(call, kind: first, argument: argument)
        case ("json", _), ("xml", _), ("html", _), ("encoding", _), ("base64", _), ("image", _), ("gzip", _),
            ("deflate", _), ("brotli", _), ("zstd", _), ("encoded", _):
            return ContentRoutes.respond(call, kind: first, argument: argument)
        case ("sse", _):
            return ServerSentEventsRoute.respond(call)
        case ("ocsp", _):
            return OCSPResponder.respond(call)
        case ("digest-auth", _):
            return auth.digest(call, segments: Array(call.segments.dropFirst()))
        case ("token", _):
            return try await auth.token(call, segments: Array(call.segments.dropFirst()))
        case ("bearer", _):
            return StateRoutes.bearer(call)
        case ("cacheable", _), ("cacheable-hits", _):
            return cacheable.respond(call, kind: first, id: argument)
        case ("cache", _), ("etag", _), ("basic-auth", _), ("hidden-basic-auth", _), ("cookies", _):
            return StateRoutes.respond(call, kind: first, segments: Array(call.segments.dropFirst()))
        default:
            return HTTPBinResponses.notFound()
        }
    }
}

/// `/status/{code}` and `/response-headers`.
enum StatusRoutes {
    static func status(_ argument: String?) -> Response {
        guard let argument, let code = Int(argument), (100...599).contains(code) else {
            return HTTPBinResponses.badRequest("Invalid status code")
        }
        switch code {
        case 301, 302, 303, 305, 307:
            return HTTPBinResponses.redirect(to: "/redirect/1", status: code)
        case 401:
            return HTTPBinResponses.empty(
                status: .unauthorized, headers: [("WWW-Authenticate", "Basic realm=\"Fake Realm\"")])
        case 418:
            return HTTPBinResponses.text("\n    -=[ teapot ]=-\n", status: HTTPResponse.Status(code: 418))
        default:
            return HTTPBinResponses.empty(status: HTTPResponse.Status(code: code))
        }
    }

    /// `/echo?status=&content_type=`: the request body back, byte for byte (not an httpbin route; serializer tests
    /// use it to receive exact bytes with a chosen type). Without `content_type`, the request's own type is used;
    /// `content_type=none` sends none.
    static func echo(_ call: HTTPBinCall) -> Response {
        let status = call.queryValue("status").flatMap(Int.init) ?? 200
        guard (200...599).contains(status) else { return HTTPBinResponses.badRequest("Invalid status") }
        let requested = call.queryValue("content_type") ?? call.header("Content-Type")
        return HTTPBinResponses.bytes(
            call.body, contentType: requested == "none" ? nil : requested,
            status: HTTPResponse.Status(code: status))
    }

    static func responseHeaders(_ call: HTTPBinCall) -> Response {
        var object = HTTPBinCall.grouped(call.query)
        object["Content-Type"] = "application/json"
        return HTTPBinResponses.json(object, headers: call.query.map { ($0.name, $0.value) })
    }
}

/// `/redirect/{n}`, `/relative-redirect/{n}`, `/absolute-redirect/{n}` and `/redirect-to`.
enum RedirectRoutes {
    static func respond(_ call: HTTPBinCall, kind: String, argument: String?) -> Response {
        if kind == "redirect-to" {
            guard let target = call.queryValue("url") else { return HTTPBinResponses.badRequest("Missing url") }
            let status = call.queryValue("status_code").flatMap(Int.init) ?? 302
            guard (300...399).contains(status) else { return HTTPBinResponses.badRequest("Invalid status_code") }
            return HTTPBinResponses.redirect(to: target, status: status)
        }
        guard let argument, let count = Int(argument), count >= 1 else {
            return HTTPBinResponses.badRequest("Invalid redirect count")
        }
        let absolute = kind == "absolute-redirect" || (kind == "redirect" && call.queryValue("absolute") == "true")
        let prefix = absolute ? "http://\(call.host)" : ""
        let next = kind == "redirect" ? (absolute ? "absolute-redirect" : "relative-redirect") : kind
        let location = count == 1 ? "\(prefix)/get" : "\(prefix)/\(next)/\(count - 1)"
        return HTTPBinResponses.redirect(to: location)
    }
}
