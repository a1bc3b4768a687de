import Foundation
import XCTest

/// `--auth` in its three schemes, credentials in the URL, `--curl`, and a URL that is not one.
extension BonnetCommandTests {
    func testCurlPrintsTheCommandThenTheResponseAndExits() async throws {
        // It used to wait forever for the URLRequest, which nothing made before a response handler was added.
        let run = try await bonnet(["--no-color", "--curl", url("/get?flower=bluebonnet")])
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertTrue(run.output.contains("$ curl -v"), run.output)
        XCTAssertTrue(run.output.contains("'\(url("/get?flower=bluebonnet"))'"), run.output)
        XCTAssertTrue(run.output.contains("\"flower\""), run.output)
    }

    func testAPortOutOfRangeIsAClearErrorNotACrash() async throws {
        let run = try await bonnet(["--no-color", "http://127.0.0.1:65536/"])
        XCTAssertEqual(run.status, 1, run.errors)
        XCTAssertTrue(run.errors.contains("URL is not valid"), run.errors)
    }

    func testAuthBasicIsSentUpFront() async throws {
        let run = try await bonnet([
            "--no-color", "--body", "--auth", "user:passwd", url("/hidden-basic-auth/user/passwd"),
        ])
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertTrue(run.output.contains("\"authenticated\" : true"), run.output)
    }

    func testAuthDigestAnswersTheChallenge() async throws {
        let run = try await bonnet([
            "--no-color", "--check-status", "--auth-type", "digest", "-a", "user:passwd",
            url("/digest-auth/auth/user/passwd/SHA-256"),
        ])
        XCTAssertEqual(run.status, 0, run.errors + run.output)
        XCTAssertTrue(run.output.contains("\"authenticated\" : true"), run.output)
        let wrong = try await bonnet([
            "--no-color", "--check-status", "-A", "digest", "-a", "user:nope",
            url("/digest-auth/auth/user/passwd/SHA-256"),
        ])
        XCTAssertEqual(wrong.status, 4, "the 401 ends it: " + wrong.output)
    }

    func testCredentialsInTheURLAnswerTheChallengeAndVerboseOutputHidesThePassword() async throws {
        let run = try await bonnet([
            "--no-color", "-v", "--check-status", "http://user:passwd@127.0.0.1:\(server.port)/basic-auth/user/passwd",
        ])
        XCTAssertEqual(run.status, 0, run.errors + run.output)
        // Piped, the request is shown as its exact bytes, which carry no URL; the password is nowhere.
        XCTAssertTrue(
            run.output.contains("GET /basic-auth/user/passwd HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n"),
            run.output)
        XCTAssertFalse(run.output.contains("user:passwd"), run.output)
    }

    func testAuthBearerSendsTheToken() async throws {
        let run = try await bonnet(["--no-color", "--body", "-A", "bearer", "-a", "t0ken", url("/bearer")])
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertTrue(run.output.contains("t0ken"), run.output)
    }

    func testAuthWithoutAPasswordAndNoTerminalIsAClearError() async throws {
        let run = try await bonnet(["--no-color", "--auth", "user", url("/basic-auth/user/passwd")])
        XCTAssertNotEqual(run.status, 0)
        XCTAssertTrue(run.errors.contains("no terminal to ask"), run.errors)
    }
}
