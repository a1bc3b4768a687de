import BluebonnetTestServer
import Foundation
import XCTest

/// `bonnet` never loses a byte of the user's data (issue 31, data safety), run against the test server.
extension BonnetCommandTests {
    private func bytes(of path: String) -> Data? { FileManager.default.contents(atPath: path) }

    /// Files in `directory` bonnet left beside its target (`.NAME.bonnet-UUID.part`).
    private func leftovers(in directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).filter { $0.hasSuffix(".part") }
    }

    /// 1: `-c -o f` when `f` is already whole (the server answers 416) deleted `f` and exited 0.
    func testContinueOfACompleteFileKeepsItAndSaysSo() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.url.appendingPathComponent("whole.bin").path
        let expected = SeededBytes.bytes(seed: 40, offset: 0, count: 5000)
        XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: expected))
        let run = try await bonnet(["-c", "-o", file, url("/download/5000?seed=40")])
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertTrue(run.errors.contains("416"), run.errors)
        XCTAssertTrue(run.errors.contains("complete"), run.errors)
        XCTAssertEqual(bytes(of: file), expected)
        XCTAssertEqual(leftovers(in: directory.url), [])
    }

    /// 2: `-o f` over an existing file when the server answers 4xx/5xx deleted `f`.
    func testAnErrorStatusLeavesAnExistingFileAsItWasAndExitsWithTheStatusClass() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.url.appendingPathComponent("precious.txt").path
        let precious = Data("the user's own words\n".utf8)
        for (status, code) in [(404, Int32(4)), (500, Int32(5))] {
            XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: precious))
            let run = try await bonnet(["-o", file, url("/status/\(status)")])
            XCTAssertEqual(run.status, code, run.errors)
            XCTAssertTrue(run.errors.contains("nothing saved"), run.errors)
            XCTAssertEqual(bytes(of: file), precious, "\(status)")
        }
        XCTAssertEqual(leftovers(in: directory.url), [])
    }

    /// 2: an existing file is replaced only by a complete body, and one cut short leaves it whole.
    func testAnExistingFileIsReplacedOnlyByACompleteBody() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.url.appendingPathComponent("report.bin").path
        let precious = Data("old report\n".utf8)
        XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: precious))
        let cut = try await bonnet(["-o", file, url("/download/300000?seed=41&drop_after=100000")])
        XCTAssertEqual(cut.status, 1, cut.errors)
        XCTAssertEqual(bytes(of: file), precious, "a cut download never replaces the file")
        let whole = try await bonnet(["-o", file, url("/download/300000?seed=41")])
        XCTAssertEqual(whole.status, 0, whole.errors)
        XCTAssertEqual(bytes(of: file), SeededBytes.bytes(seed: 41, offset: 0, count: 300_000))
        XCTAssertEqual(leftovers(in: directory.url), [])
    }

    /// 3: `-c -o part` when a 5xx answers the resume deleted the partial file.
    func testAnErrorStatusToAResumeKeepsThePartialFile() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.url.appendingPathComponent("part.bin").path
        let partial = SeededBytes.bytes(seed: 42, offset: 0, count: 70_000)
        XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: partial))
        let run = try await bonnet(["-c", "-o", file, url("/status/503")])
        XCTAssertEqual(run.status, 5, run.errors)
        XCTAssertEqual(bytes(of: file), partial)
        XCTAssertEqual(leftovers(in: directory.url), [])
    }

    /// 4: a resume cut again discarded what it received; now it is appended, so repeated `-c` converges.
    func testAResumeCutAgainKeepsWhatArrivedAndRepeatedContinueConverges() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.url.appendingPathComponent("big.bin").path
        let expected = SeededBytes.bytes(seed: 43, offset: 0, count: 300_000)
        XCTAssertTrue(FileManager.default.createFile(atPath: file, contents: expected.prefix(100_000)))
        // Each resume is cut after 60,000 more bytes: 100,000 → 160,000 → 220,000 → 280,000 → whole.
        var sizes: [Int] = []
        for _ in 0..<6 {
            let run = try await bonnet(["-c", "-o", file, url("/download/300000?seed=43&drop_after=60000")])
            let size = bytes(of: file)?.count ?? -1
            sizes.append(size)
            if run.status == 0 { break }
            XCTAssertEqual(run.status, 1, run.errors)
            XCTAssertTrue(run.errors.contains("--continue"), run.errors)
        }
        XCTAssertEqual(sizes, [160_000, 220_000, 280_000, 300_000])
        XCTAssertEqual(bytes(of: file), expected)
        XCTAssertEqual(leftovers(in: directory.url), [])
    }

    /// 7: piped stdin was silently dropped when there were data items.
    /// 6, in-process: a reader that goes away ends the command at once, quietly, with 141 (a download of 4 MB is not
    /// read to its end for 10 bytes).
    func testAReaderThatGoesAwayEndsTheCommandQuietly() async throws {
        for flags in [["--stream"], []] {
            let run = try await bonnet(flags + [url("/bytes/4000000?seed=45")], closeOutputAfter: 10)
            XCTAssertEqual(run.status, 141, "\(flags): \(run.errors)")
            XCTAssertEqual(run.errors, "", "\(flags)")
            XCTAssertEqual(run.data, SeededBytes.bytes(seed: 45, offset: 0, count: 10), "\(flags)")
        }
    }

    func testPipedStdinWithDataItemsIsRefused() async throws {
        let run = try await bonnet(["POST", url("/post"), "a=1"], stdin: Data("hi\n".utf8))
        XCTAssertEqual(run.status, 1, run.errors)
        XCTAssertTrue(run.errors.contains("cannot be mixed"), run.errors)
        XCTAssertTrue(run.errors.contains("--ignore-stdin"), run.errors)
        let ignored = try await bonnet(["--ignore-stdin", "POST", url("/post"), "a=1"], stdin: Data("hi\n".utf8))
        XCTAssertEqual(ignored.status, 0, ignored.errors)
        // An empty stdin is no body: nothing to mix.
        let empty = try await bonnet(["POST", url("/post"), "a=1"], stdin: Data())
        XCTAssertEqual(empty.status, 0, empty.errors)
    }

    /// 8: repeated headers kept only the last; repeated form fields kept the last, sorted.
    func testRepeatedHeadersAndFormFieldsAreAllSentInOrder() async throws {
        let headers = try await bonnet([
            "--no-color", "--body", url("/headers"), "X-M:a", "X-M:b", "Cookie:x=1", "Cookie:y=2",
        ])
        XCTAssertEqual(headers.status, 0, headers.errors)
        XCTAssertTrue(headers.output.contains("\"X-M\" : \"a, b\""), headers.output)
        XCTAssertTrue(headers.output.contains("\"Cookie\" : \"x=1; y=2\""), headers.output)
        let form = try await bonnet(["--offline", "--form", "POST", "http://example.com/post", "z=1", "a=2", "z=3"])
        XCTAssertEqual(form.status, 0, form.errors)
        XCTAssertTrue(form.output.contains("z=1&a=2&z=3"), form.output)
    }

    /// 10: the formatter dropped repeated JSON keys and respelled numbers (`1.0` as `1`).
    func testFormattedJSONShowsWhatTheServerSent() async throws {
        let body = #"{"b":1.0,"a":2,"a":3,"n":[1e3,-0.50]}"#
        let encoded = Data(body.utf8).base64EncodedString().replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
        for sorting in ["--sorted", "--unsorted"] {
            let run = try await bonnet(["--no-color", "--pretty=format", sorting, "--body", url("/base64/\(encoded)")])
            XCTAssertEqual(run.status, 0, run.errors)
            XCTAssertTrue(run.output.contains("\"b\" : 1.0"), run.output)
            XCTAssertTrue(run.output.contains("\"a\" : 2,\n  \"a\" : 3"), run.output)
            XCTAssertTrue(run.output.contains("1e3,\n    -0.50"), run.output)
        }
        let sorted = try await bonnet(["--no-color", "--pretty=format", "--body", url("/base64/\(encoded)")])
        XCTAssertLessThan(
            try XCTUnwrap(sorted.output.range(of: "\"a\" : 2")).lowerBound,
            try XCTUnwrap(sorted.output.range(of: "\"b\"")).lowerBound)
    }

    /// 10: repeated response fields were merged into one comma-joined line.
    func testRepeatedResponseFieldsAreShownApart() async throws {
        let run = try await bonnet([
            "--no-color", "--headers", url("/response-headers?Set-Cookie=a%3D1&Set-Cookie=b%3D2"),
        ])
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertTrue(run.output.contains("Set-Cookie: a=1\n"), run.output)
        XCTAssertTrue(run.output.contains("Set-Cookie: b=2"), run.output)
    }

    /// 9: `--offline` printed LF line ends, a `# URL` comment and a summary of a multipart body, so it could not be
    /// replayed; `-v` and `--offline` omitted the `Content-Length` sent. Now the bytes are the request's, and sent
    /// as they are to the server they make the same request.
    func testOfflineOutputIsTheExactRequestAndReplays() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.url.appendingPathComponent("note.txt")
        try Data("hello\n".utf8).write(to: file)
        let run = try await bonnetRaw(["--offline", "POST", url("/post"), "a=1", "f@\(file.path)"])
        XCTAssertEqual(run.status, 0, run.errors)
        let text = String(decoding: run.data, as: UTF8.self)
        XCTAssertTrue(text.hasPrefix("POST /post HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n"), text)
        XCTAssertFalse(text.contains("#"), text)
        XCTAssertFalse(text.contains("[multipart form"), text)
        let head = try XCTUnwrap(text.components(separatedBy: "\r\n\r\n").first)
        let body = run.data.suffix(from: try XCTUnwrap(run.data.range(of: Data("\r\n\r\n".utf8))).upperBound)
        XCTAssertTrue(head.contains("Content-Length: \(body.count)"), head)
        // Replayed byte for byte, the server reads the same form.
        let reply = try replay(run.data)
        XCTAssertTrue(reply.contains("\"f\" : \"hello\\n\""), reply)
        XCTAssertTrue(reply.contains("\"a\" : \"1\""), reply)
    }

    /// 9: `Accept-Encoding:` removal was shown, but the engine still sent its own (NIO's decoder added `deflate,
    /// gzip`); the library decodes bodies itself now, so a removed `Accept-Encoding` is not sent, and `-v` shows what
    /// is sent.
    func testVerboseShowsTheHeadersTheServerReceives() async throws {
        let run = try await bonnet(["--no-color", "-v", url("/headers"), "Accept-Encoding:"])
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertFalse(run.output.contains("Accept-Encoding"), run.output)
        let plain = try await bonnet(["--no-color", "-v", url("/headers")])
        XCTAssertTrue(
            plain.output.contains("Accept-Encoding: br;q=1.0, zstd;q=0.9, gzip;q=0.8, deflate;q=0.7\r\n"), plain.output)
        XCTAssertTrue(
            plain.output.contains("\"Accept-Encoding\" : \"br;q=1.0, zstd;q=0.9, gzip;q=0.8, deflate;q=0.7\""),
            plain.output)
        let posted = try await bonnet(["--no-color", "-v", "POST", url("/post"), "a=1"])
        XCTAssertTrue(posted.output.contains("Content-Length: 9\r\n"), posted.output)
        XCTAssertTrue(posted.output.contains("\"Content-Length\" : \"9\""), posted.output)
    }

    /// Sends `request` to the test server as raw bytes; the reply as text.
    private func replay(_ request: Data) throws -> String {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(server.port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        XCTAssertEqual(connected, 0)
        _ = request.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, 0) }
        shutdown(descriptor, Int32(SHUT_WR))
        var reply = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = recv(descriptor, &buffer, buffer.count, 0)
            if count <= 0 { break }
            reply.append(contentsOf: buffer[0..<count])
        }
        return String(decoding: reply, as: UTF8.self)
    }

    /// Error messages in the user's terms: no library framing, no engine type names or build paths, no
    /// "reachability" for a file that is not there.
    func testErrorsAreSaidInTheUsersTerms() async throws {
        let refused = try await bonnet(["http://127.0.0.1:1/"])
        XCTAssertEqual(refused.errors, "bonnet: error: could not connect to the server: connection refused\n")
        let tls = try await bonnet(["https://127.0.0.1:\(server.port)/"])
        XCTAssertTrue(tls.errors.hasPrefix("bonnet: error: the TLS handshake failed: wrong version number"), tls.errors)
        XCTAssertFalse(tls.errors.contains("/") || tls.errors.contains("NIOSSL"), tls.errors)
        let missing = try await bonnet(["POST", url("/post"), "f@/nonexistent/file.txt"])
        XCTAssertEqual(missing.status, 1)
        XCTAssertTrue(missing.errors.hasPrefix("bonnet: error: cannot read /nonexistent/file.txt:"), missing.errors)
        XCTAssertFalse(missing.errors.contains("reachability"), missing.errors)
        let slow = try await bonnet(["--timeout", "0.3", url("/delay/10")])
        XCTAssertEqual(slow.status, 2)
        XCTAssertEqual(slow.errors, "bonnet: error: the request timed out\n")
    }

    /// httpie's behaviours: usage errors exit 1; `--json` without items still asks for JSON; `f@file;type=` sets
    /// a part's type.
    func testUsageErrorsJSONAcceptAndPartTypesAreHttpies() async throws {
        let usage = try await bonnet(["--follow", "--no-follow", url("/get")])
        XCTAssertEqual(usage.status, 1, usage.errors)
        XCTAssertTrue(usage.errors.contains("contradict"), usage.errors)
        let accept = try await bonnet(["--no-color", "--body", "--json", url("/headers")])
        let echoed = try XCTUnwrap(try json(Data(accept.output.utf8))["headers"] as? [String: String])
        XCTAssertEqual(echoed["Accept"], "application/json, */*;q=0.5")
        let directory = try TemporaryDirectory()
        let file = directory.url.appendingPathComponent("data.txt")
        try Data("x".utf8).write(to: file)
        let typed = try await bonnetRaw(["--offline", "POST", url("/post"), "f@\(file.path);type=application/x-custom"])
        XCTAssertTrue(
            String(decoding: typed.data, as: UTF8.self).contains("Content-Type: application/x-custom\r\n"),
            String(decoding: typed.data, as: UTF8.self))
        XCTAssertTrue(String(decoding: typed.data, as: UTF8.self).contains("filename=\"data.txt\""))
    }

    /// Download names get an extension from the content type when the URL has none, and the file is made with the
    /// user's umask, not 0600.
    func testDownloadNamesTakeAnExtensionAndTheUsersUmask() async throws {
        let directory = try TemporaryDirectory()
        let run = try await bonnet(["--download", url("/html")], in: directory.url, outputIsTerminal: true)
        XCTAssertEqual(run.status, 0, run.errors)
        let saved = directory.url.appendingPathComponent("html.html")
        XCTAssertTrue(
            FileManager.default.fileExists(atPath: saved.path),
            "\((try? FileManager.default.contentsOfDirectory(atPath: directory.url.path)) ?? [])")
        let mask = umask(0o022)
        umask(mask)
        let mode = try XCTUnwrap(
            FileManager.default.attributesOfItem(atPath: saved.path)[.posixPermissions] as? NSNumber
        ).intValue
        XCTAssertEqual(mode, 0o666 & ~Int(mask), String(mode, radix: 8))
        // A URL that ends in `/` names no file: `index`, with the type's extension.
        let index = try await bonnet(["--download", url("/anything/")], in: directory.url, outputIsTerminal: true)
        XCTAssertEqual(index.status, 0, index.errors)
        XCTAssertTrue(
            FileManager.default.fileExists(atPath: directory.url.appendingPathComponent("index.json").path),
            index.errors)
    }

    /// Runs bonnet with its output read as bytes; with `closeOutputAfter`, as `head -c` reads it.
    func bonnetRaw(_ arguments: [String], closeOutputAfter limit: Int? = nil) async throws -> (
        status: Int32, data: Data, errors: String
    ) {
        let run = try await bonnet(arguments, closeOutputAfter: limit)
        return (run.status, run.data, run.errors)
    }
}
