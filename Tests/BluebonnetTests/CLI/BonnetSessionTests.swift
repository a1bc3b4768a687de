import Foundation
import XCTest

/// `bonnet --session`: cookies, headers and `--auth` kept between runs, as httpie's sessions keep them.
extension BonnetProcessTests {
    func sessionEnvironment() throws -> (URL, [String: String]) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "bonnet-config-\(UUID().uuidString)")
        addTeardownBlock { try? FileManager.default.removeItem(at: directory) }
        return (directory, ["BONNET_CONFIG_DIR": directory.path])
    }

    func testANamedSessionKeepsCookiesBetweenRunsAndAPlainRunKeepsNone() throws {
        let (directory, environment) = try sessionEnvironment()
        let login = try bonnet(["--session=alice", url("/cookies/set?sid=s3cret")], environment: environment)
        XCTAssertEqual(login.status, 0, login.errors)
        XCTAssertTrue(login.output.contains("\"sid\" : \"s3cret\""), login.output)
        let again = try bonnet(["--session=alice", url("/cookies")], environment: environment)
        XCTAssertTrue(again.output.contains("\"sid\" : \"s3cret\""), again.output)
        let plain = try bonnet([url("/cookies")], environment: environment)
        XCTAssertFalse(plain.output.contains("sid"), plain.output)
        // Named sessions are kept per host and port, owner-only.
        let file = directory.appendingPathComponent("sessions/127.0.0.1_\(server.port)/alice.json")
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o600)
        let logout = try bonnet(["--session=alice", url("/cookies/delete?sid")], environment: environment)
        XCTAssertFalse(logout.output.contains("sid"), logout.output)
        let after = try bonnet(["--session=alice", url("/cookies")], environment: environment)
        XCTAssertFalse(after.output.contains("sid"), after.output)
    }

    func testASessionFileKeepsHeadersAndAuthButNotRequestSpecificHeaders() throws {
        let (directory, environment) = try sessionEnvironment()
        let path = directory.appendingPathComponent("mine.json").path
        let first = try bonnet(
            [
                "--session", path, "-a", "user:pass", url("/basic-auth/user/pass"), "X-Team:bluebonnet",
                "If-None-Match:abc",
            ], environment: environment)
        XCTAssertEqual(first.status, 0, first.errors)
        let second = try bonnet(["--session", path, url("/basic-auth/user/pass")], environment: environment)
        XCTAssertEqual(second.status, 0, second.errors)
        XCTAssertTrue(second.output.contains("\"authenticated\" : true"), second.output)
        let headers = try bonnet(["--session", path, url("/headers")], environment: environment)
        XCTAssertTrue(headers.output.contains("\"X-Team\" : \"bluebonnet\""), headers.output)
        XCTAssertFalse(headers.output.contains("If-None-Match"), headers.output)
        // The request's own value wins for this run.
        let override = try bonnet(["--session", path, url("/headers"), "X-Team:other"], environment: environment)
        XCTAssertTrue(override.output.contains("\"X-Team\" : \"other\""), override.output)
    }

    func testAReadOnlySessionIsUsedButNeverWritten() throws {
        let (directory, environment) = try sessionEnvironment()
        let path = directory.appendingPathComponent("ro.json").path
        _ = try bonnet(["--session", path, url("/cookies/set?kept=1")], environment: environment)
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let run = try bonnet(["--session-read-only", path, url("/cookies/set?added=1")], environment: environment)
        XCTAssertTrue(run.output.contains("\"kept\" : \"1\""), run.output)
        XCTAssertTrue(run.output.contains("\"added\" : \"1\""), run.output)
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: path)), before)
    }

    func testABadSessionNameOrFileIsAClearError() throws {
        let (directory, environment) = try sessionEnvironment()
        let name = try bonnet(["--session=a b", url("/get")], environment: environment)
        XCTAssertNotEqual(name.status, 0)
        XCTAssertTrue(name.errors.contains("--session"), name.errors)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let garbage = directory.appendingPathComponent("garbage.json")
        try Data("not json".utf8).write(to: garbage)
        let unreadable = try bonnet(["--session", garbage.path, url("/get")], environment: environment)
        XCTAssertNotEqual(unreadable.status, 0)
        XCTAssertTrue(unreadable.errors.contains("not a session file"), unreadable.errors)
    }
}
