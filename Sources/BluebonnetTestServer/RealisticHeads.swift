import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// The response heads `/json-array/{n}?head=` puts around the same document: what real servers send, so a client's
/// cost per header field shows in the benchmarks (the test server's own head has four fields).
///
/// `Server` and `Date` sit where nginx puts them; the server's framework writes its own values over them (its name,
/// and the current date in the same format), in place.
enum RealisticHead: String, CaseIterable, Sendable {
    /// The eight fields nginx 1.22 sends for a static JSON file, in its order: `Server`, `Date`, `Content-Type`,
    /// `Content-Length`, `Last-Modified`, `Connection`, `ETag`, `Accept-Ranges`.
    case nginx
    /// Fifteen fields: nginx's eight and seven an API adds (`Cache-Control`, `Vary`, `X-Request-Id`,
    /// `Strict-Transport-Security`, `X-Content-Type-Options`, `X-Frame-Options`, `Access-Control-Allow-Origin`), in
    /// the order nginx sends them for `/api/small.json` in `Benchmarks/run.sh`.
    case api

    /// When the served document last changed, as nginx would read it from the file: a fixed moment, so the head's
    /// length never varies.
    static let lastModified: time_t = 1_764_000_000

    /// The response: `body` as `application/json` under this head.
    func response(_ body: Data) -> Response {
        var fields: [(String, String)] = [
            ("Server", "BluebonnetTestServer"),
            ("Date", Self.imfFixdate(time(nil))),
            ("Content-Type", "application/json"),
            ("Content-Length", String(body.count)),
            ("Last-Modified", Self.imfFixdate(Self.lastModified)),
            ("Connection", "keep-alive"),
            // nginx's entity tag: the file's modification time and length in hexadecimal.
            ("ETag", "\"\(String(Self.lastModified, radix: 16))-\(String(body.count, radix: 16))\""),
        ]
        if self == .api {
            // Where nginx puts `add_header`'s fields: after the entity tag, before `Accept-Ranges`.
            fields += [
                ("Cache-Control", "private, max-age=0, must-revalidate"),
                ("Vary", "Accept-Encoding, Origin"),
                // nginx's `$request_id`: 32 hexadecimal digits, different for every request.
                ("X-Request-Id", Self.requestID()),
                ("Strict-Transport-Security", "max-age=31536000; includeSubDomains"),
                ("X-Content-Type-Options", "nosniff"),
                ("X-Frame-Options", "DENY"),
                ("Access-Control-Allow-Origin", "*"),
            ]
        }
        fields.append(("Accept-Ranges", "bytes"))
        var headers = HTTPFields()
        for (name, value) in fields {
            if let name = HTTPField.Name(name) { headers.append(HTTPField(name: name, value: value)) }
        }
        return Response(status: .ok, headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: body)))
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT` (RFC 9110's IMF-fixdate), always 29 characters.
    static func imfFixdate(_ seconds: time_t) -> String {
        var moment = tm()
        var clock = seconds
        gmtime_r(&clock, &moment)
        let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(moment.tm_wday)]), \(two(moment.tm_mday)) \(months[Int(moment.tm_mon)]) "
            + "\(moment.tm_year + 1900) \(two(moment.tm_hour)):\(two(moment.tm_min)):\(two(moment.tm_sec)) GMT"
    }

    /// 16 random bytes in hexadecimal, as nginx's `$request_id`.
    static func requestID() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let word = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - word.count) + word
        }.joined()
    }
}
