import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import NIOCore
@testable import Bluebonnet
@testable import BluebonnetTestServer

/// One parser under fuzzing. Each must never crash, and each checks a property its parser promises: a violated
/// `precondition` is a crash libFuzzer keeps as an artifact.
enum FuzzTarget: String, CaseIterable {
    /// `Content-Type` charsets and byte order marks.
    case contentType = "content-type"
    /// MIME types and ranges: parsing and matching.
    case mimeMatching = "mime-matching"
    /// `URLEncodedFormEncoder` and `URLEncoding` of arbitrary keys and values, decoded back to what went in.
    case formRoundTrip = "form-round-trip"
    /// The image header reader on arbitrary bytes.
    case imageHeader = "image-header"
    /// The test server's multipart parser on arbitrary bodies.
    case multipartParts = "multipart-parts"
    /// A `Location` header turned into the next request.
    case redirectLocation = "redirect-location"
    /// A `WWW-Authenticate` field: parsed, then answered.
    case authChallenge = "auth-challenge"
    case eventStream = "event-stream"
    case downloadFilename = "download-filename"
    /// A `Set-Cookie` field stored from a URL, then sent back.
    case setCookie = "set-cookie"
    /// A response's caching fields: `Cache-Control` and the dates freshness is reckoned from.
    case cacheFreshness = "cache-freshness"
    /// Resume data read back from storage: refused clearly, or naming only a partial file the library made.
    case resumeData = "resume-data"
    /// The JSON-lines framer under `streamingDecodables`, however the body is cut into chunks.
    case jsonLines = "json-lines"
    /// Several responses' `Set-Cookie` fields stored as batches into one jar.
    case cookieBatches = "cookie-batches"
    /// A WebSocket server's bytes, after the upgrade, through the frame handling (compressed or not).
    case websocketFrames = "websocket-frames"
    /// A server's `Sec-WebSocket-Extensions` answer, and a compressed message inflated within a limit.
    case websocketExtensions = "websocket-extensions"
    /// A `Content-Encoding: zstd` body through `ZstdDecoder`, however it is cut into chunks.
    case zstdDecoding = "zstd-decoding"
    /// A brotli body decoded whole and in chunks its own bytes size: the same output and error, within a limit.
    case brotliDecoding = "brotli-decoding"

    /// The target named by `BLUEBONNET_FUZZ_TARGET`, read once.
    static let selected: FuzzTarget = {
        let name = ProcessInfo.processInfo.environment["BLUEBONNET_FUZZ_TARGET"] ?? ""
        guard let target = FuzzTarget(rawValue: name) else {
            fatalError("Set BLUEBONNET_FUZZ_TARGET to one of: \(allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return target
    }()

    func run(_ data: Data) {
        switch self {
        case .contentType: Self.contentType(data)
        case .mimeMatching: Self.mimeMatching(data)
        case .formRoundTrip: Self.formRoundTrip(data)
        case .imageHeader: Self.imageHeader(data)
        case .multipartParts: Self.multipartParts(data)
        case .redirectLocation: Self.redirectLocation(data)
        case .authChallenge: Self.authChallenge(data)
        case .eventStream: Self.eventStream(data)
        case .downloadFilename: Self.downloadFilename(data)
        case .setCookie: Self.setCookie(data)
        case .cacheFreshness: Self.cacheFreshness(data)
        case .resumeData: Self.resumeData(data)
        case .jsonLines: Self.jsonLines(data)
        case .cookieBatches: Self.cookieBatches(data)
        case .websocketFrames: Self.websocketFrames(data)
        case .websocketExtensions: Self.websocketExtensions(data)
        case .zstdDecoding: Self.zstdDecoding(data)
        case .brotliDecoding: Self.brotliDecoding(data)
        }
    }

    /// The first byte chooses compression (bit 0), the message limit (bits 1–3: 16 bytes to 256 KiB, in powers of 4) and
    /// how the rest is cut into reads (bits 4–7); the rest is the server's bytes. No message passes the limit, text is
    /// whole UTF-8, a close code heard is one a close frame may carry, and nothing is heard after the socket ended.
    private static func websocketFrames(_ data: Data) {
        guard let options = data.first else { return }
        let limit = 1 << (2 * Int((options >> 1) & 0x7) + 4)
        guard let harness = try? WebSocketFrameHarness(maximumMessageSize: limit, compression: options & 1 == 1) else {
            preconditionFailure("the harness did not start")
        }
        let bytes = Array(data.dropFirst())
        let step = max(1, Int(options >> 4) * 7)
        var index = 0
        while index < bytes.count {
            let end = min(bytes.count, index + step)
            let heardBefore = harness.sink.messages.count + harness.sink.closes.count
            let endedBefore = !harness.sink.ends.isEmpty
            harness.feed(Array(bytes[index..<end]))
            if endedBefore {
                precondition(harness.sink.messages.count + harness.sink.closes.count == heardBefore)
            }
            index = end
        }
        for message in harness.sink.messages {
            switch message {
            case let .data(payload): precondition(payload.count <= limit)
            case let .string(text): precondition(text.utf8.count <= limit)
            @unknown default: preconditionFailure("an unknown message")
            }
        }
        for close in harness.sink.closes {
            precondition(close.code == 1005 || WebSocketFrameHandler.isValidCloseCode(close.code))
            precondition(String(validating: close.reason, as: UTF8.self) != nil)
        }
        precondition(harness.sink.ends.count <= 1)
        _ = harness.written()
        harness.finish()
    }

    /// The first line is a `Sec-WebSocket-Extensions` answer; the rest, a compressed message inflated within 4 KiB.
    private static func websocketExtensions(_ data: Data) {
        let newline = data.firstIndex(of: 0x0A) ?? data.endIndex
        let answer = String(decoding: data[..<newline], as: UTF8.self)
        if (try? PerMessageDeflate.accepts([answer])) == true {
            precondition(answer.lowercased().contains("permessage-deflate"))
        }
        guard let deflate = try? PerMessageDeflate() else { preconditionFailure("zlib did not start") }
        let payload = ByteBuffer(bytes: data[newline...].dropFirst())
        for _ in 0..<2 {
            if let inflated = try? deflate.inflate(payload, limit: 4096) {
                precondition(inflated.readableBytes <= 4096)
            }
        }
        if let compressed = deflate.deflate(payload),
            let back = try? PerMessageDeflate().inflate(compressed, limit: Int.max)
        {
            precondition(back == payload, "a message did not survive compression")
        }
    }

    /// The first line is the URL's host, the rest `Set-Cookie` fields. Whatever is stored is within the limits, never
    /// on a public suffix other than the host itself, and sent back as a header with no line break or NUL.
    private static func setCookie(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let host = lines.first.map(String.init)?.lowercased() ?? ""
        guard let url = URL(string: "https://\(host)/a/b"), url.host != nil else { return }
        if let date = HTTPDate.parse(Substring(text)) { precondition(date.timeIntervalSince1970 >= -11_644_473_600) }
        for line in lines.dropFirst() {
            if let parsed = SetCookie(String(line)) {
                precondition(
                    !parsed.name.isEmpty
                        && parsed.name.utf8.count + parsed.value.utf8.count <= SetCookie.maximumNameAndValueLength)
            }
        }
        guard let storage = URLSessionConfiguration.ephemeral.httpCookieStorage else { return }
        let jar = CookieJar(storage: storage, sendsCookies: true, acceptPolicy: .always)
        let now = Date()
        jar.store(lines.dropFirst().map(String.init), from: url, mainDocumentURL: nil, now: now)
        let stored = storage.cookies ?? []
        precondition(stored.count <= CookieJar.maximumFieldsPerResponse)
        let canonical = CookieTarget(url)?.host ?? host
        for cookie in stored {
            let bare = CookieJar.bareDomain(cookie)
            precondition(
                bare == canonical || !PublicSuffixList.isPublicSuffix(bare), "a cookie for the public suffix \(bare)")
            precondition((cookie.expiresDate ?? .distantFuture) > now || cookie.expiresDate == nil)
        }
        if let header = jar.cookieHeader(for: url, now: now) {
            precondition(!header.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 })
        }
    }

    /// Lines of `Name: value` fields: the lifetime and the age are finite and never negative.
    private static func cacheFreshness(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        var headers: [[String]] = []
        for line in text.split(separator: "\n") {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.append([String(line[..<colon]), String(line[line.index(after: colon)...].trimmingWhitespace())])
        }
        let now = Date()
        let entry = CacheEntry(
            key: "GET http://example.com/", url: URL(string: "http://example.com/")!, statusCode: 200,
            headers: headers, protocolName: "http/1.1", varyValues: [:],
            requestTime: now.timeIntervalSince1970 - 1, responseTime: now.timeIntervalSince1970, bodyLength: 0)
        let lifetime = CacheFreshness.lifetime(of: entry)
        let age = CacheFreshness.currentAge(of: entry, now: now)
        precondition(lifetime.isFinite && lifetime >= 0 && age.isFinite && age >= 0)
        let control = CacheControl(entry.field("Cache-Control"), pragma: entry.field("Pragma"))
        precondition((control.maxAge ?? 0) >= 0 && (control.minFresh ?? 0) >= 0)
        _ = entry.httpResponse(age: Int(min(age, TimeInterval(Int32.max))))
        _ = CacheEntry.varyNames(entry.field("Vary"))
    }

    /// However the body is cut into chunks, the same events come out, or the same bound is hit.
    private static func eventStream(_ data: Data) {
        var whole = ServerSentEventParser()
        let expected = try? whole.parse(data)
        let split = data.isEmpty ? 0 : Int(data[data.startIndex]) % (data.count + 1)
        var pieces = ServerSentEventParser()
        let first = try? pieces.parse(data.prefix(split))
        let rest = try? pieces.parse(data.dropFirst(split))
        if let expected, let first, let rest {
            precondition(first + rest == expected, "chunking changed the events")
            precondition(whole.lastEventID == pieces.lastEventID && whole.reconnectionTime == pieces.reconnectionTime)
        }
    }

    /// Resume data is accepted only when it names one of the library's own partial files; its origin, when read,
    /// is a bare origin; and nothing but `DownloadResumeError` is thrown.
    private static func resumeData(_ data: Data) {
        do {
            let resume = try DownloadResumeData(data: data)
            let file = URL(fileURLWithPath: resume.file)
            precondition(DownloadFileWriter.isPartialFileName(file, in: DownloadFileWriter.defaultDirectory))
            precondition(FileStatus(of: file)?.isOwnPartialFile == true)
            if let origin = resume.originURL {
                precondition(origin.user == nil && (origin.path.isEmpty || origin.path == "/"))
            }
            let request = resume.resumingRequest()
            precondition(request.value(forHTTPHeaderField: "Range") == "bytes=\(resume.bytes)-")
        } catch {
            precondition(error is DownloadResumeError, "\(error)")
        }
    }

    /// The first byte picks a chunk size: the values framed are the same as from the whole body at once, no value
    /// holds a newline, and a value past the bound fails rather than grows.
    private static func jsonLines(_ data: Data) {
        let body = data.dropFirst()
        let size = max(1, Int(data.first ?? 1))
        func frames(_ chunks: [Data]) -> [Data]? {
            var framer = JSONValueFramer()
            var values: [Data] = []
            do {
                for chunk in chunks { values += try framer.frames(chunk, isComplete: { _ in false }) }
            } catch {
                return nil
            }
            if let last = framer.flush() { values.append(last) }
            return values
        }
        var chunks: [Data] = []
        var start = body.startIndex
        while start < body.endIndex {
            let end = body.index(start, offsetBy: size, limitedBy: body.endIndex) ?? body.endIndex
            chunks.append(Data(body[start..<end]))
            start = end
        }
        let whole = frames([Data(body)])
        let pieces = frames(chunks)
        precondition((whole == nil) == (pieces == nil) || body.count > JSONValueFramer.maximumLength)
        if let whole, let pieces { precondition(whole == pieces, "chunking changed the values") }
        for value in pieces ?? [] {
            precondition(!value.contains(UInt8(ascii: "\n")) && value.count <= JSONValueFramer.maximumLength)
        }
    }

    /// The first line is the host; responses' fields follow, separated by blank lines. After every batch the jar
    /// holds no two cookies of one identity and keeps its bounds.
    private static func cookieBatches(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard let host = lines.first?.lowercased(), let url = URL(string: "http://\(host)/p/q"), url.host != nil,
            let storage = URLSessionConfiguration.ephemeral.httpCookieStorage
        else { return }
        let jar = CookieJar(storage: storage, sendsCookies: true, acceptPolicy: .always)
        var response: [String] = []
        for line in lines.dropFirst() + [""] {
            guard line.isEmpty else {
                response.append(line)
                continue
            }
            jar.store(response, from: url, mainDocumentURL: nil)
            response = []
            let stored = storage.cookies ?? []
            precondition(Set(stored.map(CookieJar.key)).count == stored.count, "two cookies of one identity")
            precondition(stored.count <= CookieJar.maximumCookies)
            let site = CookieTarget(url)?.site ?? host
            precondition(
                stored.filter { CookieTarget.site(ofDomain: CookieJar.bareDomain($0)) == site }.count
                    <= CookieJar.maximumCookiesPerDomain)
        }
    }

    /// A suggested name never leaves its directory, hides itself, carries control characters or outgrows a name.
    private static func downloadFilename(_ data: Data) {
        let header = String(decoding: data, as: UTF8.self)
        guard let name = SuggestedFilename.fromContentDisposition(header).flatMap(SuggestedFilename.sanitised) else {
            return
        }
        precondition(!name.contains("/") && !name.contains("\\") && !name.hasPrefix(".") && !name.isEmpty)
        precondition(name.utf8.count <= SuggestedFilename.maximumLength)
        precondition(!name.unicodeScalars.contains(where: SuggestedFilename.isControlOrBidiFormatting))
    }

    private static func contentType(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        if let encoding = CharsetResolver.encoding(forContentType: text) {
            precondition(CharsetResolver.encodings.values.contains(encoding))
        }
        _ = CharsetResolver.encoding(forByteOrderMarkOf: data)
        let serializer = StringResponseSerializer()
        _ = try? serializer.serialize(request: nil, response: nil, data: data, error: nil)
    }

    private static func mimeMatching(_ data: Data) {
        let halves = String(decoding: data, as: UTF8.self).split(separator: "\n", maxSplits: 1).map(String.init)
        guard let first = halves.first, let range = MIMEType(first) else { return }
        // A type always matches itself, and the full wildcard matches everything.
        precondition(range.matches(range))
        precondition(MIMEType("*/*")!.matches(range))
        if halves.count == 2, let other = MIMEType(halves[1]) {
            _ = range.matches(other)
        }
    }

    private static func formRoundTrip(_ data: Data) {
        // NUL-separated key, value, key, value...
        let fields = String(decoding: data, as: UTF8.self).split(separator: "\u{0}", omittingEmptySubsequences: false)
            .map(String.init)
        var parameters: [String: String] = [:]
        for index in stride(from: 0, to: fields.count - 1, by: 2) { parameters[fields[index]] = fields[index + 1] }
        guard let query: String = try? URLEncodedFormEncoder().encode(parameters) else {
            preconditionFailure("a [String: String] always encodes")
        }
        precondition(decodeQuery(query) == parameters, "form encoder round trip: \(parameters) -> \(query)")
        var request = URLRequest(url: URL(string: "http://example.com/")!)
        request.httpMethod = "POST"
        guard let encoded = try? URLEncoding.httpBody.encode(request, with: parameters), let body = encoded.httpBody
        else {
            preconditionFailure("URLEncoding always encodes a [String: String]")
        }
        precondition(
            decodeQuery(String(decoding: body, as: UTF8.self)) == parameters, "URLEncoding round trip: \(parameters)")
    }

    private static func decodeQuery(_ query: String) -> [String: String] {
        var decoded: [String: String] = [:]
        guard !query.isEmpty else { return decoded }
        for pair in query.split(separator: "&", omittingEmptySubsequences: false) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            let key = parts[0].removingPercentEncoding ?? "\u{FFFD}invalid"
            decoded[key] = parts.count > 1 ? parts[1].removingPercentEncoding ?? "\u{FFFD}invalid" : ""
        }
        return decoded
    }

    private static func imageHeader(_ data: Data) {
        guard let header = try? ImageHeaderReader.read(data) else { return }
        precondition(header.width > 0 && header.height > 0 && header.frameCount > 0)
    }

    private static func multipartParts(_ data: Data) {
        let parts = MultipartParser.parse(data, boundary: "fuzz-boundary")
        precondition(parts.allSatisfy { $0.body.count <= data.count })
        _ = MultipartParser.boundary(from: String(decoding: data.prefix(256), as: UTF8.self))
    }

    private static func redirectLocation(_ data: Data) {
        let text = String(decoding: data, as: UTF8.self)
        let statuses = [301, 302, 303, 307, 308]
        let status = statuses[Int(data.first ?? 0) % statuses.count]
        var request = URLRequest(url: URL(string: "http://example.com:8080/a/b?c=d")!)
        request.httpMethod = data.count % 2 == 0 ? "POST" : "GET"
        request.setValue("Bearer secret", forHTTPHeaderField: "Authorization")
        guard
            let response = HTTPURLResponse(
                url: request.url!, statusCode: status, httpVersion: "HTTP/1.1",
                headerFields: ["Location": text])
        else { return }
        guard case let .success(next)? = RedirectRules.redirectedRequest(from: request, response: response) else {
            return
        }
        // Whatever the server wrote, the next hop is one the engine may connect to, and credentials stay home.
        guard let url = next.url else { preconditionFailure("a followed redirect has a URL") }
        precondition(RequestTarget.problem(with: url) == nil, "followed an invalid target: \(url)")
        if !Origin.same(request.url!, url) {
            precondition(next.value(forHTTPHeaderField: "Authorization") == nil, "credential crossed origins to \(url)")
        }
    }

    private static func authChallenge(_ data: Data) {
        let field = String(decoding: data, as: UTF8.self)
        let parser = AuthenticationChallengeParser()
        guard let challenges = try? parser.parse(field) else { return }
        precondition(challenges.count <= parser.maximumChallenges)
        for challenge in challenges {
            precondition(
                !challenge.scheme.isEmpty && HeaderValidator.isValidName(challenge.scheme), "scheme \(challenge.scheme)"
            )
            precondition(challenge.parameters.count <= parser.maximumParameters)
            precondition(challenge.parameters.allSatisfy { !$0.name.isEmpty && $0.name == $0.name.lowercased() })
        }
        // Whatever the server wrote, the answer is one header value: no byte of it can start another header.
        let request = URLRequest(url: URL(string: "http://example.com/p?q=1")!)
        guard
            let response = HTTPURLResponse(
                url: request.url!, statusCode: 401, httpVersion: "HTTP/1.1",
                headerFields: ["WWW-Authenticate": field])
        else { return }
        let responder = ChallengeResponder(
            requestCredential: URLCredential(user: "u", password: "p", persistence: .none), storage: nil)
        var hop = ChallengeResponder.HopState()
        if let answered = responder.answer(
            response, to: request, firstURL: request.url, bodyIsHashable: true, hop: &hop, logger: nil)
        {
            let value = answered.value(forHTTPHeaderField: "Authorization") ?? ""
            precondition(HeaderValidator.isValidValue(value), "an answer with a line break: \(value)")
        }
    }

    /// The first byte chooses how the rest, a zstd body, is cut: bit 7 set, one byte at a time; otherwise pieces of
    /// 1 to `4 × (bits 0–6 + 1)` bytes from a generator it seeds. The body is decoded whole and cut, under a 1 MiB
    /// window and a 1 MiB output limit: neither way passes the limit, and both give the same bytes and the same error.
    static func zstdDecoding(_ data: Data) {
        guard let options = data.first else { return }
        let body = Array(data.dropFirst())
        let limit = 1 << 20
        struct OverLimit: Error {}
        func decode(_ nextSize: () -> Int) -> (output: [UInt8], error: String?) {
            var decoder = ZstdDecoder(maximumWindowSize: 1 << 20)
            var output: [UInt8] = []
            do {
                try body.withUnsafeBytes { bytes in
                    var index = 0
                    repeat {
                        let end = min(bytes.count, index + max(1, nextSize()))
                        try decoder.decode(UnsafeRawBufferPointer(rebasing: bytes[index..<end])) { chunk in
                            guard output.count + chunk.count <= limit else { throw OverLimit() }
                            output.append(contentsOf: chunk)
                        }
                        index = end
                    } while index < bytes.count
                }
                try decoder.finish()
                return (output, nil)
            } catch {
                return (output, String(describing: error))
            }
        }
        let whole = decode { Int.max }
        var state = UInt64(options) &* 0x9E37_79B9_7F4A_7C15 | 1
        let largest = 4 * (Int(options & 0x7F) + 1)
        let cut = decode {
            if options & 0x80 != 0 { return 1 }
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(state >> 33) % largest + 1
        }
        precondition(whole.output.count <= limit && cut.output.count <= limit, "the output passed its limit")
        precondition(whole.output == cut.output, "cutting the body changed the decoded bytes")
        precondition(whole.error == cut.error, "cutting the body changed the error")
    }

    /// The body is a brotli stream, decoded whole and again in chunks of 1...64 bytes that its own bytes choose, with a
    /// 1 MiB output limit and a 4 MiB window limit. Both ways make the same output and end with the same error (or
    /// none); when one reaches the limit both do, and the shorter output begins the longer. No chunk handed over is
    /// longer than the decoder's output chunk, and nothing passes the limit.
    private static func brotliDecoding(_ data: Data) {
        let stream = [UInt8](data)
        let limit = 1 << 20
        let whole = decodeBrotli(stream, limit: limit) { _ in stream.count }
        let split = decodeBrotli(stream, limit: limit) { index in 1 + Int(stream[index % stream.count] & 0x3F) }
        precondition(whole.output.count <= limit && split.output.count <= limit, "output passed the limit")
        if whole.reachedLimit || split.reachedLimit {
            precondition(whole.reachedLimit && split.reachedLimit, "only one chunking reached the output limit")
            let common = min(whole.output.count, split.output.count)
            precondition(whole.output.prefix(common) == split.output.prefix(common), "chunking changed the output")
        } else {
            precondition(whole.output == split.output, "chunking changed the output")
            precondition(whole.error == split.error, "chunking changed the error")
        }
    }

    private struct BrotliOutputLimit: Error {}

    /// Decodes `stream` in chunks of the sizes `size(start)` gives, stopping at `limit` output bytes.
    private static func decodeBrotli(
        _ stream: [UInt8], limit: Int, size: (Int) -> Int
    ) -> (output: [UInt8], error: ContentDecodingError?, reachedLimit: Bool) {
        var decoder = BrotliDecoder(maximumWindowSize: 4 << 20)
        var output: [UInt8] = []
        var start = 0
        do {
            while start < stream.count {
                let end = min(stream.count, start + max(1, size(start)))
                try stream[start..<end].withUnsafeBytes { chunk in
                    try decoder.decode(chunk) { piece in
                        precondition(piece.count <= BrotliDecoder.outputChunk, "an output chunk is too long")
                        guard output.count + piece.count <= limit else { throw BrotliOutputLimit() }
                        output.append(contentsOf: piece)
                    }
                }
                start = end
            }
            try decoder.finish()
        } catch is BrotliOutputLimit {
            return (output, nil, true)
        } catch let error as ContentDecodingError {
            return (output, error, false)
        } catch {
            preconditionFailure("the brotli decoder threw \(error)")
        }
        return (output, nil, false)
    }
}
