import Foundation

/// The reviewed list: every way bonnet is allowed to differ from httpie 3.2.4 in the corpus, with its reason.
///
/// - `nature`: differences by nature, taken out of every case before comparing (each names the normalisation it
///   allows; a normalisation not listed here is not applied).
/// - `deliberate`: bonnet's documented choices, case by case.
/// - `bug`: bonnet bugs not fixed yet, and httpie features bonnet lacks, case by case: each one is to be fixed.
///
/// A difference not listed fails the suite, and so does an entry a case no longer needs.
extension HTTPieOracle {
    static let differences: [OracleDifference] = [
        // MARK: By nature
        .nature(.userAgent, "each program names itself: HTTPie/3.2.4 and bonnet's own User-Agent"),
        .nature(
            .acceptEncoding,
            "each program asks for the codings it decodes: httpie's requests gzip and deflate (br with brotli "
                + "installed), bonnet also br and zstd"),
        .nature(
            .headerNameCase, "field names are case-insensitive; AsyncHTTPClient writes `host` and `transfer-encoding`"),
        .nature(.headerOrder, "the order of fields of different names carries no meaning (RFC 9110 §5.3)"),
        .nature(.keepAlive, "requests says `Connection: keep-alive`, HTTP/1.1's default, which bonnet leaves implied"),
        .nature(.acceptAnything, "requests says `Accept: */*`, what no Accept field means (RFC 9110 §12.5.1)"),
        .nature(.multipartBoundary, "each program draws its own random multipart boundary"),
        .nature(.chunkSizes, "how a chunked body is cut into chunks is the sender's choice"),
        .nature(
            .jsonLayout,
            "bonnet writes JSON compact and UTF-8 (README: `{\"name\":\"x\",\"count\":3}`), httpie with spaces and "
                + "\\u escapes; the tokens, their order and the numbers' spelling are still compared"),
        .nature(
            .digestParameters,
            "a Digest answer's cnonce is drawn fresh by each client and its response hashes it; its parameters' order "
                + "means nothing, and requests quotes qop, a token (RFC 7616 §3.4)"),
        .nature(
            .emptyContentLength,
            "requests says `Content-Length: 0` for a DELETE or CONNECT without a body, the engine for an OPTIONS: "
                + "both mean no body"),
        .nature(.deflatedBody, "`-x` bodies are compared inflated: the compressed bytes are the compressor's"),
        .nature(
            .sessionLayout,
            "a session file is compared by meaning: httpie keeps an httpie 2 file's cookies and headers by name and "
                + "writes empty credentials as username and password, bonnet writes httpie 3's lists and raw_auth; "
                + "httpie reads both (the session-made-by and session-read-by cases run httpie on bonnet's file)"),
        .nature(
            .contentLength,
            "Content-Length is checked against the body each side sent, then compared as the normalised body's"),

        // MARK: Deliberate: bonnet's choices
        .deliberate(
            ["method-connect-word"], [.output],
            "a 2xx answer to CONNECT opens a tunnel and has no content (RFC 9110 §9.3.6): bonnet prints none, "
                + "requests prints the server's next bytes as a body"),
        .deliberate(
            ["url-query-empty"], [.line], "a `?` with nothing after it is sent as typed; requests drops it"),
        .deliberate(
            ["url-lowercase-escape"], [.line],
            "escapes are sent as typed (issue 43, item 8); requests writes their hex digits in uppercase"),
        .deliberate(
            ["url-userinfo-escaped"], [.header("authorization")],
            "credentials in the URL are percent-decoded before Basic encodes them (RFC 3986 §3.2.1: `us%40er` is "
                + "`us@er`); httpie encodes them still escaped"),
        .deliberate(
            ["header-repeated", "header-repeated-three", "header-empty-and-value", "offline-headers"],
            [.header("x-a")],
            "a header given again goes out as one field, its values joined by `, ` (README), the same meaning as "
                + "separate fields (RFC 9110 §5.3); an empty value adds nothing to the join"),
        .deliberate(
            ["header-cookie-two"], [.header("cookie")],
            "`Cookie` items are joined by `; ` into one field, as RFC 6265 §5.4 asks; requests sends two fields"),
        .deliberate(
            [
                "json-raw-exponent", "json-raw-exponent-upper", "json-raw-huge-exponent", "json-file-raw",
                "offline-raw-json-values",
            ], [.header("content-length"), .body],
            "`:=` values are sent as typed (issue 43, item 9); httpie parses and writes them again (`1e2` as "
                + "`100.0`, `1.50` as `1.5`, and `1e400` as `Infinity`, which is not JSON)"),
        .deliberate(
            ["nested-into-raw"], [.header("content-length"), .body],
            "a path into a `:=` value adds to it (`a:={\"b\":1} a[c]=2`); httpie 3.2.4 drops the second item"),
        .deliberate(
            ["form-raw-object", "form-raw-array", "multipart-raw-object"], [.status, .output, .requests],
            "a JSON object or array in a form is sent as its JSON text (issue 43, item 9); httpie refuses it"),
        .deliberate(
            ["form-raw-true"], [.body], "`t:=true` in a form is `t=true`; httpie writes Python's spelling, `True`"),
        .deliberate(
            ["multipart-raw-number"], [.header("content-length"), .body],
            "`n:=1` in a multipart form is the field `n` with `1`; httpie 3.2.4 leaves the item out"),
        .deliberate(
            ["multipart-file", "multipart-file-and-field"], [.status, .output, .requests],
            "a `name@file` item makes the body a multipart form without `--form` (README, --form's help); httpie "
                + "refuses it (\"perhaps you meant --form?\")"),
        .deliberate(
            ["multipart-no-extension", "multipart-two-files", "multipart-same-name-files"],
            [.header("content-length"), .body],
            "a file part whose name has no extension is typed application/octet-stream; httpie gives it no type, "
                + "which RFC 7578 reads as text/plain"),
        .deliberate(
            [
                "stdin-text", "stdin-put", "stdin-get", "stdin-newline-only", "stdin-binary", "stdin-unicode",
                "stdin-crlf", "stdin-with-query", "stdin-large", "raw-text", "raw-put", "raw-unicode", "offline-raw",
                "offline-stdin", "chunked-stdin", "chunked-raw", "chunked-large-stdin", "compress-stdin",
            ], [.header("accept"), .header("content-type")],
            "a piped or --raw body is typed application/json, and JSON asked for, only when it parses as JSON "
                + "(README); httpie 3.2.4 calls any piped body JSON"),
        .deliberate(
            ["stdin-with-header"], [.header("accept")],
            "a piped body that is not JSON does not ask for JSON; httpie asks whatever the body"),
        .deliberate(
            [
                "body-file", "body-file-binary", "body-file-put", "body-file-html", "offline-compress-big",
                "chunked-body-file", "compress-big",
            ], [.header("accept")],
            "an `@file` body is typed by its extension, as httpie types it, and asks for JSON only when it is JSON; "
                + "httpie asks for JSON whatever the file"),
        .deliberate(
            ["stdin-empty"], [.line, .header("accept"), .header("content-type")],
            "an empty pipe is no body: a GET, as with nothing piped; httpie sends an empty POST"),
        .deliberate(
            ["stdin-with-raw"], [.status, .output, .requests],
            "--raw is the body, and standard input is not read; httpie refuses --raw beside any standard input that "
                + "is not a terminal, which would make bonnet wait on an idle pipe"),
        .deliberate(
            ["body-file-form"], [.header("content-length"), .header("content-type"), .body],
            "`@file` is the body with --form too; httpie then makes it a multipart part with an empty name"),
        .deliberate(
            ["offline-chunked"], [.output],
            "--offline --chunked shows the chunked framing that would be sent (issue 43, item 10); httpie shows a "
                + "Content-Length beside Transfer-Encoding and the body unframed"),
        .deliberate(
            ["auth-header-wins", "auth-netrc-header-wins"], [.header("authorization")],
            "an Authorization item is sent as typed, over --auth and ~/.netrc; httpie's --auth and .netrc replace it"),
        .deliberate(
            ["chunked-no-body"], [.header("transfer-encoding")],
            "without a body there is no framing to announce; httpie sends a GET with an empty chunked body"),
        .deliberate(
            ["chunked-compress", "compress-multipart"], [.status, .output, .requests],
            "bonnet deflates a chunked or a multipart body as it is sent; httpie refuses those pairs"),
        .deliberate(
            ["session-cookie-secure"], [.header("cookie")],
            "the library counts a loopback host as a secure origin for cookies, as browsers do; requests never "
                + "sends a Secure cookie over http"),
        .deliberate(
            [
                "download-name-from-url", "download-content-disposition", "download-output", "download-existing-name",
                "download-no-name", "download-json-type", "download-query-in-url", "download-unicode-disposition",
                "download-hostile-name", "download-error-status", "download-resume-missing-file", "download-quiet",
                "download-piped", "download-verbose", "download-post", "download-empty-body", "download-output-dash",
            ], [.header("accept-encoding")],
            "a download asks for a compressed transfer and saves the decoded body; only a resumed one asks for "
                + "identity, where the range must count the file's bytes; httpie always asks for identity"),
        .deliberate(
            ["download-error-status-output"], [.status, .files],
            "an error status saves nothing and exits 4 (README); httpie exits 0 with the error's body in the file"),
        .deliberate(
            ["download-continue-without-download"], [.status, .requests, .files],
            "-o implies --download, so -c -o resumes; httpie refuses --continue without --download"),
        .deliberate(
            ["redirect-not-followed"], [.output, .requests],
            "redirects are followed by default (README: unlike httpie; --no-follow shows the 3xx)"),
        .deliberate(
            ["redirect-check-status"], [.status, .output, .requests],
            "redirects are followed by default, so --check-status sees the final 200, not the 302 (README)"),
        .deliberate(
            ["redirect-too-many"], [.requests],
            "--max-redirects=2 follows two redirects (three requests) before failing; httpie 3.2.4 fails after one"),
        .deliberate(
            ["flag-ssl-version", "flag-ciphers"], [.status, .output, .requests],
            "the TLS engine cannot be held to one TLS version nor given a cipher list, so bonnet refuses --ssl=tls1.2 "
                + "and --ciphers rather than accept them and do otherwise (--ssl=ssl2.3, what it does, is taken); "
                + "httpie takes them, and with an http:// URL they change nothing"),
        .deliberate(
            ["config-bad-json"], [.status, .output, .requests],
            "a config.json that is not JSON stops bonnet with an error naming the file: its default options may be "
                + "what keeps the request safe (--verify, --auth); httpie warns and sends without them"),
        .deliberate(
            ["proxy-https-connect"], [.line, .header("host")],
            "CONNECT goes as HTTP/1.1 with Host (RFC 9110 §9.3.6, §7.2); urllib3 sends HTTP/1.0 without one"),

    ]
}
