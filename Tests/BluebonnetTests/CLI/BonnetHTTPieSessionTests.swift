import Foundation
import XCTest

/// Session files go both ways between bonnet and httpie without losing a cookie (issue 43, item 4): on `localhost`
/// (`localhost.local` in httpie's files), with httpie 2's cookies by name and httpie 3's `"domain": ""`, and a file
/// bonnet made is read by httpie itself (`BLUEBONNET_HTTPIE`, which `.ci/run` installs).
extension BonnetCommandTests {
    /// The cookies of a saved session file, by name.
    private func savedCookies(_ file: URL) throws -> [String: [String: Any]] {
        let saved = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(contentsOf: file)) as? [String: Any])
        XCTAssertNotNil(saved["__meta__"], "written in httpie's layout")
        XCTAssertNotNil(saved["headers"] as? [[String: String]], "headers as httpie's list")
        let cookies = try XCTUnwrap(saved["cookies"] as? [[String: Any]])
        return Dictionary(cookies.compactMap { cookie in (cookie["name"] as? String).map { ($0, cookie) } }) { $1 }
    }

    /// Before: on `localhost` no cookie crossed, httpie 2's and `""`-domain cookies were not sent and were deleted on
    /// save.
    func testHTTPiesLocalhostDomainlessAndOldCookiesAreSentAndWrittenBackAsTheyWere() async throws {
        let (directory, environment) = try sessionEnvironment()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let three = directory.appendingPathComponent("three.json")
        try Data(
            """
            {"__meta__": {"about": "HTTPie session file", "httpie": "3.2.4"},
             "auth": {"password": null, "type": null, "username": null},
             "cookies": [
               {"domain": "localhost.local", "expires": null, "name": "jar", "path": "/", "secure": false, "value": "1"},
               {"domain": "", "expires": null, "name": "typed", "path": "/", "secure": false, "value": "2"}
             ],
             "headers": []}
            """.utf8
        ).write(to: three)
        let target = "http://localhost:\(server.port)"
        let run = try await bonnet(
            ["--session", three.path, target + "/cookies/set?fresh=3"], environment: environment)
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertTrue(run.output.contains("\"jar\" : \"1\""), run.output)
        XCTAssertTrue(run.output.contains("\"typed\" : \"2\""), run.output)
        let cookies = try savedCookies(three)
        XCTAssertEqual(cookies["jar"]?["domain"] as? String, "localhost.local")
        XCTAssertEqual(cookies["typed"]?["domain"] as? String, "")
        XCTAssertEqual(cookies["fresh"]?["domain"] as? String, "localhost.local")

        let two = directory.appendingPathComponent("two.json")
        try Data(
            """
            {"__meta__": {"about": "HTTPie session file", "httpie": "2.6.0"},
             "auth": {"password": null, "type": null, "username": null},
             "cookies": {"old": {"expires": null, "path": "/", "secure": false, "value": "4"}},
             "headers": {"X-Old": "yes"}}
            """.utf8
        ).write(to: two)
        let old = try await bonnet(["--session", two.path, url("/cookies")], environment: environment)
        XCTAssertEqual(old.status, 0, old.errors)
        XCTAssertTrue(old.output.contains("\"old\" : \"4\""), old.output)
        XCTAssertEqual(try savedCookies(two)["old"]?["value"] as? String, "4", "kept on save")
    }

    /// Before: a session file bonnet created made httpie fail (`TypeError: 'list' object is not a mapping`).
    func testHTTPieAndBonnetReadEachOthersSessionFiles() async throws {
        let environmentValue = ProcessInfo.processInfo.environment["BLUEBONNET_HTTPIE"] ?? ""
        guard FileManager.default.isExecutableFile(atPath: environmentValue) else {
            if ProcessInfo.processInfo.environment["BLUEBONNET_REQUIRE_HTTPIE"] != nil {
                XCTFail("BLUEBONNET_HTTPIE does not name httpie's `http`")
            }
            throw XCTSkip("httpie is not installed (BLUEBONNET_HTTPIE)")
        }
        let httpie = URL(fileURLWithPath: environmentValue)
        let (directory, environment) = try sessionEnvironment()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let target = "http://localhost:\(server.port)"

        // bonnet makes the file; httpie sends its header and cookie.
        let mine = directory.appendingPathComponent("bonnet.json")
        let made = try await bonnet(
            ["--session", mine.path, target + "/cookies/set?made=by-bonnet", "X-From:bonnet"], environment: environment)
        XCTAssertEqual(made.status, 0, made.errors)
        let shown = try runHTTPie(httpie, ["--offline", "--print=H", "--session", mine.path, target + "/get"])
        XCTAssertEqual(shown.status, 0, shown.errors)
        XCTAssertTrue(shown.output.contains("Cookie: made=by-bonnet"), shown.output + shown.errors)
        XCTAssertTrue(shown.output.contains("X-From: bonnet"), shown.output)

        // httpie makes one (a typed cookie has no domain); bonnet sends it.
        let theirs = directory.appendingPathComponent("httpie.json")
        let wrote = try runHTTPie(
            httpie, ["--offline", "--session", theirs.path, target + "/get", "Cookie:typed=by-httpie", "X-From:httpie"])
        XCTAssertEqual(wrote.status, 0, wrote.errors)
        let sent = try await bonnet(["--session", theirs.path, target + "/headers"], environment: environment)
        XCTAssertEqual(sent.status, 0, sent.errors)
        XCTAssertTrue(sent.output.contains("typed=by-httpie"), sent.output)
        XCTAssertTrue(sent.output.contains("\"X-From\" : \"httpie\""), sent.output)
        // And httpie still reads what bonnet saved back.
        let again = try runHTTPie(httpie, ["--offline", "--print=H", "--session", theirs.path, target + "/get"])
        XCTAssertEqual(again.status, 0, again.errors)
        XCTAssertTrue(again.output.contains("typed=by-httpie"), again.output + again.errors)
    }

    private func runHTTPie(_ httpie: URL, _ arguments: [String]) throws -> (
        status: Int32, output: String, errors: String
    ) {
        let process = Process()
        process.executableURL = httpie
        process.arguments = ["--ignore-stdin"] + arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }
}
