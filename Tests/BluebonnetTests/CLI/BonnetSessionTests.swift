import Foundation
import XCTest

/// `bonnet --session`: cookies, headers and `--auth` kept between runs, as httpie's sessions keep them.
extension BonnetCommandTests {
    func sessionEnvironment() throws -> (URL, [String: String]) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "bonnet-config-\(UUID().uuidString)")
        addTeardownBlock { try? FileManager.default.removeItem(at: directory) }
        return (directory, ["BONNET_CONFIG_DIR": directory.path])
    }

    func testANamedSessionKeepsCookiesBetweenRunsAndAPlainRunKeepsNone() async throws {
        let (directory, environment) = try sessionEnvironment()
        let login = try await bonnet(["--session=alice", url("/cookies/set?sid=s3cret")], environment: environment)
        XCTAssertEqual(login.status, 0, login.errors)
        XCTAssertTrue(login.output.contains("\"sid\" : \"s3cret\""), login.output)
        let again = try await bonnet(["--session=alice", url("/cookies")], environment: environment)
        XCTAssertTrue(again.output.contains("\"sid\" : \"s3cret\""), again.output)
        let plain = try await bonnet([url("/cookies")], environment: environment)
        XCTAssertFalse(plain.output.contains("sid"), plain.output)
        // Named sessions are kept per host and port, owner-only.
        let file = directory.appendingPathComponent("sessions/127.0.0.1_\(server.port)/alice.json")
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        let logout = try await bonnet(["--session=alice", url("/cookies/delete?sid")], environment: environment)
        XCTAssertFalse(logout.output.contains("sid"), logout.output)
        let after = try await bonnet(["--session=alice", url("/cookies")], environment: environment)
        XCTAssertFalse(after.output.contains("sid"), after.output)
    }

    func testASessionFileKeepsHeadersAndAuthButNotRequestSpecificHeaders() async throws {
        let (directory, environment) = try sessionEnvironment()
        let path = directory.appendingPathComponent("mine.json").path
        let first = try await bonnet(
            [
                "--session", path, "-a", "user:pass", url("/basic-auth/user/pass"), "X-Team:bluebonnet",
                "If-None-Match:abc",
            ], environment: environment)
        XCTAssertEqual(first.status, 0, first.errors)
        let second = try await bonnet(["--session", path, url("/basic-auth/user/pass")], environment: environment)
        XCTAssertEqual(second.status, 0, second.errors)
        XCTAssertTrue(second.output.contains("\"authenticated\" : true"), second.output)
        let headers = try await bonnet(["--session", path, url("/headers")], environment: environment)
        XCTAssertTrue(headers.output.contains("\"X-Team\" : \"bluebonnet\""), headers.output)
        XCTAssertFalse(headers.output.contains("If-None-Match"), headers.output)
        // The request's own value wins for this run.
        let override = try await bonnet(["--session", path, url("/headers"), "X-Team:other"], environment: environment)
        XCTAssertTrue(override.output.contains("\"X-Team\" : \"other\""), override.output)
    }

    func testAnHTTPieSessionFileIsReadAndKeptInHTTPiesLayout() async throws {
        let (directory, environment) = try sessionEnvironment()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("httpie.json")
        // As httpie 3.2.4 writes it (`http --session=./httpie.json -a ann:secret URL X-Team:blue`), plus a cookie that
        // expires and one of another host.
        let written = """
            {
                "__meta__": {"about": "HTTPie session file", "help": "https://httpie.io/docs#sessions", "httpie": "3.2.4"},
                "auth": {"raw_auth": "ann:secret", "type": "basic"},
                "cookies": [
                    {"domain": "127.0.0.1", "expires": null, "name": "sid", "path": "/", "secure": false, "value": "abc"},
                    {"domain": "127.0.0.1", "expires": 4102444800, "name": "keep", "path": "/", "secure": false,
                     "value": "1"},
                    {"domain": "example.com", "expires": null, "name": "other", "path": "/", "secure": false,
                     "value": "x"}
                ],
                "headers": [{"name": "X-Team", "value": "blue"}]
            }
            """
        try Data(written.utf8).write(to: path)
        let run = try await bonnet(["--session", path.path, url("/headers")], environment: environment)
        XCTAssertEqual(run.status, 0, run.errors)
        let sent = try XCTUnwrap(try json(Data(run.output.utf8))["headers"] as? [String: String])
        XCTAssertEqual(sent["X-Team"], "blue")
        XCTAssertEqual(sent["Authorization"], "Basic " + Data("ann:secret".utf8).base64EncodedString())
        XCTAssertEqual(
            Set((sent["Cookie"] ?? "").components(separatedBy: "; ")), ["sid=abc", "keep=1"],
            "another host's stays home")

        let setting = try await bonnet(["--session", path.path, url("/cookies/set?new=2")], environment: environment)
        XCTAssertEqual(setting.status, 0, setting.errors)
        let saved = try XCTUnwrap(
            try JSONSerialization.jsonObject(with: Data(contentsOf: path)) as? [String: Any])
        XCTAssertEqual((saved["__meta__"] as? [String: Any])?["about"] as? String, "HTTPie session file")
        XCTAssertEqual(saved["auth"] as? [String: String], ["type": "basic", "raw_auth": "ann:secret"])
        XCTAssertEqual(saved["headers"] as? [[String: String]], [["name": "X-Team", "value": "blue"]])
        let cookies = try XCTUnwrap(saved["cookies"] as? [[String: Any]])
        let byName = Dictionary(
            uniqueKeysWithValues: cookies.compactMap { cookie in
                (cookie["name"] as? String).map { ($0, cookie) }
            })
        XCTAssertEqual(Set(byName.keys), ["sid", "keep", "other", "new"])
        XCTAssertEqual(
            byName["keep"]?["expires"] as? Int ?? Int(byName["keep"]?["expires"] as? Double ?? 0), 4102444800)
        XCTAssertTrue(byName["sid"]?["expires"] is NSNull, "a session cookie stays one")
        XCTAssertEqual(byName["other"]?["domain"] as? String, "example.com")
    }

    func testAHostileHTTPieSessionFileIsReadWithinTheJarsLimits() async throws {
        let (directory, environment) = try sessionEnvironment()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("hostile.json")
        // 500 cookies for one host (the jar keeps 180 a site), one expired, one with an expiry no date can hold.
        var cookies = (0..<500).map { index -> [String: Any] in
            [
                "name": "c\(index)", "value": "v", "domain": "127.0.0.1", "path": "/", "secure": false,
                "expires": NSNull(),
            ]
        }
        cookies.append(["name": "old", "value": "v", "domain": "127.0.0.1", "path": "/", "expires": 1_000_000])
        cookies.append(["name": "far", "value": "v", "domain": "127.0.0.1", "path": "/", "expires": 1e300])
        let object: [String: Any] = [
            "__meta__": ["about": "HTTPie session file"], "headers": [[String: String]](), "cookies": cookies,
        ]
        try JSONSerialization.data(withJSONObject: object).write(to: path)
        let run = try await bonnet(["--session-read-only", path.path, url("/headers")], environment: environment)
        XCTAssertEqual(run.status, 0, run.errors)
        let sent = try XCTUnwrap(try json(Data(run.output.utf8))["headers"] as? [String: String])
        let names = (sent["Cookie"] ?? "").components(separatedBy: "; ").map { $0.prefix { $0 != "=" } }
        XCTAssertEqual(names.count, 180, "the jar's limit for a site")
        XCTAssertFalse(names.contains("old"), "expired")

        let odd: [String: Any] = [
            "__meta__": ["about": "HTTPie session file"],
            "cookies": [
                ["name": "far", "value": "v", "domain": "127.0.0.1", "path": "/", "expires": 1e300],
                ["name": "ok", "value": "v", "domain": "127.0.0.1", "path": "/", "expires": NSNull()],
            ],
        ]
        try JSONSerialization.data(withJSONObject: odd).write(to: path)
        let few = try await bonnet(["--session-read-only", path.path, url("/headers")], environment: environment)
        let fewSent = try XCTUnwrap(try json(Data(few.output.utf8))["headers"] as? [String: String])
        XCTAssertEqual(fewSent["Cookie"], "ok=v", "an expiry beyond any date is refused")

        let huge = directory.appendingPathComponent("huge.json")
        try Data(repeating: UInt8(ascii: " "), count: 16 << 20 + 1).write(to: huge)
        let refused = try await bonnet(["--session", huge.path, url("/get")], environment: environment)
        XCTAssertEqual(refused.status, 1)
        XCTAssertTrue(refused.errors.contains("larger than a session file can be"), refused.errors)
        XCTAssertEqual(try FileManager.default.attributesOfItem(atPath: huge.path)[.size] as? Int, 16 << 20 + 1)
    }

    func testAReadOnlySessionIsUsedButNeverWritten() async throws {
        let (directory, environment) = try sessionEnvironment()
        let path = directory.appendingPathComponent("ro.json").path
        _ = try await bonnet(["--session", path, url("/cookies/set?kept=1")], environment: environment)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let run = try await bonnet(
            ["--session-read-only", path, url("/cookies/set?added=1")], environment: environment)
        XCTAssertTrue(run.output.contains("\"kept\" : \"1\""), run.output)
        XCTAssertTrue(run.output.contains("\"added\" : \"1\""), run.output)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
    }

    func testABadSessionNameOrFileIsAClearError() async throws {
        let (directory, environment) = try sessionEnvironment()
        let name = try await bonnet(["--session=a b", url("/get")], environment: environment)
        XCTAssertNotEqual(name.status, 0)
        XCTAssertTrue(name.errors.contains("--session"), name.errors)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let garbage = directory.appendingPathComponent("garbage.json")
        try Data("not json".utf8).write(to: garbage)
        let unreadable = try await bonnet(["--session", garbage.path, url("/get")], environment: environment)
        XCTAssertNotEqual(unreadable.status, 0)
        XCTAssertTrue(unreadable.errors.contains("not a session file"), unreadable.errors)
    }
}
