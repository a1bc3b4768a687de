@testable import Bluebonnet
import Foundation
import XCTest

/// `Set-Cookie` parsing (RFC 6265 §5.2), cookie dates (§5.1.1) and the Public Suffix List.
final class CookieParsingTests: XCTestCase {
    func date(_ text: String) -> Date? { HTTPDate.parse(Substring(text)) }

    func testEveryHTTPDateFormAndTheLooseFormsServersWriteParse() {
        let expected = Date(timeIntervalSince1970: 784_111_777)  // 1994-11-06 08:49:37 UTC
        for text in [
            "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
            "06 nov 1994 08:49:37", "Sun, 06-Nov-1994 08:49:37 UTC", "8:49:37 6 November 1994",
        ] {
            XCTAssertEqual(date(text), expected, text)
        }
        XCTAssertEqual(date("Thu, 01 Jan 1970 00:00:00 GMT"), Date(timeIntervalSince1970: 0))
        XCTAssertEqual(date("Wed, 29 Feb 2040 23:59:59 GMT"), Date(timeIntervalSince1970: 2_214_172_799))
    }

    func testImpossibleOrIncompleteDatesAreRefused() {
        for text in [
            "Sun, 30 Feb 2025 08:49:37 GMT", "Sun, 06 Nov 1600 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT",
            "Sun, 06 Nov 1994", "06 Foo 1994 08:49:37", "", "0", "Sun, 00 Nov 1994 08:49:37 GMT",
            "Sun, 06 Nov 99999 08:49:37 GMT", "Fri, 29 Feb 2030 10:00:00 GMT",
        ] {
            XCTAssertNil(date(text), text)
        }
    }

    func testEveryAttributeIsReadCaseInsensitivelyAndTheLastOneWins() throws {
        let cookie = try XCTUnwrap(
            SetCookie(" sid = a b ; PATH=/x; domain=.Example.COM; Secure; httponly; SameSite=lax; Path=/y"))
        XCTAssertEqual(cookie.name, "sid")
        XCTAssertEqual(cookie.value, "a b")
        XCTAssertEqual(cookie.path, "/y")
        XCTAssertEqual(cookie.domain, "example.com")
        XCTAssertTrue(cookie.secure)
        XCTAssertTrue(cookie.httpOnly)
        XCTAssertEqual(cookie.sameSite, .lax)
    }

    func testMaxAgeAndExpiresAreBothKeptAndBadValuesIgnored() throws {
        let both = try XCTUnwrap(SetCookie("a=1; Expires=Sun, 06 Nov 1994 08:49:37 GMT; Max-Age=60"))
        XCTAssertEqual(both.maxAge, 60)
        XCTAssertEqual(both.expires, Date(timeIntervalSince1970: 784_111_777))
        XCTAssertEqual(try XCTUnwrap(SetCookie("a=1; Max-Age=-5")).maxAge, -5)
        XCTAssertEqual(try XCTUnwrap(SetCookie("a=1; Max-Age=99999999999999999999999")).maxAge, .max)
        for bad in ["a=1; Max-Age=1.5", "a=1; Max-Age=", "a=1; Max-Age=+3", "a=1; Expires=never"] {
            let cookie = try XCTUnwrap(SetCookie(bad), bad)
            XCTAssertNil(cookie.maxAge, bad)
            XCTAssertNil(cookie.expires, bad)
        }
        XCTAssertNil(try XCTUnwrap(SetCookie("a=1; Path=relative")).path)
        XCTAssertEqual(try XCTUnwrap(SetCookie("a=1; Domain=example.com; Domain=")).domain, "example.com")
        XCTAssertNil(try XCTUnwrap(SetCookie("a=1; SameSite=sometimes")).sameSite)
    }

    func testFieldsTheRFCSaysToIgnoreAreIgnored() {
        let tooLong = "a=" + String(repeating: "x", count: SetCookie.maximumNameAndValueLength)
        for field in ["novalue", "=value", " =value", "", ";a=1", "a\u{1}=1", "a=1\u{7f}", tooLong] {
            XCTAssertNil(SetCookie(field), field.debugDescription)
        }
        XCTAssertEqual(SetCookie("a=")?.value, "")
        XCTAssertEqual(SetCookie("a==b=")?.value, "=b=")
    }

    func testPublicSuffixesFollowTheListIncludingWildcardsExceptionsAndPrivateEntries() {
        XCTAssertEqual(PublicSuffixList.publicSuffix(of: "www.example.co.uk"), "co.uk")
        XCTAssertEqual(PublicSuffixList.registrableDomain(of: "www.example.co.uk"), "example.co.uk")
        XCTAssertEqual(PublicSuffixList.registrableDomain(of: "a.b.example.com"), "example.com")
        XCTAssertTrue(PublicSuffixList.isPublicSuffix("com"))
        XCTAssertTrue(PublicSuffixList.isPublicSuffix("co.uk"))
        XCTAssertTrue(PublicSuffixList.isPublicSuffix("github.io"))
        XCTAssertTrue(PublicSuffixList.isPublicSuffix("localhost"), "the implicit * rule")
        XCTAssertTrue(PublicSuffixList.isPublicSuffix("anything.ck"), "*.ck")
        XCTAssertFalse(PublicSuffixList.isPublicSuffix("www.ck"), "!www.ck")
        XCTAssertEqual(PublicSuffixList.registrableDomain(of: "a.www.ck"), "www.ck")
        XCTAssertTrue(PublicSuffixList.isPublicSuffix("xn--55qx5d.cn"), "公司.cn, in its IDNA form")
        XCTAssertFalse(PublicSuffixList.isPublicSuffix("example.com"))
        XCTAssertFalse(PublicSuffixList.isPublicSuffix("user.github.io"))
        XCTAssertNil(PublicSuffixList.registrableDomain(of: "co.uk"))
        XCTAssertNil(PublicSuffixList.publicSuffix(of: "a..com"))
        XCTAssertNil(PublicSuffixList.publicSuffix(of: ""))
    }
}
