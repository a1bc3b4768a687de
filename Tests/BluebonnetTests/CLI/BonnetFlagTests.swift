import Bluebonnet
import Foundation
import XCTest

/// httpie's flags, in httpie's spelling.
extension BonnetCommandTests {
    func testVersionAndHelpListEveryOption() async throws {
        let version = try await bonnet(["--version"])
        XCTAssertEqual(version.output.trimmingCharacters(in: .whitespacesAndNewlines), bluebonnetVersion)
        let help = try await bonnet(["request", "--help"])
        for option in [
            "--json", "--form", "--multipart", "--verbose", "--headers", "--body", "--print", "--pretty", "--offline",
            "--follow", "--no-follow", "--max-redirects", "--check-status", "--auth", "--auth-type", "--timeout",
            "--timeline", "--curl", "--ignore-stdin", "--compress", "--raw", "--chunked", "--quiet", "--response-mime",
            "--response-charset", "--all", "--history-print", "--style", "--format-options", "-h", "-b", "-v", "-P",
            "-s",
            "-p", "-a", "-A", "-j", "-f",
            "-x",
        ] {
            XCTAssertTrue(help.output.contains(option), "\(option) missing from --help: \(help.output)")
        }
    }

    func testShortHIsHeadersAsInHttpie() async throws {
        let run = try await bonnet(["-h", url("/get")])
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertTrue(run.output.hasPrefix("HTTP/1.1 200 OK"), run.output)
        XCTAssertFalse(run.output.contains("\"args\""), "headers only: \(run.output)")
    }

    func testPrintChoosesThePartsShown() async throws {
        let requestOnly = try await bonnet(["--print=HB", url("/post"), "a=1"])
        XCTAssertTrue(requestOnly.output.contains("POST /post HTTP/1.1"), requestOnly.output)
        XCTAssertTrue(requestOnly.output.contains(#"{"a":"1"}"#), requestOnly.output)
        XCTAssertFalse(requestOnly.output.contains("HTTP/1.1 200"), requestOnly.output)
        let everything = try await bonnet(["-p", "Hhbm", url("/get")])
        XCTAssertTrue(everything.output.contains("GET /get HTTP/1.1"), everything.output)
        XCTAssertTrue(everything.output.contains("HTTP/1.1 200 OK"), everything.output)
        XCTAssertTrue(everything.output.contains("\"args\""), everything.output)
        XCTAssertTrue(everything.output.contains("Timeline"), everything.output)
        let invalid = try await bonnet(["--print=x", url("/get")])
        XCTAssertNotEqual(invalid.status, 0)
    }

    func testPrettyFormatsWhenAskedEvenWhenPiped() async throws {
        let raw = try await bonnet([url("/echo?content_type=application/json")], stdin: Data(#"{"b":1,"a":2}"#.utf8))
        XCTAssertEqual(raw.output, #"{"b":1,"a":2}"#)
        let formatted = try await bonnet(
            ["--pretty=format", url("/echo?content_type=application/json")], stdin: Data(#"{"b":1,"a":2}"#.utf8))
        XCTAssertEqual(formatted.output, "{\n  \"a\" : 2,\n  \"b\" : 1\n}\n")
        // `NO_COLOR` set here whoever runs the tests (`swift test` sets it; running the bundle directly does not).
        let colored = try await bonnet(
            ["--pretty=colors", url("/echo?content_type=application/json")], stdin: Data(#"{"b":1}"#.utf8),
            environment: ["NO_COLOR": "1"])
        XCTAssertEqual(colored.output, #"{"b":1}"# + "\n", "colors alone do not reformat")
    }

    func testCompressDeflatesTheBodyWhenThatMakesItSmallerAndAlwaysWhenRepeated() async throws {
        func drained(_ arguments: [String]) async throws -> [String: Any] {
            let run = try await bonnet(arguments)
            XCTAssertEqual(run.status, 0, run.errors)
            return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
        }
        let text = String(repeating: "compressible ", count: 500)
        let large = try await drained(["-x", url("/drain"), "text=\(text)"])
        XCTAssertEqual(large["contentEncoding"] as? String, "deflate")
        XCTAssertEqual(large["bytes"] as? Int, try JSONSerialization.data(withJSONObject: ["text": text]).count)
        XCTAssertLessThan(try XCTUnwrap(large["encodedBytes"] as? Int), 200)
        let small = try await drained(["--compress", url("/drain"), "a=1"])
        XCTAssertNil(small["contentEncoding"], "deflating 9 bytes makes them longer, so they go as they are")
        let forced = try await drained(["-xx", url("/drain"), "a=1"])
        XCTAssertEqual(forced["contentEncoding"] as? String, "deflate")
        XCTAssertEqual(forced["bytes"] as? Int, 9)
        let offline = try await bonnet(["--offline", "-xx", "http://127.0.0.1:1/things", "a=1"])
        XCTAssertTrue(offline.output.contains("Content-Encoding: deflate"), offline.output)
        XCTAssertFalse(offline.output.contains(#"{"a":"1"}"#), "the body shown is the deflated one")
    }

    func testRawIsTheBodyAndABodyBonnetDidNotBuildIsTypedAsHttpieTypesIt() async throws {
        func echo(_ arguments: [String], stdin: Data? = nil) async throws -> [String: Any] {
            let run = try await bonnet(arguments, stdin: stdin)
            XCTAssertEqual(run.status, 0, run.errors)
            return try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
        }
        let raw = try await echo(["--raw", #"{"a": 1}"#, url("/post")])
        XCTAssertEqual(raw["data"] as? String, #"{"a": 1}"#)
        XCTAssertEqual((raw["headers"] as? [String: String])?["Content-Type"], "application/json")
        let pipedJSON = try await echo([url("/post")], stdin: Data("[1, 2]".utf8))
        XCTAssertEqual((pipedJSON["headers"] as? [String: String])?["Content-Type"], "application/json")
        let pipedText = try await echo([url("/post")], stdin: Data("plain words".utf8))
        XCTAssertNil((pipedText["headers"] as? [String: String])?["Content-Type"], "not JSON: no type is guessed")
        let pipedForm = try await echo(["--form", url("/post")], stdin: Data("a=1&b=2".utf8))
        XCTAssertEqual(pipedForm["form"] as? [String: String], ["a": "1", "b": "2"])
        let mixed = try await bonnet(["--raw", "x", url("/post"), "a=1"])
        XCTAssertEqual(mixed.status, 1, "the body given twice is a usage error: \(mixed.errors)")
    }

    func testChunkedSendsTheBodyWithoutALength() async throws {
        let run = try await bonnet(["--chunked", url("/post"), "a=1"])
        XCTAssertEqual(run.status, 0, run.errors)
        let echo = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
        let headers = try XCTUnwrap(echo["headers"] as? [String: String])
        XCTAssertEqual(headers["Transfer-Encoding"], "chunked", "\(headers)")
        XCTAssertNil(headers["Content-Length"])
        XCTAssertEqual(echo["json"] as? [String: String], ["a": "1"])
        let form = try await bonnet(["--chunked", "--multipart", url("/post"), "a=1"])
        let formEcho = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(form.output.utf8)) as? [String: Any])
        XCTAssertEqual(formEcho["form"] as? [String: String], ["a": "1"], form.output)
        XCTAssertEqual((formEcho["headers"] as? [String: String])?["Transfer-Encoding"], "chunked")
    }

    func testQuietPrintsNothingButKeepsTheExitStatusAndTheDownload() async throws {
        let quiet = try await bonnet(["-q", url("/get")])
        XCTAssertEqual(quiet.status, 0, quiet.errors)
        XCTAssertEqual(quiet.output, "")
        let failed = try await bonnet(["--quiet", "--check-status", url("/status/404")])
        XCTAssertEqual(failed.status, 4)
        XCTAssertEqual(failed.output, "")
        // Piped, the status line is not seen: a warning says it, as httpie's does, unless -qq.
        XCTAssertEqual(failed.errors, "bonnet: warning: HTTP 404 Not Found\n")
        let silent = try await bonnet(["-qq", "--check-status", url("/status/503")])
        XCTAssertEqual(silent.status, 5)
        XCTAssertEqual(silent.output + silent.errors, "")
        let directory = try TemporaryDirectory()
        let saved = try await bonnet(["-q", "-o", "body.bin", url("/bytes/500?seed=2")], in: directory.url)
        XCTAssertEqual(saved.status, 0, saved.errors)
        XCTAssertEqual(saved.output + saved.errors, "", "nothing printed, not even the head")
        XCTAssertEqual(try Data(contentsOf: directory.url.appendingPathComponent("body.bin")).count, 500)
    }

    func testResponseMimeAndCharsetChangeHowTheBodyIsShownOnly() async throws {
        let echo = url("/echo?content_type=text/plain")
        let json = Data(#"  {"b":1,"a":2}"#.utf8)
        let asText = try await bonnet(["--pretty=format", echo], stdin: json)
        XCTAssertEqual(asText.output, #"  {"b":1,"a":2}"# + "\n", "text/plain is shown as it is")
        let asJSON = try await bonnet(["--pretty=format", "--response-mime", "application/json", echo], stdin: json)
        XCTAssertEqual(asJSON.output, "{\n  \"a\" : 2,\n  \"b\" : 1\n}\n")
        let latin1 = Data([0x63, 0x61, 0x66, 0xE9])
        let undecoded = try await bonnet(["--pretty=format", echo], stdin: latin1)
        XCTAssertFalse(undecoded.output.contains("café"), undecoded.output)
        let decoded = try await bonnet(["--pretty=format", "--response-charset", "latin1", echo], stdin: latin1)
        XCTAssertEqual(decoded.output, "café\n")
        // Piped without --pretty, the bytes go out as they came: the charset is for showing only.
        let raw = try await bonnet(["--response-charset", "latin1", echo], stdin: latin1)
        XCTAssertEqual(raw.data, latin1)
        let unknown = try await bonnet(["--response-charset", "klingon", echo])
        XCTAssertEqual(unknown.status, 1, unknown.errors)
    }

    func testDotSegmentsAreResolvedAsHttpieDoesUnlessPathAsIs() async throws {
        func sentURL(_ arguments: [String]) async throws -> String {
            let run = try await bonnet(arguments)
            XCTAssertEqual(run.status, 0, run.errors)
            let echo = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(run.output.utf8)) as? [String: Any])
            return try XCTUnwrap(echo["url"] as? String)
        }
        for (arguments, expected) in [
            ([url("/anything/a/b/c/./../../g?x=../y")], url("/anything/a/g?x=../y")),
            ([url("/anything/a/b/..")], url("/anything/a/")),
            // Never above the root.
            ([url("/anything/../../anything/z")], url("/anything/z")),
            (["--path-as-is", url("/anything/a/../b/./c")], url("/anything/a/../b/./c")),
        ] {
            let sent = try await sentURL(arguments)
            XCTAssertEqual(sent, expected)
        }
    }

    func testMaxHeadersRefusesAResponseWithMoreFields() async throws {
        let target = url("/response-headers?a=1&b=2&c=3")
        let count = try await bonnet(["-h", target]).output.split(separator: "\n").dropFirst().filter { !$0.isEmpty }
            .count
        let within = try await bonnet(["--max-headers", String(count), target])
        XCTAssertEqual(within.status, 0, within.errors)
        let over = try await bonnet(["--max-headers", String(count - 1), target])
        XCTAssertEqual(over.status, 1)
        XCTAssertTrue(over.errors.contains("more than --max-headers \(count - 1)"), over.errors)
        let negative = try await bonnet(["--max-headers", "-1", target])
        XCTAssertEqual(negative.status, 1)
    }

    func testABackslashEscapesASeparatorInAnItem() async throws {
        let run = try await bonnet([
            "--offline", "http://127.0.0.1:1/post", #"a\=b=c"#, #"f\@x=2"#, #"t\:z:=3"#, #"path=C:\dir"#,
            #"k\==v"#,
        ])
        XCTAssertEqual(run.status, 0, run.errors)
        let body = try XCTUnwrap(run.output.components(separatedBy: "\r\n\r\n").last)
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any])
        XCTAssertEqual(json["a=b"] as? String, "c")
        XCTAssertEqual(json["f@x"] as? String, "2")
        XCTAssertEqual(json["t:z"] as? Int, 3)
        XCTAssertEqual(json["path"] as? String, #"C:\dir"#, "a backslash before anything else stays")
        XCTAssertEqual(json["k="] as? String, "v")
    }

    func testFormatOptionsChooseIndentationAndOrderAsHttpiesDo() async throws {
        let echo = url("/echo?content_type=application/json")
        let body = Data(#"{"b":1,"a":[2]}"#.utf8)
        let fourSpaces = try await bonnet(["--pretty=format", "--format-options", "json.indent:4", echo], stdin: body)
        XCTAssertEqual(fourSpaces.output, "{\n    \"a\" : [\n        2\n    ],\n    \"b\" : 1\n}\n")
        let unsortedKeys = try await bonnet(
            ["--pretty=format", "--format-options=json.sort_keys:false,json.indent:0", echo], stdin: body)
        XCTAssertEqual(unsortedKeys.output, "{\n\"b\" : 1,\n\"a\" : [\n2\n]\n}\n")
        let unformatted = try await bonnet(
            ["--pretty=format", "--format-options", "json.format:false", echo], stdin: body)
        XCTAssertEqual(unformatted.output, #"{"b":1,"a":[2]}"# + "\n")
        let headers = try await bonnet([
            "-h", "--format-options", "headers.sort:false", url("/response-headers?Zz=1&Aa=2"),
        ])
        let names = headers.output.split(separator: "\n").dropFirst().compactMap { $0.split(separator: ":").first }
        XCTAssertLessThan(
            try XCTUnwrap(names.firstIndex(of: "Zz")), try XCTUnwrap(names.firstIndex(of: "Aa")), "the server's order")
        let invalid = try await bonnet(["--format-options", "xml.indent:2", echo])
        XCTAssertEqual(invalid.status, 1)
        XCTAssertTrue(invalid.errors.contains("xml.format:BOOL"), invalid.errors)
    }

    func testPrettyColorsColoursAJSONBodyAsTheServerLaidItOut() async throws {
        let echo = url("/echo?content_type=application/json")
        let body = Data(#"{"b":[-1.5e3,true,null],"a\"":"x\"y"}"#.utf8)
        let colored = try await bonnet(["-b", "--pretty=colors", echo], stdin: body, unsetting: ["NO_COLOR"])
        let escape = "\u{1B}["
        XCTAssertEqual(
            colored.output,
            "{\(escape)34m\"b\"\(escape)0m:[\(escape)36m-1.5e3\(escape)0m,\(escape)35mtrue\(escape)0m,"
                + "\(escape)35mnull\(escape)0m],\(escape)34m\"a\\\"\"\(escape)0m:\(escape)33m\"x\\\"y\"\(escape)0m}\n")
        let plain = colored.output.replacingOccurrences(
            of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression)
        XCTAssertEqual(plain, String(decoding: body, as: UTF8.self) + "\n", "coloured, not reformatted")
        let all = try await bonnet(["-b", "--pretty=all", echo], stdin: body, unsetting: ["NO_COLOR"])
        XCTAssertTrue(all.output.contains("\(escape)34m\"b\"\(escape)0m : ["), all.output)
        let none = try await bonnet(
            ["-b", "--pretty=colors", "--no-color", echo], stdin: body, unsetting: ["NO_COLOR"])
        XCTAssertFalse(none.output.contains(escape), none.output)
        let told = try await bonnet(["-b", "--pretty=colors", echo], stdin: body, environment: ["NO_COLOR": "1"])
        XCTAssertFalse(told.output.contains(escape), told.output)
    }

    func testAllShowsEachResponseFollowedBeforeTheFinalOne() async throws {
        let chain = try await bonnet(["--all", "-p", "h", url("/redirect/2")])
        XCTAssertEqual(chain.status, 0, chain.errors)
        let statusLines = chain.output.split(separator: "\n").filter { $0.hasPrefix("HTTP/") }
        XCTAssertEqual(statusLines, ["HTTP/1.1 302 Found", "HTTP/1.1 302 Found", "HTTP/1.1 200 OK"])
        let locations = chain.output.split(separator: "\n").filter { $0.hasPrefix("Location:") }
        XCTAssertEqual(locations, ["Location: /relative-redirect/1", "Location: /get"])
        // -P chooses what is shown of the intermediary exchanges, --print of the final one.
        let mixed = try await bonnet(["--all", "-P", "h", "-p", "b", url("/redirect/1")])
        XCTAssertTrue(mixed.output.hasPrefix("HTTP/1.1 302 Found\n"), mixed.output)
        XCTAssertTrue(mixed.output.contains("\"url\" : \"\(url("/get"))\""), mixed.output)
        XCTAssertEqual(mixed.output.split(separator: "\n").filter { $0.hasPrefix("HTTP/") }.count, 1)
        let without = try await bonnet(["-p", "h", url("/redirect/2")])
        XCTAssertEqual(without.output.split(separator: "\n").filter { $0.hasPrefix("HTTP/") }, ["HTTP/1.1 200 OK"])
        let invalid = try await bonnet(["--all", "-P", "x", url("/get")])
        XCTAssertEqual(invalid.status, 1)
        XCTAssertTrue(invalid.errors.contains("--history-print takes letters of HBhbm"), invalid.errors)
    }

    func testStyleChoosesTheColoursAndAnUnknownOneIsAUsageError() async throws {
        let echo = url("/echo?content_type=application/json")
        let body = Data(#"{"a":[1,"x",true]}"#.utf8)
        let escape = "\u{1B}["
        let monokai = try await bonnet(
            ["-p", "hb", "--pretty=colors", "--style", "monokai", echo], stdin: body, unsetting: ["NO_COLOR"])
        XCTAssertTrue(monokai.output.contains("\(escape)38;5;197m\"a\"\(escape)0m"), monokai.output)
        XCTAssertTrue(monokai.output.contains("\(escape)38;5;186m\"x\"\(escape)0m"), monokai.output)
        XCTAssertTrue(monokai.output.contains("\(escape)38;5;148mContent-Type\(escape)0m"), monokai.output)
        let plain = try await bonnet(["-b", "--pretty=colors", "-s", "bw", echo], stdin: body, unsetting: ["NO_COLOR"])
        XCTAssertEqual(
            plain.output.replacingOccurrences(of: "\u{1B}\\[[0-9;]*m", with: "", options: .regularExpression),
            #"{"a":[1,"x",true]}"# + "\n")
        XCTAssertTrue(plain.output.contains("\(escape)1m\"a\"\(escape)0m"), plain.output)
        let unknown = try await bonnet(["--style", "neon", echo], stdin: body)
        XCTAssertEqual(unknown.status, 1)
        // Refused as httpie refuses it, naming every style httpie takes.
        XCTAssertTrue(unknown.errors.contains("'neon'"), unknown.errors)
        XCTAssertTrue(unknown.errors.contains("'abap'") && unknown.errors.contains("'zenburn'"), unknown.errors)
    }

    func testOnlyValidJSONIsLaidOutAndDeepNestingIsShownAsItCame() async throws {
        let echo = url("/echo?content_type=application/json")
        let valid = [
            #"{"a":[1,-0.5e+3,"\u00e9\n",true,false,null,{}],"b":[]}"#, #" "text" "#, "0", "-1.5E-7", #"[{"":""}]"#,
        ]
        for text in valid {
            let run = try await bonnet(["-b", "--pretty=format", echo], stdin: Data(text.utf8))
            // Compared as canonical JSON (keys sorted): two equal dictionaries may describe their keys in different
            // orders, which made this comparison flaky when it compared descriptions.
            func canonical(_ json: String) throws -> String {
                let object = try JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed)
                let data = try JSONSerialization.data(
                    withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
                return String(decoding: data, as: UTF8.self)
            }
            XCTAssertEqual(try canonical(run.output), try canonical(text), text)
            XCTAssertTrue(run.output.hasSuffix("\n"), text)
        }
        let array = try await bonnet(["-b", "--pretty=format", echo], stdin: Data(#"{"a":[1,2]}"#.utf8))
        XCTAssertEqual(array.output, "{\n  \"a\" : [\n    1,\n    2\n  ]\n}\n")
        let invalid = [
            "[1,]", #"{"a":1,}"#, "01", "1.", ".5", "-", "1e", "tru", "nul", #"{"a" 1}"#, #"["\x"]"#,
            #"["\u12G4"]"#, "[1 2]", #"{"a":1}}"#, "[", #""tab\#there""#, "[1]x",
        ]
        for text in invalid {
            let run = try await bonnet(["-b", "--pretty=format", echo], stdin: Data(text.utf8))
            XCTAssertEqual(run.output, text + "\n", "not JSON: shown as it came: \(text)")
        }
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        let nested = try await bonnet(["-b", "--pretty=format", echo], stdin: Data(deep.utf8))
        XCTAssertEqual(nested.status, 0)
        XCTAssertEqual(nested.output, deep + "\n", "nested past the limit: shown as it came, never a crash")
    }

    func testXMLIsLaidOutWhenFormattingAndNeverLoadsAnExternalEntity() async throws {
        let echo = url("/echo?content_type=application/xml")
        let body = Data(#"<a><b x="1">t</b></a>"#.utf8)
        let formatted = try await bonnet(["--pretty=format", echo], stdin: body)
        XCTAssertEqual(formatted.output, "<a>\n  <b x=\"1\">t</b>\n</a>\n")
        let kept = try await bonnet(["--pretty=format", "--format-options", "xml.format:false", echo], stdin: body)
        XCTAssertEqual(kept.output, #"<a><b x="1">t</b></a>"# + "\n")
        let piped = try await bonnet([echo], stdin: body)
        XCTAssertEqual(piped.output, #"<a><b x="1">t</b></a>"#, "piped bytes stay exact")
        let directory = try TemporaryDirectory()
        let secret = try directory.file("secret.txt", contents: Data("TOP-SECRET".utf8))
        let hostile = Data(
            #"<?xml version="1.0"?><!DOCTYPE a [<!ENTITY x SYSTEM "\#(secret.absoluteString)">]><a>&x;</a>"#.utf8)
        let refused = try await bonnet(["--pretty=format", echo], stdin: hostile)
        XCTAssertFalse(refused.output.contains("TOP-SECRET"), refused.output)
        let broken = try await bonnet(["--pretty=format", echo], stdin: Data("<a><b></a>".utf8))
        XCTAssertEqual(broken.output, "<a><b></a>\n", "not well-formed: shown as it came")
        let unclosed = try await bonnet(["--pretty=format", echo], stdin: Data("<a><b/>".utf8))
        XCTAssertEqual(unclosed.output, "<a><b/>\n", "cut short: shown as it came")
    }

    func testOfflinePrintsTheRequestWithoutSendingIt() async throws {
        // Port 1 has nothing listening: anything sent would fail.
        let run = try await bonnet(["--offline", "put", "http://127.0.0.1:1/things", "name=x", "X-A:1"])
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertTrue(run.output.contains("PUT /things HTTP/1.1"), run.output)
        XCTAssertTrue(run.output.contains("X-A: 1"), run.output)
        XCTAssertTrue(run.output.contains(#"{"name":"x"}"#), run.output)
    }

    func testMaxRedirectsAndFollow() async throws {
        let limited = try await bonnet(["--max-redirects", "2", url("/redirect/3")])
        XCTAssertEqual(limited.status, 6, limited.errors)
        let enough = try await bonnet(["--follow", "--max-redirects", "3", url("/redirect/3")])
        XCTAssertEqual(enough.status, 0, enough.errors)
        let notFollowed = try await bonnet(["--no-follow", "--check-status", url("/redirect/1")])
        XCTAssertEqual(notFollowed.status, 3)
        let contradiction = try await bonnet(["--follow", "--no-follow", url("/get")])
        XCTAssertNotEqual(contradiction.status, 0)
    }

    func testJSONFlagIsTheDefaultEncoding() async throws {
        let run = try await bonnet(["-j", url("/post"), "a=1", "n:=2"])
        let echo = try json(Data(run.output.utf8))
        XCTAssertEqual((echo["json"] as? [String: Any])?["n"] as? Int, 2)
    }

    func testNestedJSONItemsBuildObjectsAndArraysAsHttpieDoes() async throws {
        let run = try await bonnet([
            url("/post"), "user[name]=Ann", "user[tags][]=a", "user[tags][]:=2", "points[1]:=5", #"esc\[x\]=y"#,
        ])
        XCTAssertEqual(run.status, 0, run.errors)
        let sent = try XCTUnwrap(try json(Data(run.output.utf8))["json"] as? [String: Any])
        XCTAssertEqual(sent["user"] as? NSDictionary, ["name": "Ann", "tags": ["a", 2]] as NSDictionary)
        XCTAssertEqual(sent["points"] as? NSArray, [NSNull(), 5] as NSArray)
        XCTAssertEqual(sent["esc[x]"] as? String, "y")
        let array = try await bonnet([url("/post"), "[]:=1", "[]=two"])
        XCTAssertEqual(try json(Data(array.output.utf8))["data"] as? String, #"[1,"two"]"#)
        // Members in the order the items name them, a repeated name keeping its place with the last value, slashes
        // and a `:=` value as typed: what httpie sends. (A path into a `:=` object goes into it parsed, its members
        // sorted: `d`.)
        let ordered = try await bonnet([
            url("/post"), "b=1", "a:=2", "c[z]=1", #"c[y]:=[1,{"q":1,"p":2}]"#, #"d:={"y":1,"x":2}"#, "d[w]=3",
            "b=again", "s=a/b",
        ])
        XCTAssertEqual(
            try json(Data(ordered.output.utf8))["data"] as? String,
            #"{"b":"again","a":2,"c":{"z":"1","y":[1,{"q":1,"p":2}]},"d":{"x":2,"y":1,"w":"3"},"s":"a/b"}"#)
        let conflict = try await bonnet([url("/post"), "a=1", "a[b]=2"])
        XCTAssertEqual(conflict.status, 1)
        XCTAssertTrue(conflict.errors.contains("'a[b]': the path runs into a value of another kind"), conflict.errors)
        let unclosed = try await bonnet([url("/post"), "a[b=1"])
        XCTAssertEqual(unclosed.status, 1)
        XCTAssertTrue(unclosed.errors.contains("brackets do not close"), unclosed.errors)
    }
}
