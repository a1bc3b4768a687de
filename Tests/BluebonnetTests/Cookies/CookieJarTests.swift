@testable import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the jar stores from `Set-Cookie` fields and sends back (RFC 6265 §5.3, §5.4 and RFC 6265bis's `Secure`
/// rules), on a fresh in-memory storage.
final class CookieJarTests: XCTestCase {
    var storage: HTTPCookieStorage!
    var jar: CookieJar!

    override func setUp() {
        super.setUp()
        storage = URLSessionConfiguration.ephemeral.httpCookieStorage
        jar = CookieJar(storage: storage, sendsCookies: true, acceptPolicy: .always)
    }

    func set(_ fields: String..., from url: String, now: Date = Date()) {
        jar.store(fields, from: URL(string: url)!, mainDocumentURL: nil, now: now)
    }

    func sent(to url: String, now: Date = Date()) -> String? {
        jar.cookieHeader(for: URL(string: url)!, now: now)
    }

    func testAHostOnlyCookieGoesToItsHostOnlyAndADomainCookieToSubdomainsToo() {
        set("host=1", from: "http://example.com/")
        set("dom=2; Domain=example.com", from: "http://example.com/")
        XCTAssertEqual(sent(to: "http://example.com/"), "host=1; dom=2")
        XCTAssertEqual(sent(to: "http://www.example.com/"), "dom=2")
        XCTAssertNil(sent(to: "http://notexample.com/"))
        XCTAssertNil(sent(to: "http://example.org/"))
        XCTAssertEqual(Set(storage.cookies!.map(\.domain)), ["example.com", ".example.com"])
    }

    func testALeadingDotInDomainIsIgnoredAndAForeignOrParentlessDomainRefused() {
        set("a=1; Domain=.example.com", from: "http://www.example.com/")
        XCTAssertEqual(sent(to: "http://example.com/"), "a=1")
        set("b=1; Domain=other.com", from: "http://www.example.com/")
        set("c=1; Domain=www.example.com.evil", from: "http://www.example.com/")
        set("d=1; Domain=sub.www.example.com", from: "http://www.example.com/")
        XCTAssertEqual(storage.cookies?.map(\.name), ["a"])
    }

    func testAPublicSuffixIsRefusedAsADomainUnlessItIsTheHostItself() {
        set("a=1; Domain=co.uk", from: "http://www.example.co.uk/")
        set("b=1; Domain=com", from: "http://example.com/")
        set("c=1; Domain=github.io", from: "http://user.github.io/")
        XCTAssertEqual(storage.cookies?.count, 0)
        set("d=1; Domain=example.co.uk", from: "http://www.example.co.uk/")
        XCTAssertEqual(sent(to: "http://other.example.co.uk/"), "d=1")
        XCTAssertNil(sent(to: "http://other.co.uk/"))
        // `localhost` is a suffix by the implicit rule, and the host itself: a host-only cookie.
        set("e=1; Domain=localhost", from: "http://localhost:8080/")
        XCTAssertEqual(storage.cookies?.first { $0.name == "e" }?.domain, "localhost")
        XCTAssertNil(sent(to: "http://sub.localhost/"))
    }

    func testAnIPAddressHostGetsOnlyHostOnlyCookies() {
        set("a=1", from: "http://127.0.0.1:1/")
        set("b=1; Domain=127.0.0.1", from: "http://127.0.0.1:1/")
        set("c=1; Domain=0.0.1", from: "http://127.0.0.1:1/")
        XCTAssertEqual(Set(storage.cookies!.map(\.name)), ["a", "b"])
        XCTAssertEqual(Set(storage.cookies!.map(\.domain)), ["127.0.0.1"])
        XCTAssertEqual(sent(to: "http://127.0.0.1:2/"), "a=1; b=1", "ports do not separate cookies")
        XCTAssertNil(sent(to: "http://127.0.0.2/"))
        set("v6=1", from: "http://[::1]:8080/")
        XCTAssertEqual(sent(to: "http://[::1]/"), "v6=1")
    }

    func testTheDefaultPathIsTheDirectoryOfTheRequestPath() {
        set("a=1", from: "http://example.com/docs/page")
        set("b=1", from: "http://example.com/docs/")
        set("c=1", from: "http://example.com/top")
        set("d=1", from: "http://example.com")
        let paths = Dictionary(uniqueKeysWithValues: storage.cookies!.map { ($0.name, $0.path) })
        XCTAssertEqual(paths, ["a": "/docs", "b": "/docs", "c": "/", "d": "/"])
    }

    func testPathsMatchOnlyAtASlashWithOrWithoutATrailingSlash() {
        set("a=1; Path=/docs", from: "http://example.com/")
        set("b=1; Path=/docs/", from: "http://example.com/")
        XCTAssertEqual(sent(to: "http://example.com/docs"), "a=1")
        XCTAssertEqual(sent(to: "http://example.com/docs/x"), "b=1; a=1", "longer path first")
        XCTAssertNil(sent(to: "http://example.com/docsx"))
        XCTAssertNil(sent(to: "http://example.com/"))
        XCTAssertNil(sent(to: "http://example.com/Docs"), "paths are case-sensitive")
    }

    func testCookiesOfEqualPathGoOldestFirstAndAReplacementKeepsItsPlace() {
        let start = Date()
        set("first=1", from: "http://example.com/", now: start)
        set("second=1", from: "http://example.com/", now: start + 0.01)
        set("first=2", from: "http://example.com/", now: start + 0.02)
        XCTAssertEqual(sent(to: "http://example.com/", now: start + 1), "first=2; second=1")
        XCTAssertEqual(storage.cookies?.count, 2)
    }

    func testAHostOnlyCookieAndADomainCookieOfTheSameNameAndPathReplaceEachOther() {
        set("a=host", from: "http://example.com/")
        set("a=domain; Domain=example.com", from: "http://example.com/")
        XCTAssertEqual(storage.cookies?.map(\.value), ["domain"])
        set("a=host-again", from: "http://example.com/")
        XCTAssertEqual(storage.cookies?.map(\.value), ["host-again"])
    }

    func testAnExpiryInThePastDeletesTheCookieAndMaxAgePrevailsOverExpires() {
        set("a=1", "b=1", "c=1", from: "http://example.com/")
        set("a=; Expires=Thu, 01 Jan 1970 00:00:00 GMT", from: "http://example.com/")
        set("b=; Max-Age=0", from: "http://example.com/")
        set("c=2; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=60", from: "http://example.com/")
        set("d=2; Expires=Thu, 01 Jan 2099 00:00:00 GMT; Max-Age=-1", from: "http://example.com/")
        XCTAssertEqual(sent(to: "http://example.com/"), "c=2")
    }

    func testAnExpiredCookieIsNotSentAndLifetimesAreCappedAt400Days() throws {
        let now = Date()
        set("short=1; Max-Age=10", from: "http://example.com/", now: now)
        XCTAssertEqual(sent(to: "http://example.com/", now: now.addingTimeInterval(9)), "short=1")
        XCTAssertNil(sent(to: "http://example.com/", now: now.addingTimeInterval(11)))
        set("long=1; Max-Age=999999999", from: "http://example.com/", now: now)
        let expires = try XCTUnwrap(storage.cookies?.first { $0.name == "long" }?.expiresDate)
        XCTAssertEqual(expires.timeIntervalSince(now), CookieJar.maximumLifetime, accuracy: 1)
        XCTAssertEqual(storage.cookies?.first { $0.name == "long" }?.isSessionOnly, false)
    }

    func testSecureCookiesComeOnlyFromAndGoOnlyToSecureOrigins() {
        set("s=1; Secure", from: "http://example.com/")
        XCTAssertEqual(storage.cookies?.count, 0, "an insecure origin cannot set a Secure cookie")
        set("s=1; Secure", from: "https://example.com/")
        XCTAssertEqual(sent(to: "https://example.com/"), "s=1")
        XCTAssertNil(sent(to: "http://example.com/"))
        XCTAssertEqual(sent(to: "wss://example.com/"), "s=1")
        // Nor may an insecure origin shadow it.
        set("s=evil", from: "http://example.com/")
        XCTAssertEqual(storage.cookies?.map(\.value), ["1"])
        // Loopback counts as secure, as browsers count it.
        set("l=1; Secure", from: "http://localhost/")
        XCTAssertEqual(sent(to: "http://localhost/"), "l=1")
        set("l=1; Secure", from: "http://127.0.0.1/")
        XCTAssertEqual(sent(to: "http://127.0.0.1/"), "l=1")
    }

    func testCookiePrefixesAreEnforced() {
        set("__Secure-a=1", from: "https://example.com/")
        set("__Host-b=1; Secure; Path=/; Domain=example.com", from: "https://example.com/")
        set("__Host-c=1; Secure; Path=/sub", from: "https://example.com/")
        XCTAssertEqual(storage.cookies?.count, 0)
        set("__Secure-a=1; Secure; Domain=example.com", from: "https://www.example.com/")
        set("__Host-b=1; Secure; Path=/", from: "https://example.com/")
        XCTAssertEqual(Set(storage.cookies!.map(\.name)), ["__Secure-a", "__Host-b"])
    }

    /// Issue 24 (8): RFC 6265bis matches `__Secure-` and `__Host-` in any case.
    func testCookiePrefixesAreMatchedInAnyCase() {
        set("__HOST-a=1", from: "http://example.com/")
        set("__secure-b=1", from: "http://example.com/")
        set("__SeCuRe-c=1; Domain=example.com", from: "https://example.com/")
        set("__host-d=1; Secure; Path=/sub", from: "https://example.com/")
        set("__HoSt-e=1; Secure; Path=/; Domain=example.com", from: "https://example.com/")
        XCTAssertEqual(storage.cookies?.count, 0)
        set("__HOST-f=1; Secure; Path=/", from: "https://example.com/")
        set("__secure-g=1; Secure", from: "https://example.com/")
        set("_Host-h=1", from: "http://example.com/")
        XCTAssertEqual(Set(storage.cookies!.map(\.name)), ["__HOST-f", "__secure-g", "_Host-h"])
    }

    func testHttpOnlyAndSameSiteAreKept() throws {
        set("a=1; HttpOnly; SameSite=Strict", from: "http://example.com/")
        let cookie = try XCTUnwrap(storage.cookies?.first)
        XCTAssertTrue(cookie.isHTTPOnly)
        XCTAssertEqual(storage.af.sameSitePolicy(of: cookie), .strict)
        set("a=2", from: "http://example.com/")
        XCTAssertNil(
            storage.af.sameSitePolicy(of: try XCTUnwrap(storage.cookies?.first)), "the replacement said nothing")
    }

    func testTheAcceptPolicyDecidesWhatIsStored() {
        CookieJar(storage: storage, sendsCookies: true, acceptPolicy: .never)
            .store(["a=1"], from: URL(string: "http://example.com/")!, mainDocumentURL: nil)
        XCTAssertEqual(storage.cookies?.count, 0)
        let mainOnly = CookieJar(storage: storage, sendsCookies: true, acceptPolicy: .onlyFromMainDocumentDomain)
        mainOnly.store(
            ["third=1"], from: URL(string: "http://tracker.net/")!,
            mainDocumentURL: URL(string: "http://www.example.com/")!)
        mainOnly.store(
            ["first=1"], from: URL(string: "http://api.example.com/")!,
            mainDocumentURL: URL(string: "http://www.example.com/")!)
        XCTAssertEqual(storage.cookies?.map(\.name), ["first"])
        let silent = CookieJar(storage: storage, sendsCookies: false, acceptPolicy: .always)
        XCTAssertNil(silent.cookieHeader(for: URL(string: "http://api.example.com/")!))
    }

    func testAFloodOfCookiesIsBoundedPerSiteAndPerResponse() {
        let fields = (0..<(CookieJar.maximumFieldsPerResponse + 10)).map { "c\($0)=1" }
        jar.store(fields, from: URL(string: "http://example.com/")!, mainDocumentURL: nil)
        XCTAssertEqual(storage.cookies?.count, CookieJar.maximumFieldsPerResponse)
        for batch in 0..<4 {
            let fields = (0..<50).map { "b\(batch)_\($0)=1; Domain=example.com" }
            jar.store(fields, from: URL(string: "http://www\(batch).example.com/")!, mainDocumentURL: nil)
        }
        XCTAssertEqual(storage.cookies?.count, CookieJar.maximumCookiesPerDomain)
        XCTAssertFalse(storage.cookies!.contains { $0.name == "c0" }, "the oldest went first")
        XCTAssertTrue(storage.cookies!.contains { $0.name == "b3_49" })
    }

    /// An IP address host's cookies were measured against the "site" `0.1` and never reached the per-site bound.
    func testAnIPAddressHostsCookiesAreBoundedAsOneSite() {
        for batch in 0..<5 {
            jar.store(
                (0..<50).map { "ip\(batch)_\($0)=1" }, from: URL(string: "http://127.0.0.1:8080/")!,
                mainDocumentURL: nil)
        }
        XCTAssertEqual(storage.cookies?.count, CookieJar.maximumCookiesPerDomain)
        XCTAssertEqual(CookieTarget.site(ofDomain: "127.0.0.1"), "127.0.0.1")
        XCTAssertEqual(CookieTarget.site(ofDomain: "::1"), "::1")
        // Another address is another site.
        jar.store(["other=1"], from: URL(string: "http://127.0.0.2/")!, mainDocumentURL: nil)
        XCTAssertEqual(storage.cookies?.count, CookieJar.maximumCookiesPerDomain + 1)
    }

    func testABatchThatSetsAndDropsACookieLeavesTheStorageUntouchedByIt() {
        set("keep=1", from: "http://example.com/")
        // Made and removed within one response: never reaches the storage, and the one before it stays.
        set("gone=1", "gone=; Max-Age=0", "keep=2", from: "http://example.com/")
        XCTAssertEqual(storage.cookies?.map { "\($0.name)=\($0.value)" }, ["keep=2"])
    }

    func testFoundationsOwnMatchingIsReplacedByTheRFCsInTheAfExtension() {
        set("a=1; Path=/docs", "b=1", from: "http://example.com/docs/x")
        XCTAssertEqual(storage.af.cookies(for: URL(string: "http://example.com/docs/y")!).map(\.name), ["a", "b"])
        XCTAssertEqual(storage.af.cookies(for: URL(string: "http://example.com/")!).map(\.name), [])
        XCTAssertEqual(
            storage.cookies(for: URL(string: "http://example.com/")!)?.count, 2, "Foundation's, by domain only")
    }

    /// A cookie file read back (a session file, `af.read(from:)`) is untrusted: it is bounded like a server's answer.
    func testImportedCookiesKeepTheJarsLimitsAndAnOversizedArchiveIsRefused() throws {
        let source = URLSessionConfiguration.ephemeral.httpCookieStorage!
        for index in 0..<(CookieJar.maximumCookiesPerDomain + 20) {
            source.setCookie(
                CookieJar.makeCookie(
                    name: "c\(index)", value: "v", domain: "example.com", path: "/",
                    expires: Date(timeIntervalSinceNow: 600), secure: false, httpOnly: false)!)
        }
        source.setCookie(
            CookieJar.makeCookie(
                name: "other", value: "v", domain: "example.org", path: "/",
                expires: Date(timeIntervalSinceNow: 600), secure: false, httpOnly: false)!)
        let archive = try source.af.exportedCookies()
        XCTAssertEqual(try storage.af.importCookies(from: archive), CookieJar.maximumCookiesPerDomain + 21)
        let sites = Dictionary(grouping: storage.cookies ?? [], by: { CookieJar.bareDomain($0) }).mapValues(\.count)
        XCTAssertEqual(sites, ["example.com": CookieJar.maximumCookiesPerDomain, "example.org": 1])
        // Valid JSON, an empty archive, padded past the bound: refused for its size alone.
        var huge = Data(#"{"cookies":[]}"#.utf8)
        huge.append(Data(repeating: 0x20, count: CookieArchive.maximumLength))
        XCTAssertThrowsError(try storage.af.importCookies(from: huge)) { error in
            XCTAssertTrue("\(error)".contains("at most"), "\(error)")
        }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("cookies-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try huge.write(to: file)
        XCTAssertThrowsError(try storage.af.read(from: file))
    }

    func testCookiesExportAndImportWholeAndTheFileIsReplacedAtomically() throws {
        set(
            "kept=1; Max-Age=3600; SameSite=Lax; HttpOnly", "session=1; Domain=example.com; Path=/p",
            from: "https://example.com/")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("cookies-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: file) }
        try storage.af.write(to: file)
        let restored = try XCTUnwrap(URLSessionConfiguration.ephemeral.httpCookieStorage)
        XCTAssertEqual(try restored.af.read(from: file), 1, "session cookies are left out by default")
        try storage.af.write(to: file, includingSessionCookies: true)
        let all = try XCTUnwrap(URLSessionConfiguration.ephemeral.httpCookieStorage)
        XCTAssertEqual(try all.af.read(from: file), 2)
        let kept = try XCTUnwrap(all.cookies?.first { $0.name == "kept" })
        XCTAssertTrue(kept.isHTTPOnly)
        XCTAssertEqual(all.af.sameSitePolicy(of: kept), .lax)
        XCTAssertEqual(all.af.cookies(for: URL(string: "https://www.example.com/p")!).map(\.name), ["session"])
        XCTAssertThrowsError(try all.af.importCookies(from: Data("{\"cookies\": 3}".utf8)))
    }
}

/// RFC 6265 §3.1's own examples, in order.
final class CookieRFCExampleTests: XCTestCase {
    func testTheRFCsExamples() throws {
        let storage = try XCTUnwrap(URLSessionConfiguration.ephemeral.httpCookieStorage)
        let jar = CookieJar(storage: storage, sendsCookies: true, acceptPolicy: .always)
        let site = URL(string: "https://example.com/")!
        // "Set-Cookie: SID=31d4d96e407aad42" ... "Cookie: SID=31d4d96e407aad42"
        jar.store(["SID=31d4d96e407aad42"], from: site, mainDocumentURL: nil)
        XCTAssertEqual(jar.cookieHeader(for: site), "SID=31d4d96e407aad42")
        // Two cookies, one Secure and HttpOnly at "/", one for the domain: both come back, and "lang" goes to
        // subdomains too.
        jar.store(
            ["SID=31d4d96e407aad42; Path=/; Secure; HttpOnly", "lang=en-US; Path=/; Domain=example.com"], from: site,
            mainDocumentURL: nil)
        XCTAssertEqual(jar.cookieHeader(for: site), "SID=31d4d96e407aad42; lang=en-US")
        XCTAssertEqual(jar.cookieHeader(for: URL(string: "https://www.example.com/")!), "lang=en-US")
        // "Set-Cookie: lang=; Expires=Sun, 06 Nov 1994 08:49:37 GMT" removes it.
        jar.store(
            ["lang=; Expires=Sun, 06 Nov 1994 08:49:37 GMT; Domain=example.com; Path=/"], from: site,
            mainDocumentURL: nil)
        XCTAssertEqual(jar.cookieHeader(for: site), "SID=31d4d96e407aad42")
        // A persistent cookie lives on: "lang=en-US; Expires=..." in the future.
        let future = Date().addingTimeInterval(86400)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        jar.store(["lang=en-US; Expires=\(formatter.string(from: future))"], from: site, mainDocumentURL: nil)
        XCTAssertEqual(storage.cookies?.first { $0.name == "lang" }?.isSessionOnly, false)
        XCTAssertEqual(jar.cookieHeader(for: site), "SID=31d4d96e407aad42; lang=en-US")
    }
}
