import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// `/sse`: a `text/event-stream` of numbered events, for event source tests.
///
/// Query: `count` events in all (5); `retry` in ms sent first (50); `disconnect_after` events per connection (all);
/// `drop=1` cuts the connection there rather than ending the body; `crlf=1` ends lines with CRLF; `delay_ms` between
/// events (0); `empty=1` sends only the comment and `retry`, then ends. A `Last-Event-ID` of `n` resumes at `n + 1`; once every event was sent, the answer is `204`.
/// Each event: `id: i`, `event: tick`, `data: line one i`, `data: line two`, preceded by a comment.
enum ServerSentEventsRoute {
    static func respond(_ call: HTTPBinCall) -> Response {
        let count = call.queryValue("count").flatMap(Int.init) ?? 5
        let retry = call.queryValue("retry").flatMap(Int.init) ?? 50
        let perConnection = call.queryValue("disconnect_after").flatMap(Int.init) ?? count
        let drops = call.queryValue("drop") == "1"
        let newline = call.queryValue("crlf") == "1" ? "\r\n" : "\n"
        let delay = call.queryValue("delay_ms").flatMap(UInt64.init) ?? 0
        let empty = call.queryValue("empty") == "1"
        guard count >= 0, count <= 100_000, perConnection > 0, retry >= 0, delay <= 1000 else {
            return HTTPBinResponses.badRequest("Invalid event stream")
        }
        let start = call.header("Last-Event-ID").flatMap(Int.init).map { $0 + 1 } ?? 0
        guard start < count else { return HTTPBinResponses.empty(status: .noContent) }
        let end = empty ? start : min(count, start + perConnection)
        var fields = HTTPFields()
        fields[.contentType] = "text/event-stream"
        fields[.cacheControl] = "no-store"
        return Response(
            status: .ok, headers: fields,
            body: ResponseBody { writer in
                try await writer.write(ByteBuffer(string: ": hello\(newline)retry: \(retry)\(newline)\(newline)"))
                for index in start..<end {
                    let event =
                        ": event \(index)\(newline)id: \(index)\(newline)event: tick\(newline)data: line one \(index)\(newline)data: line two\(newline)\(newline)"
                    try await writer.write(ByteBuffer(string: event))
                    if delay > 0 { try await Task.sleep(nanoseconds: delay * 1_000_000) }
                }
                if drops, !empty, end < count { throw CancellationError() }
                try await writer.finish(nil)
            })
    }
}
