import Foundation
import HTTPTypes
import Hummingbird
import NIOCore

/// Routes that shape the body in time or size: `/bytes`, `/stream`, `/delay`, `/range`, `/drip`, `/chunked`, and
/// the fault route `/truncated`.
enum BodyRoutes {
    static let maximumBytes = 256 * 1024 * 1024

    static func respond(_ call: HTTPBinCall, kind: String, argument: String?) async throws -> Response {
        switch kind {
        case "delay":
            guard let argument, let seconds = Double(argument), seconds >= 0 else {
                return HTTPBinResponses.badRequest("Invalid delay")
            }
            try await Task.sleep(nanoseconds: UInt64(min(seconds, 10) * 1_000_000_000))
            return HTTPBinResponses.json(call.bodyEcho)
        case "bytes":
            guard let count = argument.flatMap(Int.init), (0...maximumBytes).contains(count) else {
                return HTTPBinResponses.badRequest("Invalid byte count")
            }
            let seed = call.queryValue("seed").flatMap(UInt64.init) ?? UInt64.random(in: 0...UInt64.max)
            return streamed(count: count, contentType: "application/octet-stream", chunk: 64 * 1024) { offset, length in
                SeededBytes.bytes(seed: seed, offset: offset, count: length)
            }
        case "chunked":
            guard let count = argument.flatMap(Int.init), (0...maximumBytes).contains(count) else {
                return HTTPBinResponses.badRequest("Invalid byte count")
            }
            return streamed(count: count, contentType: "application/octet-stream", chunk: 1024, declareLength: false) {
                offset, length in
                Data((offset..<offset + length).map { UInt8(truncatingIfNeeded: $0) })
            }
        case "truncated":
            // Declares `n` bytes, sends half, then drops the connection: a download cut short.
            guard let count = argument.flatMap(Int.init), count >= 2 else {
                return HTTPBinResponses.badRequest("Invalid byte count")
            }
            var fields = HTTPFields()
            fields[.contentType] = "application/octet-stream"
            return Response(
                status: .ok, headers: fields,
                body: ResponseBody(contentLength: count) { writer in
                    try await writer.write(ByteBuffer(repeating: UInt8(ascii: "x"), count: count / 2))
                    throw CancellationError()
                })
        case "stream":
            guard let lines = argument.flatMap(Int.init), lines >= 0 else {
                return HTTPBinResponses.badRequest("Invalid line count")
            }
            var echo = call.getEcho
            let rendered: [Data] = (0..<min(lines, 100)).map { index in
                echo["id"] = index
                return ((try? JSONSerialization.data(withJSONObject: echo, options: [.sortedKeys])) ?? Data())
                    + Data("\n".utf8)
            }
            var fields = HTTPFields()
            fields[.contentType] = "application/json"
            return Response(
                status: .ok, headers: fields,
                body: ResponseBody { writer in
                    for line in rendered {
                        try await writer.write(ByteBuffer(bytes: line))
                    }
                    try await writer.finish(nil)
                })
        case "range":
            return range(call, argument: argument)
        case "download":
            return ResumableDownloadRoute.respond(call, argument: argument)
        case "slices":
            return slices(call)
        case "drip":
            return drip(call)
        default:
            return HTTPBinResponses.notFound()
        }
    }

    /// A body of `count` bytes written in chunks, with or without `Content-Length`.
    static func streamed(
        count: Int,
        contentType: String,
        chunk: Int,
        declareLength: Bool = true,
        bytes: @escaping @Sendable (_ offset: Int, _ length: Int) -> Data
    ) -> Response {
        var fields = HTTPFields()
        fields[.contentType] = contentType
        let body = ResponseBody(contentLength: declareLength ? count : nil) { writer in
            var offset = 0
            while offset < count {
                let length = min(chunk, count - offset)
                try await writer.write(ByteBuffer(bytes: bytes(offset, length)))
                offset += length
            }
            try await writer.finish(nil)
        }
        return Response(status: .ok, headers: fields, body: body)
    }

    static func range(_ call: HTTPBinCall, argument: String?) -> Response {
        guard let count = argument.flatMap(Int.init), (0...102_400).contains(count) else {
            return HTTPBinResponses.badRequest("Invalid range size")
        }
        let alphabet = Array("abcdefghijklmnopqrstuvwxyz".utf8)
        let all = Data((0..<count).map { alphabet[$0 % alphabet.count] })
        let common = [("Accept-Ranges", "bytes"), ("ETag", "range\(count)")]
        guard let header = call.header("Range") else {
            return HTTPBinResponses.bytes(all, contentType: "application/octet-stream", headers: common)
        }
        guard let (first, last) = parseRange(header, length: count) else {
            return HTTPBinResponses.empty(
                status: HTTPResponse.Status(code: 416), headers: common + [("Content-Range", "bytes */\(count)")])
        }
        return HTTPBinResponses.bytes(
            all[first...last], contentType: "application/octet-stream", status: HTTPResponse.Status(code: 206),
            headers: common + [("Content-Range", "bytes \(first)-\(last)/\(count)")])
    }

    /// `bytes=a-b`, `bytes=a-` or `bytes=-n`, clamped to the length; `nil` when unsatisfiable.
    static func parseRange(_ header: String, length: Int) -> (Int, Int)? {
        guard header.hasPrefix("bytes="), length > 0 else { return nil }
        let spec = header.dropFirst("bytes=".count).split(separator: ",").first.map(String.init) ?? ""
        let parts = spec.split(separator: "-", maxSplits: 1, omittingEmptySubsequences: false).map {
            $0.trimmingCharacters(in: .whitespaces)
        }
        guard parts.count == 2 else { return nil }
        if parts[0].isEmpty {
            guard let suffix = Int(parts[1]), suffix > 0 else { return nil }
            return (max(0, length - suffix), length - 1)
        }
        guard let first = Int(parts[0]), first < length else { return nil }
        let last = parts[1].isEmpty ? length - 1 : min(Int(parts[1]) ?? -1, length - 1)
        guard last >= first else { return nil }
        return (first, last)
    }

    /// `/slices?size=k&delay_ms=d`: the request body back in `k`-byte writes `d` ms apart (1 by default), so each
    /// arrives as a chunk of its own and values straddle chunks wherever `k` cuts them.
    static func slices(_ call: HTTPBinCall) -> Response {
        let size = call.queryValue("size").flatMap(Int.init) ?? 1
        let delay = call.queryValue("delay_ms").flatMap(UInt64.init) ?? 1
        guard size > 0, delay <= 1000 else { return HTTPBinResponses.badRequest("Invalid slices") }
        let body = call.body
        var fields = HTTPFields()
        fields[.contentType] = call.queryValue("content_type") ?? "application/octet-stream"
        return Response(
            status: .ok, headers: fields,
            body: ResponseBody { writer in
                var offset = body.startIndex
                while offset < body.endIndex {
                    let end = min(offset + size, body.endIndex)
                    try await writer.write(ByteBuffer(bytes: body[offset..<end]))
                    offset = end
                    try await Task.sleep(nanoseconds: delay * 1_000_000)
                }
                try await writer.finish(nil)
            })
    }

    static func drip(_ call: HTTPBinCall) -> Response {
        let duration = call.queryValue("duration").flatMap(Double.init) ?? 2
        let count = call.queryValue("numbytes").flatMap(Int.init) ?? 10
        let code = call.queryValue("code").flatMap(Int.init) ?? 200
        let delay = call.queryValue("delay").flatMap(Double.init) ?? 0
        guard count > 0, count <= 10 * 1024 * 1024, duration >= 0, delay >= 0 else {
            return HTTPBinResponses.badRequest("Invalid drip")
        }
        var fields = HTTPFields()
        fields[.contentType] = "application/octet-stream"
        let pause = UInt64(min(duration, 30) / Double(count) * 1_000_000_000)
        return Response(
            status: HTTPResponse.Status(code: code), headers: fields,
            body: ResponseBody(contentLength: count) { writer in
                if delay > 0 { try await Task.sleep(nanoseconds: UInt64(min(delay, 10) * 1_000_000_000)) }
                for _ in 0..<count {
                    try await writer.write(ByteBuffer(string: "*"))
                    if pause > 0 { try await Task.sleep(nanoseconds: pause) }
                }
                try await writer.finish(nil)
            })
    }
}

/// Deterministic bytes for `/bytes/{n}?seed=`: SplitMix64 keyed by the seed and the 8-byte block index, so any
/// chunk can be made without the ones before it.
public enum SeededBytes {
    /// The `count` bytes at `offset` of the body seeded with `seed`, so a test can check what it downloaded.
    ///
    /// - Parameters:
    ///   - seed:   The seed.
    ///   - offset: The first byte's position.
    ///   - count:  How many bytes.
    /// - Returns: The bytes.
    public static func bytes(seed: UInt64, offset: Int, count: Int) -> Data {
        var bytes = [UInt8](repeating: 0, count: count)
        for index in 0..<count {
            let position = offset + index
            let word = mix(seed &+ UInt64(position / 8) &* 0x9E37_79B9_7F4A_7C15)
            bytes[index] = UInt8(truncatingIfNeeded: word >> (UInt64(position % 8) * 8))
        }
        return Data(bytes)
    }

    static func mix(_ value: UInt64) -> UInt64 {
        var z = value &+ 0x9E37_79B9_7F4A_7C15
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
