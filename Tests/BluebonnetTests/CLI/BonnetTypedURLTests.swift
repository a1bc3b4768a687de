import Foundation
import XCTest

/// The URL sent is the URL typed (issue 43, item 8): escapes kept, only what needs escaping escaped, and a `://`
/// later in a scheme-less URL is not its scheme.
extension BonnetCommandTests {
    /// The request line `--offline` shows for `arguments`.
    private func requestLine(_ arguments: [String]) async throws -> String {
        let run = try await bonnet(["--offline"] + arguments)
        XCTAssertEqual(run.status, 0, run.errors)
        return run.output.components(separatedBy: "\r\n").first ?? run.output
    }

    /// Before: `%20` beside `ü` was sent as `%2520`, and `%26` in a query as `%2526`.
    func testEscapesAreKeptAndOnlyWhatNeedsEscapingIsEscaped() async throws {
        for (typed, line) in [
            (":8097/a%20b/ü", "GET /a%20b/%C3%BC HTTP/1.1"), (":8097/?q=a%26b&u=ü", "GET /?q=a%26b&u=%C3%BC HTTP/1.1"),
            (":8097/100%/a b", "GET /100%25/a%20b HTTP/1.1"),
            ("http://127.0.0.1:8097/plain?x=1", "GET /plain?x=1 HTTP/1.1"),
        ] {
            let shown = try await requestLine([typed])
            XCTAssertEqual(shown, line, typed)
        }
    }

    /// Before: `localhost:8095/redirect-to?url=http://x/` failed with "URLError -1002".
    func testASchemelessURLWithASchemeInItsQueryIsHTTP() async throws {
        let run = try await bonnet(["--offline", "127.0.0.1:8097/redirect-to?url=http://x/"])
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertTrue(run.output.hasPrefix("GET /redirect-to?url=http://x/ HTTP/1.1"), run.output)
        XCTAssertTrue(run.output.contains("Host: 127.0.0.1:8097"), run.output)
    }
}

/// What is shown is what is sent (issue 43, item 10).
extension BonnetCommandTests {
    /// Before: `Host:example.org` was shown twice (and a replay sent it twice).
    func testAGivenHostIsShownOnceAsTheOneSent() async throws {
        let run = try await bonnet(["--offline", "127.0.0.1:8097/get", "Host:example.org"])
        XCTAssertEqual(run.status, 0, run.errors)
        let hosts = run.output.components(separatedBy: "\r\n").filter { $0.lowercased().hasPrefix("host:") }
        XCTAssertEqual(hosts, ["Host: example.org"])
    }

    /// Before: `--offline --chunked` showed a `Content-Length`, and the body unframed.
    func testOfflineChunkedShowsTheChunkedFraming() async throws {
        let run = try await bonnet(["--offline", "--chunked", "127.0.0.1:8097/post", "a=1"])
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertTrue(run.output.contains("Transfer-Encoding: chunked\r\n"), run.output)
        XCTAssertFalse(run.output.contains("Content-Length"), run.output)
        XCTAssertTrue(run.output.hasSuffix("\r\n\r\n9\r\n{\"a\":\"1\"}\r\n0\r\n\r\n"), run.output)
    }

    /// Before: `-v --multipart` printed a summary, not the body sent.
    func testVerboseMultipartShowsTheFormAsSent() async throws {
        let run = try await bonnet(["-v", "--multipart", url("/post"), "name=bonnet"])
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertFalse(run.output.contains("[multipart form"), run.output)
        XCTAssertTrue(
            run.output.contains("Content-Disposition: form-data; name=\"name\"\r\n\r\nbonnet\r\n"), run.output)
        let boundary = try XCTUnwrap(
            run.output.range(of: "boundary=").map { run.output[$0.upperBound...].prefix { !$0.isNewline } })
        XCTAssertTrue(run.output.contains("--\(boundary)--"), "the boundary sent closes the body shown")
    }

    /// Before: `-v` was ignored with `--stream` and `--download`.
    func testVerboseShowsTheRequestWhenStreamingAndDownloading() async throws {
        let stream = try await bonnet(["-v", "-S", url("/bytes/10?seed=3"), "X-Shown:yes"])
        XCTAssertEqual(stream.status, 0, stream.errors)
        XCTAssertTrue(stream.output.hasPrefix("GET /bytes/10?seed=3 HTTP/1.1"), stream.output)
        XCTAssertTrue(stream.output.contains("X-Shown: yes"), stream.output)
        let directory = try TemporaryDirectory()
        let download = try await bonnet(
            ["-v", "-d", url("/bytes/10?seed=3"), "X-Shown:yes"], in: directory.url, outputIsTerminal: true)
        XCTAssertEqual(download.status, 0, download.errors)
        XCTAssertTrue(download.errors.contains("GET /bytes/10?seed=3 HTTP/1.1"), download.errors)
        XCTAssertTrue(download.errors.contains("X-Shown: yes"), download.errors)
    }
}

/// Items are sent as typed, never silently rewritten (issue 43, item 9).
extension BonnetCommandTests {
    /// The body `--offline` shows for `arguments`.
    private func offlineBody(_ arguments: [String]) async throws -> (status: Int32, body: String, errors: String) {
        let run = try await bonnet(["--offline"] + arguments)
        let body = run.output.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
        return (run.status, body, run.errors)
    }

    /// Before: `:=` objects were written again (keys sorted, a repeated key dropped, `1.0` as `1`, `-0.0` as `-0`),
    /// and `1e400` was refused.
    func testRawJSONValuesAreSentAsTyped() async throws {
        let sent = try await offlineBody([
            "127.0.0.1:8097/post", #"o:={"z": 1.0, "a": -0.0, "z": 2}"#, "e:=1e400", "t:=true",
        ])
        XCTAssertEqual(sent.status, 0, sent.errors)
        XCTAssertEqual(sent.body, #"{"o":{"z": 1.0, "a": -0.0, "z": 2},"e":1e400,"t":true}"#)
        let invalid = try await bonnet(["--offline", "127.0.0.1:8097/post", "x:={nope"])
        XCTAssertEqual(invalid.status, 1, invalid.errors)
        XCTAssertTrue(invalid.errors.contains("not JSON"), invalid.errors)
    }

    /// Before: a form sent `:=` values as Swift printed them (`o=["a": 1]`, `t=1`).
    func testRawJSONValuesInAFormAreTheirJSONText() async throws {
        let sent = try await offlineBody(["--form", "127.0.0.1:8097/post", #"o:={"a":1}"#, "t:=true", #"s:="x""#])
        XCTAssertEqual(sent.status, 0, sent.errors)
        XCTAssertEqual(sent.body, "o=%7B%22a%22%3A1%7D&t=true&s=x")
    }

    /// Before: `x=@binary` sent U+FFFD for every byte that was not UTF-8; httpie refuses it.
    func testAFileThatIsNotTextIsRefusedAsAFieldValue() async throws {
        let directory = try TemporaryDirectory()
        let file = try directory.file("blob.bin", contents: Data([0x61, 0xFF, 0xFE]))
        let run = try await bonnet(["--offline", "127.0.0.1:8097/post", "x=@\(file.path)"])
        XCTAssertEqual(run.status, 1, run.errors)
        XCTAssertTrue(run.errors.contains("not UTF-8 text"), run.errors)
        XCTAssertFalse(run.output.contains("\u{FFFD}"), run.output)
    }
}

/// httpie's `--default-scheme` and `-I` (issue 43, "httpie flags still missing").
extension BonnetCommandTests {
    /// Before: `--default-scheme` was an unknown option. A scheme-less URL takes it; one with a scheme keeps its own.
    func testTheDefaultSchemeAppliesToASchemelessURLOnly() async throws {
        let port = server.port
        // https to the plain test server: the handshake fails, which shows https was used.
        let secure = try await bonnet(["--default-scheme", "https", "127.0.0.1:\(port)/get"])
        XCTAssertNotEqual(secure.status, 0, secure.output)
        XCTAssertTrue(
            secure.errors.lowercased().contains("tls") || secure.errors.lowercased().contains("ssl"), secure.errors)
        let given = try await bonnet(["--default-scheme", "https", "--print=b", "http://127.0.0.1:\(port)/get"])
        XCTAssertEqual(given.status, 0, given.errors)
        let shorthand = try await bonnet(["--default-scheme", "HTTP", "--print=b", ":\(port)/get"])
        XCTAssertEqual(shorthand.status, 0, shorthand.errors)
        let refused = try await bonnet(["--default-scheme", "h t", "127.0.0.1:\(port)/get"])
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.errors.contains("--default-scheme"), refused.errors)
    }

    /// Before: `-I` was an unknown option; `--ignore-stdin` was the only spelling.
    func testDashIIgnoresStandardInput() async throws {
        let run = try await bonnet(
            ["-I", "--print=b", "POST", url("/post"), "a=1"], stdin: Data("piped body".utf8))
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertTrue(run.output.contains("\"a\" : \"1\""), run.output)
        XCTAssertFalse(run.output.contains("piped body"), run.output)
    }
}

/// Items are sent as typed (issue 43, item 9).
extension BonnetCommandTests {
    /// Before: `'a\\b=1'` made the key `ab`, `c\d=2` the key `cd`: a backslash that escapes no separator and no bracket
    /// is part of the key, as httpie 3.2.4 keeps it (its output for the same items is the expected body).
    func testABackslashThatEscapesNothingStaysInTheKey() async throws {
        let run = try await bonnet(
            ["-I", "--offline", "--print=B", "POST", "127.0.0.1:9/p", #"a\\b=1"#, #"c\d=2"#, #"g\=h=3"#, #"x\\\\y=4"#])
        XCTAssertEqual(run.status, 0, run.errors)
        let body = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: String], run.output)
        XCTAssertEqual(body, [#"a\b"#: "1", #"c\d"#: "2", "g=h": "3", #"x\\y"#: "4"])
    }
}

/// Compressed responses through bonnet (issue 48): decoded by the library, as httpie decodes brotli with its package.
extension BonnetCommandTests {
    func testBrotliAndZstdBodiesArePrintedDecoded() async throws {
        for (path, key) in [("/brotli", "brotli"), ("/zstd", "zstd")] {
            let run = try await bonnet(["--print=b", url(path)])
            XCTAssertEqual(run.status, 0, run.errors)
            XCTAssertTrue(run.output.contains("\"\(key)\" : true"), run.output)
        }
    }
}

/// Errors in the user's terms (issue 43, item 15).
extension BonnetCommandTests {
    /// Before: `DNS error: SocketAddressError.UnknownHost: … (error -2) for host …`, "redirected more than 1 times",
    /// and `URLRequest validation failed due to reason: Invalid URLRequest: …` for an ftp URL.
    func testErrorsNameNoEngineTypesAndCountProperly() async throws {
        let unknown = try await bonnet(["http://no-such-host.invalid/"])
        XCTAssertNotEqual(unknown.status, 0)
        XCTAssertFalse(unknown.errors.contains("SocketAddressError"), unknown.errors)
        XCTAssertTrue(unknown.errors.contains("no-such-host.invalid"), unknown.errors)
        let redirected = try await bonnet(["--max-redirects", "1", url("/redirect/3")])
        XCTAssertTrue(redirected.errors.contains("more than 1 time."), redirected.errors)
        let ftp = try await bonnet(["ftp://example.org/"])
        XCTAssertTrue(ftp.errors.contains("bonnet speaks http and https, not ftp://"), ftp.errors)
        XCTAssertFalse(ftp.errors.contains("URLRequest"), ftp.errors)
    }
}
