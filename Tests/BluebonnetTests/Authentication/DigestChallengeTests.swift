@testable import Bluebonnet
import Foundation
import XCTest

/// The Digest answer against the RFCs' worked examples, and the offers it refuses.
final class DigestChallengeTests: XCTestCase {
    private func challenge(_ field: String, bodyIsHashable: Bool = true) throws -> DigestChallenge? {
        let parsed = try XCTUnwrap(try AuthenticationChallengeParser().parse(field).first)
        return DigestChallenge(parsed, bodyIsHashable: bodyIsHashable)
    }

    /// The value of `name` in an `Authorization: Digest ...` value, parsed with the challenge grammar.
    private func field(_ name: String, of authorization: String) throws -> String? {
        try XCTUnwrap(try AuthenticationChallengeParser().parse(authorization).first)[name]
    }

    func testRFC2617ExampleGivesItsResponse() throws {
        let digest = try XCTUnwrap(
            try challenge(
                #"Digest realm="testrealm@host.com", qop="auth,auth-int", nonce="dcd98b7102dd2f0e8b11d0f600bfb0c093", opaque="5ccc069c403ebaf9f0171e9517f40e41""#
            ))
        let value = digest.authorization(
            username: "Mufasa", password: "Circle Of Life", method: "GET", uri: "/dir/index.html",
            body: nil, cnonce: "0a4f113b", nonceCount: 1)
        XCTAssertEqual(try field("response", of: value), "6629fae49393a05397450978507c4ef1")
        XCTAssertEqual(try field("qop", of: value), "auth")
        XCTAssertEqual(try field("nc", of: value), "00000001")
        XCTAssertEqual(try field("opaque", of: value), "5ccc069c403ebaf9f0171e9517f40e41")
        XCTAssertEqual(try field("username", of: value), "Mufasa")
        XCTAssertNil(try field("algorithm", of: value), "no algorithm offered, none echoed")
    }

    func testRFC7616ExamplesGiveTheirResponsesForSHA256AndMD5() throws {
        let base =
            #"realm="http-auth@example.org", qop="auth, auth-int", nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#
        let expected = [
            "SHA-256": "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1",
            "MD5": "8ca523f5e9506fed4657c9700eebdbec",
        ]
        for (algorithm, response) in expected {
            let digest = try XCTUnwrap(try challenge("Digest \(base), algorithm=\(algorithm)"))
            let value = digest.authorization(
                username: "Mufasa", password: "Circle of Life", method: "GET", uri: "/dir/index.html",
                body: nil, cnonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ", nonceCount: 1)
            XCTAssertEqual(try field("response", of: value), response, algorithm)
            XCTAssertEqual(try field("algorithm", of: value), algorithm)
        }
    }

    func testSessionVariantsHashTheNoncesIntoA1() throws {
        let digest = try XCTUnwrap(try challenge(#"Digest realm="r", nonce="n", qop="auth", algorithm=MD5-sess"#))
        let value = digest.authorization(
            username: "u", password: "p", method: "GET", uri: "/", body: nil, cnonce: "c", nonceCount: 1)
        let md5 = DigestChallenge.Algorithm.md5
        let a1 = md5.hex("\(md5.hex("u:r:p")):n:c")
        XCTAssertEqual(try field("response", of: value), md5.hex("\(a1):n:00000001:c:auth:\(md5.hex("GET:/"))"))
    }

    func testAuthIntHashesTheBodyAndIsChosenOnlyWhenAuthIsNotOffered() throws {
        let digest = try XCTUnwrap(try challenge(#"Digest realm="r", nonce="n", qop="auth-int", algorithm=SHA-256"#))
        XCTAssertEqual(digest.qop, .authInt)
        let body = Data("{\"a\":1}".utf8)
        let value = digest.authorization(
            username: "u", password: "p", method: "POST", uri: "/p?q=1", body: body, cnonce: "c", nonceCount: 1)
        let sha = DigestChallenge.Algorithm.sha256
        let a2 = sha.hex("POST:/p?q=1:\(sha.hex(body))")
        XCTAssertEqual(try field("response", of: value), sha.hex("\(sha.hex("u:r:p")):n:00000001:c:auth-int:\(a2)"))
        XCTAssertNil(
            try challenge(#"Digest realm="r", nonce="n", qop="auth-int""#, bodyIsHashable: false),
            "a streamed body cannot be hashed, so auth-int alone is not answered")
        XCTAssertEqual(try challenge(#"Digest realm="r", nonce="n", qop="auth-int, auth""#)?.qop, .auth)
    }

    func testRFC2069ChallengeWithoutQopIsAnsweredWithoutNonceCount() throws {
        let digest = try XCTUnwrap(try challenge(#"Digest realm="r", nonce="n""#))
        let value = digest.authorization(
            username: "u", password: "p", method: "GET", uri: "/", body: nil, cnonce: "c", nonceCount: 1)
        let md5 = DigestChallenge.Algorithm.md5
        XCTAssertEqual(try field("response", of: value), md5.hex("\(md5.hex("u:r:p")):n:\(md5.hex("GET:/"))"))
        XCTAssertNil(try field("nc", of: value))
        XCTAssertNil(try field("cnonce", of: value))
    }

    func testUserhashSendsTheHashedNameAndSaysSo() throws {
        let digest = try XCTUnwrap(
            try challenge(#"Digest realm="r", nonce="n", qop="auth", algorithm=SHA-256, userhash=true"#))
        let value = digest.authorization(
            username: "Mufasa", password: "p", method: "GET", uri: "/", body: nil, cnonce: "c", nonceCount: 1)
        XCTAssertEqual(try field("username", of: value), DigestChallenge.Algorithm.sha256.hex("Mufasa:r"))
        XCTAssertEqual(try field("userhash", of: value), "true")
    }

    func testNamesAreQuotedOrExtendedSoNoByteEscapesTheField() throws {
        let digest = try XCTUnwrap(try challenge(#"Digest realm="r", nonce="n", qop="auth""#))
        let quoted = digest.authorization(
            username: #"a"b\c"#, password: "p", method: "GET", uri: "/", body: nil, cnonce: "c", nonceCount: 1)
        XCTAssertEqual(try field("username", of: quoted), #"a"b\c"#)
        let extended = digest.authorization(
            username: "Jäsøn Doe", password: "p", method: "GET", uri: "/", body: nil, cnonce: "c", nonceCount: 1)
        XCTAssertEqual(try field("username*", of: extended), "UTF-8''J%C3%A4s%C3%B8n%20Doe")
        XCTAssertNil(try field("username", of: extended))
    }

    func testStaleFlagOpaqueAndNonceCountAreRead() throws {
        let digest = try XCTUnwrap(try challenge(#"Digest realm="r", nonce="n", qop="auth", stale=TRUE, opaque="o""#))
        XCTAssertTrue(digest.isStale)
        let value = digest.authorization(
            username: "u", password: "p", method: "GET", uri: "/", body: nil, cnonce: "c", nonceCount: 255)
        XCTAssertEqual(try field("nc", of: value), "000000ff")
        XCTAssertEqual(try field("opaque", of: value), "o")
    }

    func testUnsupportedOffersAreNotAnswerable() throws {
        XCTAssertNil(try challenge(#"Digest realm="r", nonce="n", algorithm=SHA-512-256"#))
        XCTAssertNil(try challenge(#"Digest realm="r", qop="auth""#), "no nonce")
        XCTAssertNil(try challenge(#"Digest nonce="n""#), "no realm")
        XCTAssertNil(try challenge(#"Digest realm="r", nonce="n", qop="auth-conf""#))
        XCTAssertNil(try challenge(#"Basic realm="r""#))
        XCTAssertNil(
            try challenge(#"Digest realm="r", nonce="n", algorithm=MD5-sess"#), "-sess needs a qop answer's cnonce")
    }

    func testClientNoncesAreFreshEachTime() {
        let nonces = Set((0..<100).map { _ in DigestChallenge.makeClientNonce() })
        XCTAssertEqual(nonces.count, 100)
        XCTAssertTrue(nonces.allSatisfy { $0.count == 32 })
    }
}
