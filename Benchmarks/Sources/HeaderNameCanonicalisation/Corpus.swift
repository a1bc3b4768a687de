// Field names the equality check runs on, and the realistic heads the measurement runs on.

/// Field names in common use: the IANA HTTP field name registry's common entries, CORS, fetch metadata, and the
/// `X-` fields servers and APIs send.
let registeredNames: [String] = [
    "Accept", "Accept-CH", "Accept-Charset", "Accept-Datetime", "Accept-Encoding", "Accept-Language", "Accept-Patch",
    "Accept-Post", "Accept-Ranges", "Access-Control-Allow-Credentials", "Access-Control-Allow-Headers",
    "Access-Control-Allow-Methods", "Access-Control-Allow-Origin", "Access-Control-Expose-Headers",
    "Access-Control-Max-Age", "Access-Control-Request-Headers", "Access-Control-Request-Method", "Age", "Allow",
    "Alt-Svc", "Alt-Used", "Authentication-Info", "Authorization", "Cache-Control", "Cache-Status",
    "CDN-Cache-Control", "Clear-Site-Data", "Connection", "Content-Digest", "Content-Disposition",
    "Content-Encoding", "Content-Language", "Content-Length", "Content-Location", "Content-MD5", "Content-Range",
    "Content-Security-Policy", "Content-Security-Policy-Report-Only", "Content-Type", "Cookie",
    "Cross-Origin-Embedder-Policy", "Cross-Origin-Opener-Policy", "Cross-Origin-Resource-Policy", "Date",
    "Deprecation", "Digest", "DNT", "Early-Data", "ETag", "Expect", "Expect-CT", "Expires", "Forwarded", "From",
    "Host", "HTTP2-Settings", "Idempotency-Key", "If-Match", "If-Modified-Since", "If-None-Match", "If-Range",
    "If-Unmodified-Since", "Keep-Alive", "Last-Event-ID", "Last-Modified", "Link", "Location", "Max-Forwards",
    "Memento-Datetime", "NEL", "OData-Version", "Origin", "P3P", "Permissions-Policy", "Ping-From", "Pragma",
    "Prefer", "Preference-Applied", "Priority", "Proxy-Authenticate", "Proxy-Authentication-Info",
    "Proxy-Authorization", "Public-Key-Pins", "Range", "RateLimit", "RateLimit-Policy", "Referer",
    "Referrer-Policy", "Refresh", "Report-To", "Repr-Digest", "Retry-After", "Sec-Fetch-Dest", "Sec-Fetch-Mode",
    "Sec-Fetch-Site", "Sec-Fetch-User", "Sec-WebSocket-Accept", "Sec-WebSocket-Extensions", "Sec-WebSocket-Key",
    "Sec-WebSocket-Protocol", "Sec-WebSocket-Version", "Server", "Server-Timing", "Set-Cookie", "Signature",
    "Signature-Input", "SourceMap", "Status", "Strict-Transport-Security", "Sunset", "TE", "Timing-Allow-Origin",
    "Topic", "Trailer", "Transfer-Encoding", "TTL", "Upgrade", "Upgrade-Insecure-Requests", "Urgency", "User-Agent",
    "Vary", "Via", "Want-Content-Digest", "Warning", "WWW-Authenticate", "X-Content-Type-Options",
    "X-Correlation-ID", "X-DNS-Prefetch-Control", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto",
    "X-Frame-Options", "X-Powered-By", "X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset",
    "X-Request-Id", "X-XSS-Protection",
]

/// Names at the edges of the rules: empty, digits, hyphens, the `x-` prefix, `WWW-Authenticate` in every case and
/// one byte off, `_`, `.`, the case-ignorable `'`, `^` and `` ` ``, every token character, bytes no token has.
let edgeNames: [String] = [
    "", "0", "7", "123", "-", "--", "---", "-a", "a-", "-A-", "x--y", "X--Y", "x-", "X-", "x", "X", "xx-y", "Xx-Y",
    "x-Y", "X-y", "-x-", "x_-y", "www-authenticate", "WWW-AUTHENTICATE", "Www-Authenticate", "wWw-aUtHeNtIcAtE",
    "WWW-Authenticat", "WWW-Authenticatee", "WWW_Authenticate", "WWW-Authenticate-", "x-www-authenticate",
    "content_type", "Content_Type", "a.b.c", "A.B.C", "x.y", "X.Y", "it's", "IT'S", "a^b", "A^B", "a`b", "A`B", "a'B",
    "'a", "^a", "`a", "__init__", "x1y", "X1Y", "1a", "1A", "a1b2", "A1B2", "9-lives", "mIxEd-CaSe", "ALLCAPS",
    "lowercase", "x_forwarded_for", "X_Forwarded_For", "!#$%&'*+-.^_`|~", "a!b#c$d%e&f*g+h|i~j", "a b", "a:b",
    "a\tb", "a\r\nb", "\u{7F}del", "nul\u{0}byte", "a@b", "a/b", "a\"b", "a=b", "a;b", "a,b", "a{b}", "a[b]", "a?b",
    "a<b>", "a\\b", String(repeating: "long-name-", count: 40),
]

/// Names with bytes beyond ASCII, which the fast path hands to the current code.
let nonASCIINames: [String] = [
    "Über-Header", "naïve-name", "x-ﬁle", "X-\u{301}a", "ǆemal-ǅ", "straße", "ı-dotless", "Kelvin-\u{212A}",
    "e\u{301}tag", "日本-語", "WWW-Authenticatе", "ﬁ-ﬂ", "ǰ-x", "Σίσυφος", "x-\u{0130}",
]

/// Every name in four spellings: as written, lowercase, uppercase, and alternating case.
func spellings(of names: [String]) -> [String] {
    var result: [String] = []
    for name in names {
        result.append(name)
        result.append(name.lowercased())
        result.append(name.uppercased())
        var alternating = ""
        for (offset, character) in name.enumerated() {
            alternating += offset % 2 == 0 ? character.uppercased() : character.lowercased()
        }
        result.append(alternating)
    }
    return result
}

/// A realistic head, as `RealisticHead` in the test server sends it (the same names and values, a fixed date).
enum Head: String, CaseIterable {
    /// The eight fields nginx sends for a static JSON file.
    case nginx
    /// Fifteen: nginx's eight and seven an API adds.
    case api
    /// No field: what the initializer costs whatever the head.
    case none

    var fields: [(String, String)] {
        switch self {
        case .none:
            return []
        case .nginx:
            return Self.nginxFields + [("Accept-Ranges", "bytes")]
        case .api:
            return Self.nginxFields + [
                ("Cache-Control", "private, max-age=0, must-revalidate"),
                ("Vary", "Accept-Encoding, Origin"),
                ("X-Request-Id", "5f0c6d2a9b3e4f718a2c3d4e5f607182"),
                ("Strict-Transport-Security", "max-age=31536000; includeSubDomains"),
                ("X-Content-Type-Options", "nosniff"),
                ("X-Frame-Options", "DENY"),
                ("Access-Control-Allow-Origin", "*"),
                ("Accept-Ranges", "bytes"),
            ]
        }
    }

    private static let nginxFields: [(String, String)] = [
        ("Server", "BluebonnetTestServer"),
        ("Date", "Sat, 28 Nov 2026 11:00:00 GMT"),
        ("Content-Type", "application/json"),
        ("Content-Length", "703"),
        ("Last-Modified", "Mon, 24 Nov 2025 16:00:00 GMT"),
        ("Connection", "keep-alive"),
        ("ETag", "\"69248180-2bf\""),
    ]

    /// The fields as the initializer takes them.
    var dictionary: [String: String] {
        var result: [String: String] = [:]
        for (name, value) in fields {
            result[name] = value
        }
        return result
    }
}
