@testable import Bluebonnet
import XCTest

final class AuthenticationChallengeParserTests: XCTestCase {
    private let parser = AuthenticationChallengeParser()

    private func parse(_ field: String) throws -> [AuthenticationChallenge] {
        try parser.parse(field)
    }

    private func failure(_ field: String, parser: AuthenticationChallengeParser = AuthenticationChallengeParser())
        -> AuthenticationChallengeParser.Failure?
    {
        do {
            _ = try parser.parse(field)
            return nil
        } catch {
            return error
        }
    }

    func testTheRFC9110ExampleParsesAsTwoChallengesWithAnEscapedQuote() throws {
        let challenges = try parse(#"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple""#)
        XCTAssertEqual(challenges.count, 2)
        XCTAssertEqual(challenges[0].scheme, "Newauth")
        XCTAssertEqual(challenges[0].realm, "apps")
        XCTAssertEqual(challenges[0]["type"], "1")
        XCTAssertEqual(challenges[0]["title"], #"Login to "apps""#)
        XCTAssertTrue(challenges[1].isScheme("basic"))
        XCTAssertEqual(challenges[1].realm, "simple")
    }

    func testToken68IsKeptWhole() throws {
        let challenges = try parse("Negotiate abc+/def.ghi~_-==, Basic realm=\"x\"")
        XCTAssertEqual(
            challenges,
            [
                AuthenticationChallenge(scheme: "Negotiate", token68: "abc+/def.ghi~_-=="),
                AuthenticationChallenge(scheme: "Basic", parameters: [("realm", "x")]),
            ])
    }

    func testQuotedCommasDoNotSplitAndRepeatedFieldsJoinedWithCommasParse() throws {
        // Two `WWW-Authenticate` lines, as a response joins them.
        let joined =
            #"Basic realm="a, b", Digest realm="r", nonce="n", qop="auth,auth-int", algorithm=SHA-256"#
            + ", " + #"Digest realm="r", nonce="n2", algorithm=MD5"#
        let challenges = try parse(joined)
        XCTAssertEqual(challenges.map(\.scheme), ["Basic", "Digest", "Digest"])
        XCTAssertEqual(challenges[0].realm, "a, b")
        XCTAssertEqual(challenges[1]["qop"], "auth,auth-int")
        XCTAssertEqual(challenges[1]["algorithm"], "SHA-256")
        XCTAssertEqual(challenges[2]["nonce"], "n2")
    }

    func testSchemesAloneEmptyListElementsAndCaseAreAccepted() throws {
        let challenges = try parse(" , Basic,, NEGOTIATE ,Digest REALM = \"x\" , ")
        XCTAssertEqual(challenges.map(\.scheme), ["Basic", "NEGOTIATE", "Digest"])
        XCTAssertEqual(challenges[2].parameters.map(\.name), ["realm"])
        XCTAssertEqual(challenges[2].realm, "x")
        XCTAssertEqual(try parse(""), [])
    }

    func testUnterminatedQuotedStringFails() {
        XCTAssertEqual(failure(#"Basic realm="x"#), .unterminatedQuotedString(offset: 12))
        XCTAssertEqual(failure(#"Basic realm="x\"#), .unterminatedQuotedString(offset: 12))
    }

    func testDuplicateParameterFails() {
        XCTAssertEqual(failure(#"Digest realm="a", nonce="n", REALM="b""#), .duplicateParameter("realm"))
    }

    func testJunkAfterAParameterOrBeforeASchemeFails() {
        XCTAssertEqual(failure(#"Basic realm="x" junk"#), .unexpectedCharacter(offset: 16))
        XCTAssertEqual(failure(#"="x""#), .unexpectedCharacter(offset: 0))
        XCTAssertEqual(failure("Basic realm=\"a\u{01}b\""), .unexpectedCharacter(offset: 14))
        XCTAssertEqual(failure("Basic\"x\""), .unexpectedCharacter(offset: 5))
    }

    func testHugeFieldsAndTooManyElementsFailWithTheirLimit() {
        XCTAssertEqual(
            failure("Basic realm=\"" + String(repeating: "a", count: 20_000) + "\""), .tooLong(limit: 16 * 1024))
        XCTAssertEqual(failure(String(repeating: "Basic, ", count: 40)), .tooManyElements(limit: 32))
        let parameters = (0..<40).map { "p\($0)=1" }.joined(separator: ", ")
        XCTAssertEqual(failure("Digest " + parameters), .tooManyElements(limit: 32))
    }

    func testArbitraryBytesNeverCrashTheParser() {
        var generator = SystemRandomNumberGenerator()
        let alphabet = Array(#"Basic Digest realm=" \,=abc"#.utf8) + [0x00, 0x09, 0x7F, 0xC3, 0xFF]
        for _ in 0..<5_000 {
            let length = Int.random(in: 0..<64, using: &generator)
            let bytes = (0..<length).map { _ in alphabet.randomElement(using: &generator)! }
            _ = try? parser.parse(String(decoding: bytes, as: UTF8.self))
        }
    }
}
