import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// `/download/{n}`: `n` deterministic bytes (`/bytes/{n}?seed=`'s) that can be resumed, for download tests.
///
/// Query: `seed` (default 1); `etag` (default `"v1"`, quoted; `none` sends none); `last_modified=1` sends a fixed
/// `Last-Modified`; `weak=1` makes the `ETag` weak; `drop_after=k` cuts the connection after `k` bytes of the body;
/// `ignore_range=1` answers every request with the whole body; `filename` sends `Content-Disposition`;
/// `wrong_range=1` answers a range with a `206` that starts one byte late. `Range` (one `bytes=a-` range) is honoured
/// when `If-Range` is absent or names the current validator. `X-Received-Credentials` names the credential fields the
/// request carried (`Authorization`, `Cookie`, `Proxy-Authorization`), or says `none`.
public enum ResumableDownloadRoute {
    /// The `Last-Modified` sent with `last_modified=1`.
    public static let lastModified = "Wed, 21 Oct 2026 07:28:00 GMT"

    static func respond(_ call: HTTPBinCall, argument: String?) -> Response {
        guard let count = argument.flatMap(Int.init), (0...BodyRoutes.maximumBytes).contains(count) else {
            return HTTPBinResponses.badRequest("Invalid byte count")
        }
        let seed = call.queryValue("seed").flatMap(UInt64.init) ?? 1
        let tag = call.queryValue("etag") ?? "v1"
        var etag: String? = tag == "none" ? nil : "\"\(tag)\""
        if call.queryValue("weak") == "1", let strong = etag { etag = "W/" + strong }
        let modified = call.queryValue("last_modified") == "1" ? lastModified : nil
        var fields = HTTPFields()
        fields[.contentType] = "application/octet-stream"
        fields[.acceptRanges] = "bytes"
        if let etag { fields[.eTag] = etag }
        if let modified { fields[.lastModified] = modified }
        if let filename = call.queryValue("filename") {
            fields[.contentDisposition] = "attachment; filename=\"\(filename)\""
        }
        let credentials = ["Authorization", "Cookie", "Proxy-Authorization"].filter { call.header($0) != nil }
        fields[HTTPField.Name("X-Received-Credentials")!] =
            credentials.isEmpty ? "none" : credentials.joined(separator: ", ")

        var first = 0
        var status = HTTPResponse.Status.ok
        let ignoresRange = call.queryValue("ignore_range") == "1"
        if !ignoresRange, let range = call.header("Range"), let (start, _) = BodyRoutes.parseRange(range, length: count)
        {
            let condition = call.header("If-Range")
            // A weak tag never matches, as RFC 9110 requires of `If-Range`.
            let matches =
                condition == nil || (condition == etag && etag?.hasPrefix("W/") == false)
                || (condition == modified && modified != nil)
            if matches {
                first = start + (call.queryValue("wrong_range") == "1" ? 1 : 0)
                status = .partialContent
                fields[.contentRange] = "bytes \(first)-\(count - 1)/\(count)"
            }
        } else if !ignoresRange, call.header("Range") != nil {
            fields[.contentRange] = "bytes */\(count)"
            return Response(status: .rangeNotSatisfiable, headers: fields)
        }
        let dropAfter = call.queryValue("drop_after").flatMap(Int.init)
        let start = first
        return Response(
            status: status, headers: fields,
            body: ResponseBody(contentLength: count - start) { writer in
                var offset = start
                var sent = 0
                while offset < count {
                    var chunk = min(64 * 1024, count - offset)
                    if let dropAfter { chunk = min(chunk, dropAfter - sent) }
                    if chunk <= 0 { throw CancellationError() }
                    try await writer.write(
                        ByteBuffer(bytes: SeededBytes.bytes(seed: seed, offset: offset, count: chunk)))
                    offset += chunk
                    sent += chunk
                }
                try await writer.finish(nil)
            })
    }
}
