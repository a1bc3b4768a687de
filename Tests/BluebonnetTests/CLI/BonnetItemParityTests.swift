import Foundation
import XCTest

/// Items and bodies as httpie 3.2.4 makes them, found by the differential suite (issue 43): each test failed before
/// its fix.
extension BonnetCommandTests {
    /// The request `--offline` prints for `arguments`: its head and its body.
    func offline(_ arguments: [String], environment: [String: String] = [:]) async throws -> (
        run: Run, head: String, body: String
    ) {
        let run = try await bonnet(["--offline"] + arguments, environment: environment)
        let parts = run.output.components(separatedBy: "\r\n\r\n")
        return (run, parts.first ?? "", parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    /// The value of the field `name` in a head.
    func field(_ name: String, in head: String) -> String? {
        head.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
            .map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
    }

    func testAnEmptyFieldNameIsAnItemAsInHttpie() async throws {
        let json = try await offline(["POST", url("/post"), "=v"])
        XCTAssertEqual(json.run.status, 0, json.run.errors)
        XCTAssertEqual(json.body, #"{"":"v"}"#)
        let form = try await offline(["--form", "POST", url("/post"), "=v"])
        XCTAssertEqual(form.body, "=v")
        let query = try await offline(["GET", url("/get"), "==v"])
        XCTAssertTrue(query.head.hasPrefix("GET /get?=v HTTP/1.1"), query.head)
        // A header needs a name.
        let header = try await offline(["GET", url("/get"), ":v"])
        XCTAssertEqual(header.run.status, 1, header.run.output)
    }

    func testAnEmptyMultipartFormIsItsClosingBoundary() async throws {
        let shown = try await offline(["--multipart", "POST", url("/post")])
        XCTAssertEqual(shown.run.status, 0, shown.run.errors)
        let type = try XCTUnwrap(field("Content-Type", in: shown.head), shown.head)
        let boundary = try XCTUnwrap(type.components(separatedBy: "boundary=").last)
        XCTAssertTrue(type.hasPrefix("multipart/form-data; boundary="), type)
        XCTAssertEqual(shown.body, "--\(boundary)--\r\n")
        XCTAssertEqual(field("Content-Length", in: shown.head), "\(boundary.utf8.count + 6)")
        // Sent, too: the server reads a form of no fields, not a body that is no form at all.
        let sent = try await bonnet(["--multipart", "--check-status", "POST", url("/post")])
        XCTAssertEqual(sent.status, 0, sent.errors + sent.output)
        XCTAssertTrue(sent.output.contains("multipart/form-data; boundary="), sent.output)
    }

    func testAGivenMultipartTypeIsKeptWithItsBoundary() async throws {
        let shown = try await offline(["--multipart", url("/post"), "Content-Type:multipart/mixed", "a=1"])
        XCTAssertEqual(shown.run.status, 0, shown.run.errors)
        let type = try XCTUnwrap(field("Content-Type", in: shown.head), shown.head)
        XCTAssertTrue(type.hasPrefix("multipart/mixed; boundary="), type)
        let boundary = try XCTUnwrap(type.components(separatedBy: "boundary=").last)
        XCTAssertTrue(shown.body.hasPrefix("--\(boundary)\r\n"), shown.body)
        XCTAssertTrue(shown.body.hasSuffix("--\(boundary)--\r\n"), shown.body)
        // A boundary the type names is the body's.
        let named = try await offline(["--multipart", url("/post"), "Content-Type:multipart/mixed; boundary=zz", "a=1"])
        XCTAssertEqual(field("Content-Type", in: named.head), "multipart/mixed; boundary=zz")
        XCTAssertTrue(named.body.hasPrefix("--zz\r\n"), named.body)
    }

    func testBoundaryNamesTheMultipartBoundary() async throws {
        let directory = try TemporaryDirectory()
        let file = directory.url.appendingPathComponent("hello.txt")
        try Data("hello\n".utf8).write(to: file)
        let shown = try await offline(["--form", "--boundary=xoxo", url("/post"), "f@\(file.path)"])
        XCTAssertEqual(shown.run.status, 0, shown.run.errors)
        XCTAssertEqual(field("Content-Type", in: shown.head), "multipart/form-data; boundary=xoxo")
        XCTAssertTrue(shown.body.hasPrefix("--xoxo\r\n"), shown.body)
        XCTAssertTrue(shown.body.hasSuffix("--xoxo--\r\n"), shown.body)
        let empty = try await offline(["--multipart", "--boundary=xoxo", "POST", url("/post")])
        XCTAssertEqual(empty.body, "--xoxo--\r\n")
        let bad = try await bonnet(["--multipart", "--boundary=a\"b", "--offline", url("/post")])
        XCTAssertEqual(bad.status, 1)
        XCTAssertTrue(bad.errors.contains("--boundary takes"), bad.errors)
    }

    func testTheLastOfJSONFormAndMultipartWins() async throws {
        let json = try await offline(["--form", "--json", url("/post"), "a=1"])
        XCTAssertEqual(json.body, #"{"a":"1"}"#)
        XCTAssertEqual(field("Content-Type", in: json.head), "application/json")
        let form = try await offline(["--json", "--form", url("/post"), "a=1"])
        XCTAssertEqual(form.body, "a=1")
        let multipart = try await offline(["--form", "--multipart", url("/post"), "a=1"])
        XCTAssertTrue(field("Content-Type", in: multipart.head)?.hasPrefix("multipart/form-data") == true)
        let back = try await offline(["--multipart", "-f", url("/post"), "a=1"])
        XCTAssertEqual(back.body, "a=1")
    }
}
