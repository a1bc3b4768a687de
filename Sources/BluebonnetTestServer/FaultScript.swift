import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// One misbehaviour of the fault server, chosen by the request's path; parameters come from the query.
///
/// | path | what the server does |
/// |---|---|
/// | `/head-then-close` | declares 100 bytes, sends the head, closes |
/// | `/close-mid-body` | declares 1000 bytes, sends 400, closes |
/// | `/chunked-truncated` | one chunk, then closes without the last chunk |
/// | `/chunked-malformed` | a chunk size that is not hexadecimal |
/// | `/reset?phase=before-head\|after-head\|mid-body` | resets the connection (RST) at that point |
/// | `/silent` | never answers |
/// | `/drip?bytes=N&interval_ms=M` | declares N bytes and sends one every M ms |
/// | `/huge-head?kb=N` | a head of N KiB of header lines |
/// | `/many-headers?count=N` | N header lines |
/// | `/endless` | a chunked body that never ends |
/// | `/declared?length=N` | declares N bytes and sends bytes until the peer leaves |
/// | `/gzip?kind=zeros\|sparse&mib=N` | a gzip body of N MiB decoded: zeros (ratio ~1000), or sparse (ratio ~20) |
/// | `/status-line?line=L` | the raw status line `L` |
/// | `/content-length?value=V[&value=W]` | `Content-Length: V` (twice when two values) and 5 bytes of body |
/// | `/redirect?location=L&status=S` | status `S` (302) with the raw `Location: L` |
/// | `/informational?count=N&final=1` | N `100 Continue` heads, then a final 200 when `final=1` |
/// | `/interim?count=N&interval_ms=M` | a `102 Processing` head every M ms, N times, then a final 200 |
/// | `/partial-status-line` | `HTTP/1.1 200` without its line end, then nothing |
/// | `/flaky?key=K&failures=N&fail=close\|reset\|S&retry_after=V` | the first N requests with key K fail (closed or reset mid-body, or status S with `Retry-After: V` when given), later ones get 200 `{"attempt":n}` |
struct FaultScript {
    let path: String
    let query: [String: [String]]

    init(target: String) {
        let components = URLComponents(string: target)
        path = components?.path ?? target
        var query: [String: [String]] = [:]
        for item in components?.queryItems ?? [] { query[item.name, default: []].append(item.value ?? "") }
        self.query = query
    }

    private func int(_ name: String, default value: Int, in range: ClosedRange<Int>) -> Int {
        query[name]?.first.flatMap(Int.init).map { min(max($0, range.lowerBound), range.upperBound) } ?? value
    }

    func run(on writer: FaultWriter) {
        switch path {
        case "/head-then-close":
            writer.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n", then: .close)
        case "/close-mid-body":
            writer.write(
                "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + String(repeating: "x", count: 400), then: .close)
        case "/chunked-truncated":
            writer.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n", then: .close)
        case "/chunked-malformed":
            writer.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n")
        case "/reset":
            reset(phase: query["phase"]?.first ?? "before-head", writer: writer)
        case "/silent":
            break
        case "/interim":
            let count = int("count", default: 20, in: 0...10_000)
            let interval = TimeAmount.milliseconds(Int64(int("interval_ms", default: 100, in: 1...10_000)))
            interim(remaining: count, interval: interval, writer: writer)
        case "/partial-status-line":
            writer.write("HTTP/1.1 200")
        case "/stall-mid-body":
            // 400 of 1,000 bytes, then nothing, with the connection left open.
            writer.write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + String(repeating: "x", count: 400))
        case "/drip":
            let count = int("bytes", default: 50, in: 1...100_000)
            let interval = TimeAmount.milliseconds(Int64(int("interval_ms", default: 100, in: 1...10_000)))
            writer.write("HTTP/1.1 200 OK\r\nContent-Length: \(count)\r\n\r\n")
            drip(remaining: count, interval: interval, writer: writer)
        case "/huge-head":
            // Streamed a KiB line at a time, so the server's own memory stays flat however large the head.
            let kilobytes = int("kb", default: 1024, in: 1...1_048_576)
            let line = Array(("X-Filler: " + String(repeating: "f", count: 1012) + "\r\n").utf8)
            writer.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n")
            repeatWrite(line, times: kilobytes, writer: writer) { writer.write("\r\nok") }
        case "/many-headers":
            let count = int("count", default: 10_000, in: 1...1_000_000)
            let lines = (0..<count).map { "X-H\($0): v\r\n" }.joined()
            writer.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n" + lines + "\r\nok")
        case "/endless":
            writer.write(
                "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
            endless(writer: writer, chunked: true)
        case "/declared":
            let length = query["length"]?.first.flatMap(Int64.init) ?? 1 << 40
            writer.write(
                "HTTP/1.1 200 OK\r\nContent-Type: application/octet-stream\r\nContent-Length: \(length)\r\n\r\n")
            endless(writer: writer, chunked: false)
        case "/gzip":
            let megabytes = int("mib", default: 256, in: 1...4096)
            let kind = query["kind"]?.first ?? "zeros"
            // Compressing takes seconds: on NIO's thread pool, so the event loop (shared with the client under test)
            // only writes.
            NIOThreadPool.singleton.runIfActive(eventLoop: writer.eventLoop) {
                GzipBombs.body(kind: kind, mebibytes: megabytes)
            }.whenSuccess { body in
                writer.write(
                    "HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
                )
                writer.write(body, then: .close)
            }
        case "/status-line":
            let line = query["line"]?.first ?? "HTTP/1.1 abc OK"
            writer.write(line + "\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok", then: .close)
        case "/content-length":
            let lines = (query["value"] ?? ["-1"]).map { "Content-Length: \($0)\r\n" }.joined()
            writer.write("HTTP/1.1 200 OK\r\n" + lines + "Connection: close\r\n\r\nhello", then: .close)
        case "/redirect":
            let status = int("status", default: 302, in: 300...399)
            let location = query["location"]?.first ?? "/"
            writer.write(
                "HTTP/1.1 \(status) Found\r\nLocation: \(location)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                then: .close)
        case "/flaky":
            flaky(writer: writer)
        case "/informational":
            let count = int("count", default: 1000, in: 0...1_000_000)
            let heads = String(repeating: "HTTP/1.1 100 Continue\r\n\r\n", count: count)
            let final =
                query["final"]?.first == "1"
                ? "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok" : ""
            writer.write(heads + final)
        default:
            writer.write("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", then: .close)
        }
    }

    /// Fails the first `failures` requests of a key, then succeeds: the retry tests' peer. Each request counts once.
    private func flaky(writer: FaultWriter) {
        let key = query["key"]?.first ?? ""
        let failures = int("failures", default: 1, in: 0...1_000)
        let attempt = writer.stats.attempt(key: key)
        guard attempt > failures else {
            switch query["fail"]?.first ?? "close" {
            case "close":
                writer.write(
                    "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + String(repeating: "x", count: 300), then: .close
                )
            case "reset":
                writer.write(
                    "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + String(repeating: "x", count: 300), then: .reset
                )
            case let status:
                let code = Int(status).map { min(max($0, 400), 599) } ?? 503
                let retryAfter = query["retry_after"]?.first.map { "Retry-After: \($0)\r\n" } ?? ""
                writer.write(
                    "HTTP/1.1 \(code) Failing\r\n\(retryAfter)Content-Length: 4\r\nConnection: close\r\n\r\nfail",
                    then: .close)
            }
            return
        }
        let body = "{\"attempt\":\(attempt)}"
        writer.write(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n"
                + body,
            then: .close)
    }

    private func reset(phase: String, writer: FaultWriter) {
        switch phase {
        case "after-head":
            writer.write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n", then: .reset)
        case "mid-body":
            writer.write(
                "HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n" + String(repeating: "x", count: 300), then: .reset)
        default:
            writer.reset()
        }
    }

    /// A `102 Processing` head every `interval`, then the final response.
    private func interim(remaining: Int, interval: TimeAmount, writer: FaultWriter) {
        guard remaining > 0 else {
            writer.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok", then: .close)
            return
        }
        writer.after(interval) {
            writer.write("HTTP/1.1 102 Processing\r\n\r\n").whenSuccess {
                interim(remaining: remaining - 1, interval: interval, writer: writer)
            }
        }
    }

    private func drip(remaining: Int, interval: TimeAmount, writer: FaultWriter) {
        guard remaining > 0 else { return }
        writer.after(interval) {
            writer.write("x").whenSuccess { drip(remaining: remaining - 1, interval: interval, writer: writer) }
        }
    }

    /// Writes 64 KiB at a time, each once the last was written, until the peer goes: back-pressure, not a flood
    /// of buffered writes in the server.
    private func endless(writer: FaultWriter, chunked: Bool) {
        let payload = [UInt8](repeating: UInt8(ascii: "e"), count: 64 * 1024)
        let frame = chunked ? Array("10000\r\n".utf8) + payload + Array("\r\n".utf8) : payload
        repeatWrite(frame, times: .max, writer: writer) {}
    }

    /// Writes `piece` `times` times, 64 of them per write and each write once the last was written, then calls
    /// `then`; stops when the peer goes.
    private func repeatWrite(_ piece: [UInt8], times: Int, writer: FaultWriter, then: @escaping @Sendable () -> Void) {
        let batch = max(1, 64 * 1024 / max(piece.count, 1))
        let batchBytes = Array([[UInt8]](repeating: piece, count: batch).joined())
        @Sendable func next(_ remaining: Int) {
            guard remaining > 0 else { return then() }
            let bytes = remaining >= batch ? batchBytes : Array(batchBytes.prefix(remaining * piece.count))
            writer.write(bytes).whenSuccess { next(remaining - min(remaining, batch)) }
        }
        next(times)
    }
}

/// Compression bombs made once per kind and size, and kept for the server's life.
enum GzipBombs {
    private static let cache = NIOLockedValueBox<[String: [UInt8]]>([:])

    /// The gzip of `mebibytes` MiB: `zeros` compresses about 1000 to 1; `sparse` (8 varying bytes in every 256)
    /// about 20 to 1, under any ratio limit, so only a size limit stops it.
    static func body(kind: String, mebibytes: Int) -> [UInt8] {
        let key = "\(kind)-\(mebibytes)"
        if let cached = cache.withLockedValue({ $0[key] }) { return cached }
        var block = [UInt8](repeating: 0, count: 64 * 1024)
        if kind == "sparse" {
            var seed: UInt32 = 0x9E37_79B9
            for line in stride(from: 0, to: block.count, by: 256) {
                for offset in 0..<8 {
                    seed = seed &* 1_664_525 &+ 1_013_904_223
                    block[line + offset] = UInt8(truncatingIfNeeded: seed >> 24)
                }
            }
        }
        let body = [UInt8](Zlib.gzip(repeating: Data(block), count: mebibytes * 16) ?? Data())
        cache.withLockedValue { $0[key] = body }
        return body
    }
}
