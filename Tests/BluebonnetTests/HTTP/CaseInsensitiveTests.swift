@testable import Bluebonnet
import XCTest

/// `equalsIgnoringCase`, which replaced Foundation's `caseInsensitiveCompare` on the per-request path.
final class CaseInsensitiveTests: XCTestCase {
    func testASCIIComparesIgnoringCaseOnly() {
        XCTAssertTrue("Cookie".equalsIgnoringCase("cOOKIE"))
        XCTAssertTrue("".equalsIgnoringCase(""))
        XCTAssertTrue("X-Request-ID".equalsIgnoringCase("x-request-id"))
        XCTAssertFalse("Cookie".equalsIgnoringCase("Cookies"), "a prefix")
        XCTAssertFalse("Cookies".equalsIgnoringCase("Cookie"))
        XCTAssertFalse("Cookie".equalsIgnoringCase("Cookid"))
        // Bytes that differ by 0x20 but are not letters are different characters.
        XCTAssertFalse("@".equalsIgnoringCase("`"))
        XCTAssertFalse("[".equalsIgnoringCase("{"))
        XCTAssertFalse("1".equalsIgnoringCase("\u{11}"))
    }

    func testSubstringsCompareToo() {
        let line = "Content-Type: text/plain"
        let name = line.prefix { $0 != ":" }
        XCTAssertTrue(name.equalsIgnoringCase("content-type"))
    }

    func testBeyondASCIIItIsWhatLowercasedSays() {
        XCTAssertTrue("Ünïcode".equalsIgnoringCase("üNÏCODE"))
        XCTAssertFalse("Straße".equalsIgnoringCase("STRASSE"), "lowercased() does not fold ß into ss")
        XCTAssertEqual("Ä".equalsIgnoringCase("ä"), "Ä".lowercased() == "ä".lowercased())
    }

    func testHTTPHeadersFindNamesAsAlamofireDoes() {
        let headers: HTTPHeaders = ["Content-Type": "a", "X-Ünï": "b"]
        XCTAssertEqual(headers["CONTENT-type"], "a")
        XCTAssertEqual(headers["x-üNÏ"], "b")
        XCTAssertNil(headers["Content-Typ"])
    }
}
