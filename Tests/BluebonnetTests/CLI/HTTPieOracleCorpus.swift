import Foundation

/// The corpus: command lines as a person types them (shell quoting), each run by httpie 3.2.4 and by bonnet.
/// `{u}` is `http://127.0.0.1:PORT`, `{h}` is `127.0.0.1:PORT`, `{p}` is `PORT`, the case's own echo server.
/// A case's name starts with what it is about.
extension HTTPieOracle {
    /// Files a case finds in its working folder when one of its command lines names them.
    static let fixtures: [(path: String, contents: Data)] = [
        ("hello.txt", Data("hello\n".utf8)),
        ("data.json", Data(#"{"k": [1, 2], "s": "ü", "n": 1.50}"#.utf8 + [0x0A])),
        ("blob.bin", Data((0...255).map { UInt8($0) })),
        ("noext", Data("no extension\n".utf8)),
        ("ü.txt", Data("umlaut\n".utf8)),
        ("two words.txt", Data("two words\n".utf8)),
        ("bad.json", Data("{nope\n".utf8)),
        ("page.html", Data("<p>hi</p>\n".utf8)),
    ]

    private static func c(_ name: String, _ line: String) -> OracleCase { OracleCase(name, line) }

    /// 100 KB of text that deflates well.
    private static let bigText = String(repeating: "bluebonnet, httpie and the oracle. ", count: 3000)
    /// A body for downloads.
    private static let payload = Data((0..<5000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) })

    static let corpus: [OracleCase] =
        methods + urls + headers + jsonItems + nestedJSON + queryItems + forms + multipart + bodies + offline
        + printing + authentication + chunked + compression + sessions + downloads + redirects + statuses + proxies
        + flags

    static let methods: [OracleCase] = [
        c("method-get", "GET {u}/get"),
        c("method-get-lowercase", "get {u}/get"),
        c("method-post-empty", "POST {u}/post"),
        c("method-put", "PUT {u}/put a=1"),
        c("method-patch", "PATCH {u}/patch a=1"),
        c("method-delete", "DELETE {u}/delete"),
        c("method-delete-body", "DELETE {u}/delete a=1"),
        c("method-head", "HEAD {u}/head"),
        c("method-options", "OPTIONS {u}/options"),
        c("method-custom", "PURGE {u}/cache"),
        c("method-custom-lowercase", "purge {u}/cache"),
        c("method-mixed-case", "Post {u}/post a=1"),
        c("method-get-with-body", "GET {u}/get a=1"),
        c("method-inferred-post", "{u}/post a=1"),
        c("method-inferred-get", "{u}/get X-A:1"),
        c("method-inferred-get-query", "{u}/get q==1"),
        c("method-schemeless-get", "GET {h}/get"),
        c("method-schemeless-post", "post {h}/api a=1"),
        c("method-schemeless-put-items", "PUT {h}/x X-A:1 a:=2"),
        c("method-shorthand-get", "GET :{p}/get"),
        c("method-shorthand-post", "POST :{p}/post a=1"),
        c("method-localhost-get", "GET localhost:{p}/get"),
        c("method-localhost-no-path", "GET localhost:{p}"),
        c("method-host-port-only", "{h}"),
        c("method-shorthand-port-only", ":{p}"),
        c("method-shorthand-slash", ":{p}/"),
        c("method-url-then-item", "{h} a=1"),
        c("method-url-then-header", "{h}/x X-A:b"),
        c("method-word-like-host", "GET {h}/GET"),
        c("method-connect-word", "CONNECT {u}/x"),
    ]

    static let urls: [OracleCase] = [
        c("url-plain", "{u}/a/b/c"),
        c("url-no-path", "{u}"),
        c("url-root", "{u}/"),
        c("url-query", "{u}/get?a=1&b=2"),
        c("url-query-repeated", "{u}/get?a=1&a=2"),
        c("url-query-empty", "{u}/get?"),
        c("url-query-equals-in-value", "'{u}/get?a=b=c'"),
        c("url-query-no-value", "'{u}/get?flag'"),
        c("url-fragment", "'{u}/page#section'"),
        c("url-query-and-fragment", "'{u}/page?x=1#frag'"),
        c("url-dot-segments", "{u}/a/./b/../c"),
        c("url-dot-segments-leading", "{u}/../a"),
        c("url-dot-segment-trailing", "{u}/a/b/.."),
        c("url-path-as-is", "--path-as-is {u}/a/./b/../c"),
        c("url-double-slash", "{u}//a//b"),
        c("url-encoded-slash", "{u}/a%2Fb"),
        c("url-space", "'{u}/a b'"),
        c("url-escaped-space", "{u}/a%20b"),
        c("url-unicode-path", "{u}/ü"),
        c("url-unicode-cjk", "{u}/日本/語"),
        c("url-emoji", "{u}/😀"),
        c("url-escape-beside-unicode", "':{p}/a%20b/ü'"),
        c("url-query-escape-beside-unicode", "':{p}/?q=a%26b&u=ü'"),
        c("url-bare-percent", "'{u}/100%'"),
        c("url-percent-not-hex", "'{u}/a%zzb'"),
        c("url-lowercase-escape", "{u}/a%c3%bc"),
        c("url-plus", "'{u}/a+b?c=d+e'"),
        c("url-tilde", "'{u}/~user'"),
        c("url-semicolon", "'{u}/p;x=1'"),
        c("url-double-quote", #"'{u}/a"b'"#),
        c("url-single-quote", "{u}/a\\'b"),
        c("url-brackets", "'{u}/a[1]?b[]=2'"),
        c("url-braces-pipe", "'{u}/a{b}|c^d'"),
        c("url-backslash", #"'{u}/a\b'"#),
        c("url-backtick", "'{u}/a`b'"),
        c("url-query-space", "'{u}/get?q=a b'"),
        c("url-query-unicode", "'{u}/get?q=ü'"),
        c("url-query-slash-question", "'{u}/get?u=/a?b'"),
        c("url-scheme-in-query", "'{h}/redirect-to?url=http://x/'"),
        c("url-uppercase-scheme", "HTTP://127.0.0.1:{p}/x"),
        c("url-uppercase-host", "http://LOCALHOST:{p}/x"),
        c("url-userinfo", "http://user:pass@127.0.0.1:{p}/private"),
        c("url-userinfo-user-only", "http://user@127.0.0.1:{p}/private"),
        c("url-userinfo-escaped", "http://us%40er:p%3Ass@127.0.0.1:{p}/private"),
        c("url-userinfo-schemeless", "user:pass@{h}/private"),
        c("url-default-scheme-http", "--default-scheme http {h}/x"),
        c("url-default-scheme-https", "--default-scheme https {h}/x"),
        c("url-default-scheme-shorthand", "--default-scheme https :{p}/x"),
        c("url-default-scheme-explicit-wins", "--default-scheme https {u}/x"),
        c("url-https-to-plain-server", "https://127.0.0.1:{p}/x"),
        c("url-https-verify-no", "--verify=no https://127.0.0.1:{p}/x"),
        c("url-port-explicit-80-style", "http://127.0.0.1:{p}/x?y=%2F"),
        c("url-long-path", "{u}/" + String(repeating: "segment/", count: 60)),
        c("url-trailing-question-items", "'{u}/get?' q==1"),
        c("url-existing-query-and-items", "'{u}/get?a=1' b==2"),
    ]

    static let headers: [OracleCase] = [
        c("header-one", "{u}/h X-A:1"),
        c("header-two", "{u}/h X-A:1 X-B:2"),
        c("header-repeated", "{u}/h X-A:1 X-A:2"),
        c("header-repeated-three", "{u}/h X-A:1 X-A:2 X-A:3"),
        c("header-space-after-colon", "{u}/h 'X-A: spaced'"),
        c("header-trailing-space", "{u}/h 'X-A:v '"),
        c("header-value-with-colon", "{u}/h X-A:a:b"),
        c("header-value-with-equals", "{u}/h X-A:a=b"),
        c("header-value-with-double-equals", "{u}/h X-A:a==b"),
        c("header-value-with-at", "{u}/h X-A:a@b"),
        c("header-value-with-semicolon", "{u}/h 'X-A:a;b'"),
        c("header-name-escaped-colon", #"{u}/h 'X\:A:1'"#),
        c("header-value-escaped-colon", #"{u}/h 'X-A:a\:b'"#),
        c("header-lowercase-name", "{u}/h x-lower:1"),
        c("header-mixed-case-name", "{u}/h X-MiXeD:1"),
        c("header-remove-accept", "{u}/h Accept:"),
        c("header-remove-user-agent", "{u}/h User-Agent:"),
        c("header-remove-accept-encoding", "{u}/h Accept-Encoding:"),
        c("header-remove-unset", "{u}/h X-Nothing:"),
        c("header-empty", "{u}/h 'X-Empty;'"),
        c("header-empty-and-value", "{u}/h 'X-A;' X-A:1"),
        c("header-remove-then-set", "{u}/h X-A: X-A:1"),
        c("header-host", "{u}/h Host:example.org"),
        c("header-host-lowercase", "{u}/h host:example.org"),
        c("header-host-with-port", "{u}/h Host:example.org:8080"),
        c("header-user-agent", "{u}/h User-Agent:custom/1.0"),
        c("header-accept", "{u}/h Accept:text/html"),
        c("header-accept-encoding", "{u}/h Accept-Encoding:identity"),
        c("header-content-type-with-json", "{u}/h Content-Type:text/plain a=1"),
        c("header-content-type-alone", "{u}/h Content-Type:text/plain"),
        c("header-cookie", "{u}/h Cookie:a=1"),
        c("header-cookie-two", "{u}/h Cookie:a=1 Cookie:b=2"),
        c("header-authorization", "{u}/h 'Authorization:Bearer token'"),
        c("header-connection-close", "{u}/h Connection:close"),
        c("header-referer", "{u}/h Referer:http://example.org/"),
        c("header-latin1-value", "{u}/h X-U:ü"),
        c("header-cjk-value", "{u}/h X-U:日本"),
        c("header-tab-in-value", "{u}/h $'X-T:a\\tb'"),
        c("header-long-value", "{u}/h X-Long:" + String(repeating: "v", count: 2000)),
        c("header-from-file", "{u}/h X-A:@hello.txt"),
        c("header-from-missing-file", "{u}/h X-A:@missing.txt"),
        c("header-many", "{u}/h " + (1...30).map { "X-H\($0):\($0)" }.joined(separator: " ")),
        c("header-accept-with-json-flag", "--json {u}/h Accept:text/plain"),
        c("header-content-length-given", "{u}/h Content-Length:0"),
    ]

    static let jsonItems: [OracleCase] = [
        c("json-one", "{u}/post a=1"),
        c("json-two", "{u}/post a=1 b=2"),
        c("json-empty-value", "{u}/post a="),
        c("json-raw-number", "{u}/post n:=1"),
        c("json-raw-true", "{u}/post t:=true"),
        c("json-raw-false", "{u}/post f:=false"),
        c("json-raw-null", "{u}/post z:=null"),
        c("json-raw-string", #"{u}/post 's:="x"'"#),
        c("json-raw-array", "{u}/post 'a:=[1,2,3]'"),
        c("json-raw-array-spaced", "{u}/post 'a:=[1, 2, 3]'"),
        c("json-raw-object", #"{u}/post 'o:={"x":1}'"#),
        c("json-raw-object-spaced", #"{u}/post 'o:={"x": 1, "y": [true, null]}'"#),
        c("json-raw-float", "{u}/post f:=1.5"),
        c("json-raw-float-integral", "{u}/post f:=1.0"),
        c("json-raw-negative-zero", "{u}/post f:=-0.0"),
        c("json-raw-exponent", "{u}/post f:=1e2"),
        c("json-raw-exponent-upper", "{u}/post f:=1E+2"),
        c("json-raw-huge-exponent", "{u}/post f:=1e400"),
        c("json-raw-big-integer", "{u}/post n:=12345678901234567890123"),
        c("json-raw-duplicate-keys", #"{u}/post 'o:={"z":1,"z":2}'"#),
        c("json-raw-unordered-keys", #"{u}/post 'o:={"z":1,"a":2}'"#),
        c("json-raw-unicode-escape", #"{u}/post 'o:={"k":"\u00fc"}'"#),
        c("json-raw-unicode", #"{u}/post 's:="ü"'"#),
        c("json-raw-nested", #"{u}/post 'o:={"a":{"b":[{"c":1}]}}'"#),
        c("json-raw-invalid", "{u}/post x:={nope"),
        c("json-raw-empty", "{u}/post x:="),
        c("json-raw-whitespace", "{u}/post 'x:=  1  '"),
        c("json-repeated-key", "{u}/post a=1 a=2"),
        c("json-repeated-raw-key", "{u}/post a:=1 a:=2"),
        c("json-unicode-value", "{u}/post a=ü"),
        c("json-unicode-key", "{u}/post ü=ö"),
        c("json-cjk", "{u}/post 日本=語"),
        c("json-emoji", "{u}/post e=😀"),
        c("json-quotes-in-value", #"{u}/post 'q=say "hi"'"#),
        c("json-backslash-in-value", #"{u}/post 'b=a\b'"#),
        c("json-newline-in-value", "{u}/post $'n=a\\nb'"),
        c("json-tab-in-value", "{u}/post $'t=a\\tb'"),
        c("json-control-in-value", "{u}/post $'c=a\\x01b'"),
        c("json-slash-in-value", "{u}/post s=a/b"),
        c("json-escaped-equals-key", #"{u}/post 'a\=b=c'"#),
        c("json-escaped-colon-key", #"{u}/post 'a\:b=c'"#),
        c("json-escaped-at-key", #"{u}/post 'a\@b=c'"#),
        c("json-escaped-backslash-key", #"{u}/post 'a\\b=1'"#),
        c("json-backslash-key", #"{u}/post 'c\d=2'"#),
        c("json-double-backslash-key", #"{u}/post 'x\\\\y=4'"#),
        c("json-escaped-equals-value", #"{u}/post 'a=b\=c'"#),
        c("json-value-with-equals", "{u}/post a=b=c"),
        c("json-value-with-colon", "{u}/post a=b:c"),
        c("json-file-value", "{u}/post a=@hello.txt"),
        c("json-file-raw", "{u}/post a:=@data.json"),
        c("json-file-missing", "{u}/post a=@missing.txt"),
        c("json-file-raw-invalid", "{u}/post a:=@bad.json"),
        c("json-file-binary", "{u}/post a=@blob.bin"),
        c("json-flag-get", "--json {u}/get"),
        c("json-flag-short", "-j {u}/post a=1"),
        c("json-flag-post-empty", "--json POST {u}/post"),
        c("json-with-header", "{u}/post a=1 X-A:1 b:=2"),
        c("json-empty-key", "{u}/post =v"),
        c("json-empty-key-raw", "{u}/post :=1"),
        c("json-empty-key-file", "{u}/post =@hello.txt"),
        c("query-empty-key", "{u}/get ==v"),
        c("form-empty-key", "--form {u}/post =v"),
        c("json-many", "{u}/post " + (1...40).map { "k\($0)=v\($0)" }.joined(separator: " ")),
    ]

    static let nestedJSON: [OracleCase] = [
        c("nested-object", "{u}/post user[name]=Ann"),
        c("nested-two-members", "{u}/post user[name]=Ann user[age]:=30"),
        c("nested-append", "{u}/post tags[]=a tags[]=b"),
        c("nested-index", "{u}/post points[2]:=5"),
        c("nested-index-zero-one", "{u}/post a[0]=x a[1]=y"),
        c("nested-deep", "{u}/post a[b][c][d]=1"),
        c("nested-array-of-objects", "{u}/post 'a[][x]=1'"),
        c("nested-top-level-array", "{u}/post '[]=a' '[]=b'"),
        c("nested-top-level-index", "{u}/post '[1]=b'"),
        c("nested-escaped-brackets", #"{u}/post 'a\[x\]=1'"#),
        c("nested-into-raw", #"{u}/post 'a:={"b":1}' a[c]=2"#),
        c("nested-conflict", "{u}/post a=1 a[b]=2"),
        c("nested-unclosed", "{u}/post 'a[b=1'"),
        c("nested-text-after-bracket", "{u}/post 'a[b]c=1'"),
        c("nested-mixed-with-plain", "{u}/post x=1 a[b]=2 y:=3"),
        c("nested-numeric-key", "{u}/post a[x1]=1"),
        c("nested-negative-index", "{u}/post 'a[-1]=1'"),
        c("nested-unicode-key", "{u}/post 'a[ü]=1'"),
    ]

    static let queryItems: [OracleCase] = [
        c("query-one", "{u}/get q==1"),
        c("query-two", "{u}/get a==1 b==2"),
        c("query-repeated", "{u}/get q==1 q==2"),
        c("query-space", "{u}/get 'q==a b'"),
        c("query-unicode", "{u}/get q==ü"),
        c("query-unicode-key", "{u}/get ü==1"),
        c("query-empty-value", "{u}/get q=="),
        c("query-ampersand", "{u}/get 'q==a&b'"),
        c("query-equals", "{u}/get 'q==a=b'"),
        c("query-plus", "{u}/get 'q==a+b'"),
        c("query-reserved", "{u}/get 'q==/?#[]@'"),
        c("query-subdelims", "{u}/get \"q==!\\$'()*,;\""),
        c("query-percent", "{u}/get 'q==%20'"),
        c("query-tilde-dash", "{u}/get 'q==a-b_c.d~e'"),
        c("query-escaped-key", #"{u}/get 'a\=b==1'"#),
        c("query-with-fragment-url", "'{u}/get#frag' q==1"),
        c("query-and-body", "{u}/post q==1 a=1"),
        c("query-quote", #"{u}/get 'q==say "hi"'"#),
        c("query-newline", "{u}/get $'q==a\\nb'"),
        c("query-file", "{u}/get q==@hello.txt"),
    ]

    static let forms: [OracleCase] = [
        c("form-one", "--form {u}/post a=1"),
        c("form-short", "-f {u}/post a=1 b=2"),
        c("form-space", "-f {u}/post 'a=x y'"),
        c("form-unicode", "-f {u}/post a=ü"),
        c("form-ampersand-equals", "-f {u}/post 'a=&='"),
        c("form-plus", "-f {u}/post 'a=+'"),
        c("form-unreserved", "-f {u}/post 'a=~._-'"),
        c("form-reserved", "-f {u}/post 'a=/?:@!$*'"),
        c("form-quote-percent", "-f {u}/post \"a='%\\\"\""),
        c("form-repeated", "-f {u}/post a=1 a=2"),
        c("form-raw-number", "-f {u}/post a:=1"),
        c("form-raw-object", #"-f {u}/post 'o:={"a":1}'"#),
        c("form-raw-true", "-f {u}/post t:=true"),
        c("form-raw-string", #"-f {u}/post 's:="x"'"#),
        c("form-raw-array", "-f {u}/post 'a:=[1,2]'"),
        c("form-file-value", "-f {u}/post a=@hello.txt"),
        c("form-nested-name", "-f {u}/post a[b]=1"),
        c("form-no-items", "--form POST {u}/post"),
        c("form-content-type-given", "-f {u}/post Content-Type:text/plain a=1"),
        c("form-empty-value", "-f {u}/post a="),
        c("form-unicode-key", "-f {u}/post ü=1"),
        c("form-newline", "-f {u}/post $'a=x\\ny'"),
        c("form-with-query", "-f {u}/post q==1 a=1"),
        c("form-escaped-key", #"-f {u}/post 'a\=b=c'"#),
        c("form-get", "-f GET {u}/get a=1"),
    ]

    static let multipart: [OracleCase] = [
        c("multipart-fields", "--multipart {u}/post a=1 b=2"),
        c("multipart-file", "{u}/post f@hello.txt"),
        c("multipart-file-and-field", "{u}/post a=1 f@hello.txt"),
        c("multipart-form-and-file", "--form {u}/post a=1 f@hello.txt"),
        c("multipart-binary-file", "--form {u}/post f@blob.bin"),
        c("multipart-no-extension", "--form {u}/post f@noext"),
        c("multipart-json-file", "--form {u}/post f@data.json"),
        c("multipart-html-file", "--form {u}/post f@page.html"),
        c("multipart-file-type", "--form {u}/post 'f@hello.txt;type=text/x-custom'"),
        c("multipart-unicode-file-name", "--form {u}/post f@ü.txt"),
        c("multipart-space-file-name", "--form {u}/post 'f@two words.txt'"),
        c("multipart-two-files", "--form {u}/post f@hello.txt g@noext"),
        c("multipart-same-name-files", "--form {u}/post f@hello.txt f@noext"),
        c("multipart-raw-number", "--multipart {u}/post n:=1"),
        c("multipart-raw-object", #"--multipart {u}/post 'o:={"a": 1}'"#),
        c("multipart-file-value", "--multipart {u}/post a=@hello.txt"),
        c("multipart-unicode-field", "--multipart {u}/post ü=ö"),
        c("multipart-quote-in-name", #"--multipart {u}/post 'a"b=1'"#),
        c("multipart-empty", "--multipart POST {u}/post"),
        c("multipart-missing-file", "--form {u}/post f@missing.txt"),
        c("multipart-with-query", "--form {u}/post q==1 f@hello.txt"),
        c("multipart-with-header", "--form {u}/post X-A:1 f@hello.txt"),
        c("multipart-boundary-flag", "--multipart --boundary=xoxo {u}/post a=1"),
        c("multipart-file-without-form-flag-json", "--json {u}/post f@hello.txt"),
        c("multipart-content-type-given", "--multipart {u}/post Content-Type:multipart/mixed a=1"),
        c("multipart-empty-boundary-flag", "--multipart --boundary=xoxo POST {u}/post"),
        c("multipart-then-form", "--multipart --form {u}/post a=1"),
        c("form-then-multipart", "--form --multipart {u}/post a=1"),
        c("multipart-then-json", "--multipart --json {u}/post a=1"),
    ]

    static let bodies: [OracleCase] = [
        c("stdin-text", "{u}/post").stdin("hello"),
        c("stdin-json", "{u}/post").stdin(#"{"a": 1}"#),
        c("stdin-json-array", "{u}/post").stdin("[1, 2]"),
        c("stdin-json-scalar", "{u}/post").stdin("42"),
        c("stdin-put", "PUT {u}/put").stdin("body"),
        c("stdin-get", "GET {u}/get").stdin("body"),
        c("stdin-empty", "{u}/post").stdin(""),
        c("stdin-newline-only", "{u}/post").stdin("\n"),
        c("stdin-binary", "{u}/post").stdin(Data((0...255).map { UInt8($0) })),
        c("stdin-unicode", "{u}/post").stdin("grüße 日本\n"),
        c("stdin-crlf", "{u}/post").stdin("a\r\nb\r\n"),
        c("stdin-form", "--form {u}/post").stdin("a=1&b=2"),
        c("stdin-with-header", "{u}/post Content-Type:text/plain").stdin("text"),
        c("stdin-with-query", "{u}/post q==1").stdin("text"),
        c("stdin-with-items", "{u}/post a=1").stdin("body"),
        c("stdin-ignored", "--ignore-stdin {u}/post a=1").stdin("body"),
        c("stdin-ignored-short", "-I {u}/get").stdin("body"),
        c("stdin-large", "{u}/post").stdin(bigText),
        c("stdin-json-flag", "--json {u}/post").stdin("text"),
        c("stdin-with-raw", "--raw=x {u}/post").stdin("body"),
        c("raw-text", "--raw=hello {u}/post"),
        c("raw-json", #"--raw '{"a": 1}' {u}/post"#),
        c("raw-empty", "--raw= {u}/post"),
        c("raw-with-items", "--raw=x {u}/post a=1"),
        c("raw-put", "--raw=x PUT {u}/put"),
        c("raw-form", "--raw=a=1 --form {u}/post"),
        c("raw-unicode", "--raw=ü {u}/post"),
        c("body-file", "{u}/post @hello.txt"),
        c("body-file-json", "{u}/post @data.json"),
        c("body-file-binary", "{u}/post @blob.bin"),
        c("body-file-put", "PUT {u}/put @hello.txt"),
        c("body-file-missing", "{u}/post @missing.txt"),
        c("body-file-with-items", "{u}/post @hello.txt a=1"),
        c("body-file-form", "--form {u}/post @hello.txt"),
        c("body-file-html", "{u}/post @page.html"),
    ]

    static let offline: [OracleCase] = [
        c("offline-get", "--offline {u}/get"),
        c("offline-post-json", "--offline {u}/post a=1 b:=2"),
        c("offline-form", "--offline --form {u}/post a=1 'b=x y'"),
        c("offline-multipart", "--offline --multipart {u}/post a=1"),
        c("offline-multipart-file", "--offline --form {u}/post f@hello.txt"),
        c("offline-query", "--offline {u}/get 'q==a b' u==ü"),
        c("offline-headers", "--offline {u}/get X-A:1 X-A:2 'X-E;' Accept:"),
        c("offline-host", "--offline {h}/get Host:example.org"),
        c("offline-print-headers", "--offline --print=H {u}/post a=1"),
        c("offline-print-body", "--offline --print=B {u}/post a=1"),
        c("offline-verbose", "--offline -v {u}/post a=1"),
        c("offline-chunked", "--offline --chunked {u}/post a=1"),
        c("offline-raw", "--offline --raw=hello {u}/post"),
        c("offline-stdin", "--offline {u}/post").stdin("piped"),
        c("offline-auth", "--offline -a user:pass {u}/get"),
        c("offline-bearer", "--offline -A bearer -a token {u}/get"),
        c("offline-shorthand", "--offline :{p}/x"),
        c("offline-method-schemeless", "--offline GET {h}/x"),
        c("offline-unicode-url", "--offline '{u}/ü?q=ü'"),
        c("offline-nested", "--offline {u}/post 'a[b][]=1' 'a[b][]=2'"),
        c("offline-raw-json-values", #"--offline {u}/post 'o:={"z": 1.0, "a": -0.0}' e:=1e400"#),
        c("offline-compress", "--offline -x {u}/post a=1"),
        c("offline-compress-big", "--offline -x {u}/post @big.txt").file("big.txt", bigText),
        c("offline-head", "--offline HEAD {u}/x"),
        c("offline-json-flag", "--offline --json {u}/get"),
        c("offline-path-as-is", "--offline --path-as-is {u}/a/../b"),
        c("offline-default-scheme", "--offline --default-scheme https {h}/x"),
        c("offline-body-file", "--offline {u}/post @data.json"),
        c("offline-empty-header", "--offline {u}/get 'X-E;'"),
        c("offline-session", "--offline --session=./s.json {u}/get X-S:1"),
    ]

    static let printing: [OracleCase] = [
        c("print-verbose", "-v {u}/post a=1"),
        c("print-verbose-long", "--verbose {u}/get X-A:1"),
        c("print-headers", "-h {u}/get"),
        c("print-body", "-b {u}/get"),
        c("print-body-long", "--body {u}/post a=1"),
        c("print-request-headers", "--print=H {u}/post a=1"),
        c("print-request-body", "-p B {u}/post a=1"),
        c("print-response-headers-and-body", "--print=hb {u}/get"),
        c("print-everything", "--print=HBhb {u}/post a=1"),
        c("print-quiet", "-q {u}/post a=1"),
        c("print-quiet-twice", "-qq {u}/post a=1"),
        c("print-verbose-multipart", "-v --multipart {u}/post a=1"),
        c("print-verbose-chunked", "-v --chunked {u}/post a=1"),
        c("print-verbose-form", "-v -f {u}/post a=1"),
        c("print-all", "--all {u}/get"),
        c("print-pretty-none", "--pretty=none {u}/get"),
        c("print-pretty-all", "--pretty=all {u}/get").responds(.json(#"{"b": 1, "a": [1, 2]}"#)),
        c("print-json-body", "{u}/get").responds(.json(#"{"b": 1, "a": [1, 2]}"#)),
        c("print-style", "--style=monokai {u}/get"),
        c("print-style-httpie-dark", "--style=dracula {u}/get"),
        c("print-style-httpie-light", "--style=pie-light {u}/get"),
        c("print-style-httpie-grey", "--style=friendly_grayscale {u}/get"),
        c("print-style-unknown", "--style=neon {u}/get"),
        c("print-meta-long", "--meta {u}/get"),
        c("print-unsorted", "--unsorted {u}/get"),
        c("print-sorted", "--sorted {u}/get"),
        c("print-meta", "-m {u}/get"),
        c("print-binary-body", "{u}/get").responds(
            .file(payload, headers: [("Content-Type", "application/octet-stream")])),
        c("print-html-body", "{u}/get").responds(
            .file(Data("<p>hi</p>".utf8), headers: [("Content-Type", "text/html")])),
        c("print-response-charset", "--response-charset=latin1 {u}/get"),
        c("print-response-mime", "--response-mime=application/json {u}/get").responds(.json(#"{"a":1}"#)),
        c("print-format-options", "--format-options=json.indent:2 {u}/get").responds(.json(#"{"a":1}"#)),
        c("print-history-print", "--all -P H {u}/get"),
        c("print-stream", "-S {u}/get"),
        c("print-stream-verbose", "-S -v {u}/get"),
    ]

    static let authentication: [OracleCase] = [
        c("auth-basic", "-a user:pass {u}/basic"),
        c("auth-basic-long", "--auth=user:pass {u}/basic"),
        c("auth-basic-type", "-A basic -a user:pass {u}/basic"),
        c("auth-basic-empty-password", "-a user: {u}/basic"),
        c("auth-basic-colon-in-password", "-a user:pa:ss {u}/basic"),
        c("auth-basic-unicode", "-a ü:ö {u}/basic"),
        c("auth-basic-cjk", "-a 日本:語 {u}/basic"),
        c("auth-basic-space", "-a 'a user:a pass' {u}/basic"),
        c("auth-bearer", "-A bearer -a token123 {u}/bearer"),
        c("auth-bearer-long", "--auth-type=bearer --auth=abc.def.ghi {u}/bearer"),
        c("auth-header-wins", "-a user:pass {u}/basic 'Authorization:Custom x'"),
        c("auth-header-removed", "-a user:pass {u}/basic Authorization:"),
        c("auth-url-and-flag", "-a user:pass http://other:secret@127.0.0.1:{p}/basic"),
        c("auth-with-body", "-a user:pass {u}/post a=1"),
        c("auth-empty-user", "-a :pass {u}/basic"),
        c("auth-digest-qop", "-A digest -a user:pass {u}/digest").responds(
            CannedResponse(
                401, "Unauthorized",
                headers: [("WWW-Authenticate", #"Digest realm="oracle", nonce="6f1c2a", qop="auth", opaque="0a0b""#)]),
            .ok),
        c("auth-digest-no-qop", "-A digest -a user:pass {u}/digest").responds(
            CannedResponse(
                401, "Unauthorized", headers: [("WWW-Authenticate", #"Digest realm="oracle", nonce="6f1c2a""#)]), .ok),
        c("auth-digest-query", "-A digest -a user:pass '{u}/digest?a=1&b=ü'").responds(
            CannedResponse(
                401, "Unauthorized",
                headers: [("WWW-Authenticate", #"Digest realm="oracle", nonce="6f1c2a", qop="auth""#)]), .ok),
        c("auth-digest-post", "-A digest -a user:pass {u}/digest a=1").responds(
            CannedResponse(
                401, "Unauthorized",
                headers: [("WWW-Authenticate", #"Digest realm="oracle", nonce="6f1c2a", qop="auth""#)]), .ok),
        c("auth-digest-no-challenge", "-A digest -a user:pass {u}/digest"),
        c("auth-digest-refused", "-A digest -a user:pass {u}/digest").responds(
            CannedResponse(
                401, "Unauthorized",
                headers: [("WWW-Authenticate", #"Digest realm="oracle", nonce="6f1c2a", qop="auth""#)])),
        c("auth-basic-challenge-ignored", "-a user:pass {u}/basic").responds(
            CannedResponse(401, "Unauthorized", headers: [("WWW-Authenticate", #"Basic realm="oracle""#)])),
        c("auth-netrc", "{u}/netrc").homeFile(".netrc", "machine 127.0.0.1 login nu password np\n"),
        c("auth-netrc-ignored", "--ignore-netrc {u}/netrc").homeFile(
            ".netrc", "machine 127.0.0.1 login nu password np\n"),
        c("auth-netrc-flag-wins", "-a user:pass {u}/netrc").homeFile(
            ".netrc", "machine 127.0.0.1 login nu password np\n"),
        c("auth-netrc-default", "{u}/netrc").homeFile(".netrc", "default login du password dp\n"),
        c("auth-netrc-other-host", "{u}/netrc").homeFile(".netrc", "machine example.org login nu password np\n"),
        c("auth-netrc-multiline", "{u}/netrc").homeFile(
            ".netrc", "machine example.org\n  login a\n  password b\n\nmachine 127.0.0.1\n  login nu\n  password np\n"),
        c("auth-netrc-header-wins", "{u}/netrc Authorization:Bearer-t").homeFile(
            ".netrc", "machine 127.0.0.1 login nu password np\n"),
    ]

    static let chunked: [OracleCase] = [
        c("chunked-json", "--chunked {u}/post a=1"),
        c("chunked-form", "--chunked --form {u}/post a=1"),
        c("chunked-multipart", "--chunked --multipart {u}/post a=1"),
        c("chunked-file-part", "--chunked --form {u}/post f@hello.txt"),
        c("chunked-stdin", "--chunked {u}/post").stdin("line one\nline two\n"),
        c("chunked-body-file", "--chunked {u}/post @hello.txt"),
        c("chunked-raw", "--chunked --raw=hello {u}/post"),
        c("chunked-no-body", "--chunked {u}/get"),
        c("chunked-empty-raw", "--chunked --raw= {u}/post"),
        c("chunked-compress", "--chunked -x {u}/post a=1"),
        c("chunked-large-stdin", "--chunked {u}/post").stdin(bigText),
    ]

    static let compression: [OracleCase] = [
        c("compress-small", "-x {u}/post a=1"),
        c("compress-big", "-x {u}/post @big.txt").file("big.txt", bigText),
        c("compress-always-small", "-xx {u}/post a=1"),
        c("compress-big-json", "-x {u}/post a=@big.txt").file("big.txt", bigText),
        c("compress-form", "-x --form {u}/post a=@big.txt").file("big.txt", bigText),
        c("compress-stdin", "-x {u}/post").stdin(bigText),
        c("compress-multipart", "-x --multipart {u}/post a=1"),
        c("compress-no-body", "-x {u}/get"),
        // Not `-x @small-file`: httpie 3.2.4 then sends a Content-Length and no body, and waits for ever.
    ]

    private static let sessionCookie = CannedResponse.setting(cookies: ["sid=abc; Path=/"])

    static let sessions: [OracleCase] = [
        c("session-header-kept", "--session=./s.json {u}/one X-S:1").then("--session=./s.json {u}/two"),
        c("session-cookie-kept", "--session=./s.json {u}/login").then("--session=./s.json {u}/next")
            .responds(sessionCookie, .ok),
        c("session-two-cookies", "--session=./s.json {u}/login").then("--session=./s.json {u}/next")
            .responds(.setting(cookies: ["a=1; Path=/", "b=2; Path=/"]), .ok),
        c("session-cookie-path", "--session=./s.json {u}/login").then("--session=./s.json {u}/elsewhere/x")
            .responds(.setting(cookies: ["p=1; Path=/only"]), .ok),
        c("session-cookie-secure", "--session=./s.json {u}/login").then("--session=./s.json {u}/next")
            .responds(.setting(cookies: ["s=1; Path=/; Secure"]), .ok),
        c("session-cookie-expired", "--session=./s.json {u}/login").then("--session=./s.json {u}/next")
            .responds(.setting(cookies: ["old=1; Path=/; Expires=Wed, 21 Oct 2015 07:28:00 GMT"]), .ok),
        c("session-cookie-deleted", "--session=./s.json {u}/login").then("--session=./s.json {u}/logout")
            .then("--session=./s.json {u}/next")
            .responds(sessionCookie, .setting(cookies: ["sid=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT"]), .ok),
        c("session-cookie-item", "--session=./s.json {u}/one Cookie:c=1").then("--session=./s.json {u}/two"),
        c("session-auth-kept", "--session=./s.json -a user:pass {u}/one").then("--session=./s.json {u}/two"),
        c("session-bearer-kept", "--session=./s.json -A bearer -a tok {u}/one").then("--session=./s.json {u}/two"),
        c("session-header-overridden", "--session=./s.json {u}/one X-S:1").then("--session=./s.json {u}/two X-S:2"),
        c("session-header-removed", "--session=./s.json {u}/one X-S:1").then("--session=./s.json {u}/two X-S:"),
        c(
            "session-content-headers-not-kept",
            "--session=./s.json {u}/one Content-Type:text/plain If-None-Match:x X-Keep:1 a=1"
        ).then("--session=./s.json {u}/two"),
        c("session-user-agent-kept", "--session=./s.json {u}/one User-Agent:custom/1").then(
            "--session=./s.json {u}/two"),
        c("session-read-only", "--session-read-only=./s.json {u}/one X-S:1").then("--session=./s.json {u}/two")
            .file(
                "s.json",
                #"{"__meta__": {"about": "HTTPie session file", "httpie": "3.2.4"}, "auth": {"password": null, "type": null, "username": null}, "cookies": [], "headers": [{"name": "X-Old", "value": "1"}]}"#
            ),
        c("session-httpie3-file", "--session=./s.json {u}/one").file(
            "s.json",
            #"{"__meta__": {"about": "HTTPie session file", "httpie": "3.2.4"}, "auth": {"password": null, "type": null, "username": null}, "cookies": [{"domain": "127.0.0.1", "expires": null, "name": "jar", "path": "/", "secure": false, "value": "1"}], "headers": [{"name": "X-From", "value": "file"}]}"#
        ),
        c("session-httpie3-domainless-cookie", "--session=./s.json {u}/one").file(
            "s.json",
            #"{"__meta__": {"about": "HTTPie session file", "httpie": "3.2.4"}, "auth": {"password": null, "type": null, "username": null}, "cookies": [{"domain": "", "expires": null, "name": "typed", "path": "/", "secure": false, "value": "2"}], "headers": []}"#
        ),
        c("session-httpie2-file", "--session=./s.json {u}/one").file(
            "s.json",
            #"{"__meta__": {"about": "HTTPie session file", "httpie": "2.6.0"}, "auth": {"password": null, "type": null, "username": null}, "cookies": {"old": {"expires": null, "path": "/", "secure": false, "value": "4"}}, "headers": {"X-Old": "yes"}}"#
        ),
        c("session-localhost", "--session=./s.json localhost:{p}/login").then("--session=./s.json localhost:{p}/next")
            .responds(sessionCookie, .ok),
        c("session-by-name", "--session=work {u}/one X-S:1").then("--session=work {u}/two"),
        c("session-made-by-httpie", "--session=./s.json {u}/login X-S:1").then("--session=./s.json {u}/next")
            .first(by: .httpie).responds(sessionCookie, .ok),
        c("session-read-by-httpie", "--session=./s.json {u}/login X-S:1")
            .then("--session=./s.json {u}/next", tool: .httpie).responds(sessionCookie, .ok),
        c("session-made-by-httpie-offline", "--offline --session=./s.json {u}/x Cookie:typed=1 X-S:1")
            .then("--session=./s.json {u}/next").first(by: .httpie),
        c("session-cookie-header-and-jar", "--session=./s.json {u}/login").then(
            "--session=./s.json {u}/next Cookie:extra=1"
        ).responds(sessionCookie, .ok),
        c("session-new-file-get", "--session=./new.json {u}/get"),
    ]

    static let downloads: [OracleCase] = [
        c("download-name-from-url", "-d {u}/files/report.bin").onTerminal()
            .responds(.file(payload, headers: [("Content-Type", "application/octet-stream")])),
        c("download-content-disposition", "-d {u}/get").onTerminal().responds(
            .file(
                payload,
                headers: [
                    ("Content-Type", "application/octet-stream"),
                    ("Content-Disposition", #"attachment; filename="served.bin""#),
                ])),
        c("download-output", "-d -o out.bin {u}/x").onTerminal()
            .responds(.file(payload, headers: [("Content-Type", "application/octet-stream")])),
        c("download-output-only", "-o out.bin {u}/x").onTerminal()
            .responds(.file(payload, headers: [("Content-Type", "application/octet-stream")])),
        c("download-existing-name", "-d {u}/hello.txt").onTerminal()
            .responds(.file(Data("new\n".utf8), headers: [("Content-Type", "text/plain")])),
        c("download-no-name", "-d {u}/").onTerminal()
            .responds(.file(Data("<p>x</p>".utf8), headers: [("Content-Type", "text/html")])),
        c("download-json-type", "-d {u}/api/thing").onTerminal().responds(.json(#"{"a": 1}"#)),
        c("download-query-in-url", "-d '{u}/dir/name.txt?x=1'").onTerminal()
            .responds(.file(Data("text\n".utf8), headers: [("Content-Type", "text/plain")])),
        c("download-unicode-disposition", "-d {u}/get").onTerminal().responds(
            .file(
                payload,
                headers: [("Content-Disposition", #"attachment; filename*=UTF-8''gr%C3%BC%C3%9Fe.bin"#)])),
        c("download-hostile-name", "-d {u}/get").onTerminal().responds(
            .file(payload, headers: [("Content-Disposition", #"attachment; filename="../../evil.bin""#)])),
        c("download-error-status", "-d {u}/missing.bin").onTerminal().responds(.status(404, "Not Found")),
        c("download-error-status-output", "-o out.bin {u}/missing.bin").onTerminal()
            .responds(.status(404, "Not Found")),
        c("download-resume", "-d -c -o part.bin {u}/x").onTerminal().file("part.bin", payload.prefix(1000))
            .responds(
                CannedResponse(
                    206, "Partial Content",
                    headers: [("Content-Range", "bytes 1000-4999/5000"), ("Content-Type", "application/octet-stream")],
                    body: payload.dropFirst(1000))),
        c("download-resume-missing-file", "-d -c -o part.bin {u}/x").onTerminal()
            .responds(.file(payload, headers: [("Content-Type", "application/octet-stream")])),
        c("download-resume-ignored-by-server", "-d -c -o part.bin {u}/x").onTerminal().file(
            "part.bin", payload.prefix(10)
        )
        .responds(.file(payload, headers: [("Content-Type", "application/octet-stream")])),
        c("download-continue-without-download", "-c -o part.bin {u}/x").onTerminal()
            .file("part.bin", payload.prefix(1000))
            .responds(
                CannedResponse(
                    206, "Partial Content",
                    headers: [("Content-Range", "bytes 1000-4999/5000"), ("Content-Type", "application/octet-stream")],
                    body: payload.dropFirst(1000))),
        c("download-replace-existing-output", "-o hello.txt {u}/x").onTerminal()
            .responds(.file(Data("replaced\n".utf8), headers: [("Content-Type", "text/plain")])),
        c("download-quiet", "-q -d {u}/q.bin").onTerminal()
            .responds(.file(payload, headers: [("Content-Type", "application/octet-stream")])),
        c("download-piped", "-d {u}/piped.bin")
            .responds(.file(payload, headers: [("Content-Type", "application/octet-stream")])),
        c("download-output-dash", "-d -o - {u}/dash.bin")
            .responds(.file(payload, headers: [("Content-Type", "application/octet-stream")])),
        c("download-verbose", "-v -d {u}/v.bin").onTerminal()
            .responds(.file(payload, headers: [("Content-Type", "application/octet-stream")])),
        c("download-post", "-d {u}/export a=1").onTerminal()
            .responds(.file(payload, headers: [("Content-Disposition", #"attachment; filename="export.bin""#)])),
        c("download-missing-folder", "-o sub/dir/out.bin {u}/x").onTerminal()
            .responds(.file(payload, headers: [("Content-Type", "application/octet-stream")])),
        c("download-empty-body", "-d {u}/empty.txt").onTerminal()
            .responds(.file(Data(), headers: [("Content-Type", "text/plain")])),
    ]

    static let redirects: [OracleCase] = [
        c("redirect-not-followed", "{u}/r").responds(.redirect(302, to: "/next"), .ok),
        c("redirect-follow-302-get", "--follow {u}/r").responds(.redirect(302, to: "/next"), .ok),
        c("redirect-follow-302-post", "--follow {u}/r a=1").responds(.redirect(302, to: "/next"), .ok),
        c("redirect-follow-303-post", "--follow {u}/r a=1").responds(.redirect(303, to: "/next"), .ok),
        c("redirect-follow-307-post", "--follow {u}/r a=1").responds(.redirect(307, to: "/next"), .ok),
        c("redirect-follow-308-put", "--follow PUT {u}/r a=1").responds(.redirect(308, to: "/next"), .ok),
        c("redirect-follow-301-post", "--follow {u}/r a=1").responds(.redirect(301, to: "/next"), .ok),
        c("redirect-follow-relative", "--follow {u}/a/b").responds(.redirect(302, to: "c?x=1"), .ok),
        c("redirect-follow-absolute", "--follow {u}/r").responds(.redirect(302, to: "http://127.0.0.1:{p}/abs"), .ok),
        c("redirect-follow-headers-kept", "--follow {u}/r X-A:1").responds(.redirect(302, to: "/next"), .ok),
        c("redirect-follow-auth-same-host", "--follow -a user:pass {u}/r").responds(.redirect(302, to: "/next"), .ok),
        c("redirect-follow-auth-other-host", "--follow -a user:pass {u}/r").responds(
            .redirect(302, to: "http://localhost:{p}/next"), .ok),
        c("redirect-too-many", "--follow --max-redirects=2 {u}/r").responds(.redirect(302, to: "/again")),
        c("redirect-follow-all", "--follow --all {u}/r").responds(.redirect(302, to: "/next"), .ok),
        c("redirect-check-status", "--check-status {u}/r").responds(.redirect(302, to: "/next"), .ok),
        c("redirect-follow-fragment", "--follow {u}/r").responds(.redirect(302, to: "/next#frag"), .ok),
        c("redirect-follow-unicode", "--follow {u}/r").responds(.redirect(302, to: "/n%C3%A4chste"), .ok),
        c("redirect-follow-cookie", "--follow {u}/r").responds(
            CannedResponse(302, "Found", headers: [("Location", "/next"), ("Set-Cookie", "r=1; Path=/")]), .ok),
    ]

    static let statuses: [OracleCase] = [
        c("status-404", "{u}/missing").responds(.status(404, "Not Found")),
        c("status-404-check", "--check-status {u}/missing").responds(.status(404, "Not Found")),
        c("status-500-check", "--check-status {u}/error").responds(.status(500, "Internal Server Error")),
        c("status-503-check-quiet", "-q --check-status {u}/error").responds(.status(503, "Service Unavailable")),
        c("status-418-check", "--check-status {u}/teapot").responds(.status(418, "I'm a teapot")),
        c("status-204", "{u}/none").responds(CannedResponse(204, "No Content")),
        c("status-201-check", "--check-status {u}/made").responds(.status(201, "Created")),
        c("status-600-check", "--check-status {u}/odd").responds(.status(600, "Odd")),
        c("status-connection-refused", "http://127.0.0.1:1/x"),
        c("status-unknown-host", "http://no-such-host.invalid/x"),
        c("status-bad-scheme", "ftp://127.0.0.1:{p}/x"),
        c("status-no-url", "--json"),
        c("status-bad-print", "--print=x {u}/get"),
        c("status-bad-item", "{u}/post 'not an item'"),
        c("status-unknown-flag", "--no-such-flag {u}/get"),
        c("status-timeout-ok", "--timeout=30 {u}/get"),
        c("status-max-headers", "--max-headers=1 {u}/get"),
    ]

    static let proxies: [OracleCase] = [
        c("proxy-http", "--proxy=http:http://{h} http://example.org/x"),
        c("proxy-http-query", "--proxy=http:http://{h} 'http://example.org/x?a=1&b=ü'"),
        c("proxy-http-post", "--proxy=http:http://{h} http://example.org/post a=1"),
        c("proxy-http-auth", "--proxy=http:http://pu:pp@{h} http://example.org/x"),
        c("proxy-https-connect", "--proxy=https:http://{h} https://example.org/x"),
        c("proxy-environment", "http://example.org/env").environment("http_proxy", "http://{h}"),
        c("proxy-environment-upper", "http://example.org/env").environment("HTTP_PROXY", "http://{h}"),
        c("proxy-environment-all", "http://example.org/env").environment("all_proxy", "http://{h}"),
        c("proxy-environment-no-proxy", "{u}/direct").environment("http_proxy", "http://127.0.0.1:1")
            .environment("no_proxy", "127.0.0.1"),
        c("proxy-flag-over-environment", "--proxy=http:http://{h} http://example.org/x")
            .environment("http_proxy", "http://127.0.0.1:1"),
    ]

    static let flags: [OracleCase] = [
        c("flag-ignore-stdin-no-stdin", "--ignore-stdin {u}/get"),
        c("flag-check-status-ok", "--check-status {u}/get"),
        c("flag-timeout", "--timeout=5 {u}/post a=1"),
        c("flag-verify-no-http", "--verify=no {u}/get"),
        c("flag-max-redirects", "--max-redirects=3 {u}/get"),
        c("flag-ssl-version", "--ssl=tls1.2 {u}/get"),
        c("flag-ciphers", "--ciphers=ECDHE-RSA-AES128-GCM-SHA256 {u}/get"),
        c("flag-boundary-form", "--form --boundary=xoxo {u}/post f@hello.txt"),
        c("flag-traceback", "--traceback {u}/get"),
        c("flag-ssl-negotiate", "--ssl=ssl2.3 {u}/get"),
        c("flag-ssl-unknown", "--ssl=tls9 {u}/get"),
        c("flag-debug", "--debug {u}/post a=1"),
        c("config-default-options", "{u}/post a=1").homeFile(
            ".config/httpie/config.json", #"{"default_options": ["--form"]}"#),
        c("config-default-options-overridden", "--json {u}/post a=1").homeFile(
            ".config/httpie/config.json", #"{"default_options": ["--form"]}"#),
        c("config-default-options-empty", "{u}/post a=1").homeFile(
            ".config/httpie/config.json", #"{"default_options": []}"#),
        c("config-bad-json", "{u}/post a=1").homeFile(".config/httpie/config.json", "{not json"),
        c("flag-double-dash", "{u}/post -- -a=1"),
        c("flag-raw-and-json", "--json --raw=x {u}/post"),
        c("flag-form-and-json", "--form --json {u}/post a=1"),
        c("flag-path-as-is-dots", "--path-as-is {u}/./a/../b/"),
        c("flag-all-no-redirect", "--all {u}/post a=1"),
        c("flag-default-scheme-uppercase", "--default-scheme HTTP {h}/x"),
        c("flag-offline-cache", "--offline --cache {u}/get"),
        c("flag-session-and-auth-type-digest", "--session=./s.json -A digest -a u:p {u}/digest")
            .then("--session=./s.json {u}/again").responds(
                CannedResponse(
                    401, "Unauthorized",
                    headers: [("WWW-Authenticate", #"Digest realm="oracle", nonce="6f1c2a", qop="auth""#)]), .ok),
    ]
}
