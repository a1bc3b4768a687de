import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPCookieStorage: AlamofireExtended {}

extension AlamofireExtension where ExtendedType: HTTPCookieStorage {
    /// The cookies a request to `url` carries, by RFC 6265's rules, in the order they are sent.
    ///
    /// FoundationNetworking's `cookies(for:)` on Linux matches by domain only; this applies host-only cookies, paths,
    /// `Secure` and expiry, as a `Session` does.
    ///
    /// - Parameter url: The request's URL.
    /// - Returns: The cookies, longest path first, then oldest first.
    public func cookies(for url: URL) -> [HTTPCookie] {
        CookieJar.matching(PendingCookieWrites.cookies(of: type), in: type, url: url, now: Date())
    }

    /// The `SameSite` attribute a stored cookie was set with, which `HTTPCookie` cannot hold on Linux.
    ///
    /// - Parameter cookie: A cookie of this storage that a `Session` stored (or `read(from:)` loaded).
    /// - Returns: The policy, or `nil` when the server gave none.
    public func sameSitePolicy(of cookie: HTTPCookie) -> CookieSameSitePolicy? {
        CookieAttributes.extras(of: [cookie], in: type).first??.sameSite
    }

    /// The storage's cookies as JSON (the format `importCookies(from:)` and `read(from:)` take), `SameSite` included.
    ///
    /// - Parameter includingSessionCookies: Whether cookies without an expiry date are kept too, as httpie's sessions
    ///                                      keep them. `false` by default, as a browser drops them when it quits.
    /// - Returns: The JSON.
    /// - Throws: The error of encoding.
    public func exportedCookies(includingSessionCookies: Bool = false) throws -> Data {
        let now = Date()
        let cookies = PendingCookieWrites.cookies(of: type).filter { cookie in
            if let expires = cookie.expiresDate { return expires > now }
            return includingSessionCookies
        }
        let entries = cookies.sorted { CookieJar.key(of: $0) < CookieJar.key(of: $1) }
            .map { CookieArchive.Entry($0, sameSite: sameSitePolicy(of: $0)) }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return try encoder.encode(CookieArchive(cookies: entries))
    }

    /// Adds the cookies of JSON that `exportedCookies(includingSessionCookies:)` made; expired ones are skipped.
    ///
    /// A file read back is untrusted like a server's answer: JSON over 16 MiB is refused, and the jar's limits
    /// (180 cookies a site, 3,000 in all) hold, the oldest going first.
    ///
    /// - Parameter data: The JSON.
    /// - Returns: How many cookies were read and added.
    /// - Throws: A `DecodingError` when the data is not such JSON, or is larger than that.
    @discardableResult
    public func importCookies(from data: Data) throws -> Int {
        guard data.count <= CookieArchive.maximumLength else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: [], debugDescription: "a cookie archive is at most \(CookieArchive.maximumLength) bytes"
                ))
        }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        let archive = try decoder.decode(CookieArchive.self, from: data)
        let now = Date()
        let cookies = archive.cookies.filter { ($0.expires ?? .distantFuture) > now }
            .compactMap { entry in
                entry.cookie.map { (cookie: $0, extras: CookieAttributes.Extras(sameSite: entry.sameSite)) }
            }
        // One batch: a persistent storage is written once for all of them, not once per cookie.
        CookieJar(storage: type, sendsCookies: true, acceptPolicy: .always).add(cookies)
        return cookies.count
    }

    /// Waits until the cookies sessions stored are in the storage itself, as its own API (`cookies`,
    /// `cookies(for:)`) shows them.
    ///
    /// FoundationNetworking rewrites a persistent storage's file (`HTTPCookieStorage.shared`'s) on every change, so
    /// sessions hand it each response's cookies as one batch, written off the request path. Every Bluebonnet
    /// request, and `af.cookies(for:)`, sees them at once; code that reads the storage through Foundation right
    /// after a response can wait for them here. A storage that persists nothing is written at once.
    public func waitForPendingWrites() async {
        guard let writer = PendingCookieWrites.existingWriter(for: type) else { return }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            writer.whenWritten { continuation.resume() }
        }
    }

    /// Writes the storage's cookies to a file in one go: to a temporary file beside it, then renamed over it, so a
    /// crash mid-write leaves the old file whole. Call it when you choose (at exit, on a timer): persistence in
    /// batches, never a write per cookie.
    ///
    /// - Parameters:
    ///   - url:                     The file.
    ///   - includingSessionCookies: Whether cookies without an expiry date are written too.
    /// - Throws: The error of encoding or writing.
    public func write(to url: URL, includingSessionCookies: Bool = false) throws {
        try exportedCookies(includingSessionCookies: includingSessionCookies).write(to: url, options: .atomic)
    }

    /// Adds the cookies of a file `write(to:includingSessionCookies:)` wrote; expired ones are skipped.
    ///
    /// - Parameter url: The file.
    /// - Returns: How many cookies were added.
    /// - Throws: The error of reading or decoding the file.
    @discardableResult
    public func read(from url: URL) throws -> Int {
        // Never more of the file than an archive may hold, however large it is.
        let handle = try FileHandle(forReadingFrom: url)
        defer { try? handle.close() }
        return try importCookies(from: handle.read(upToCount: CookieArchive.maximumLength + 1) ?? Data())
    }
}

/// The file format of `HTTPCookieStorage.af.write(to:)`: plain JSON a person can read and edit.
struct CookieArchive: Codable {
    /// The largest archive read: the jar's 3,000 cookies of 4 KiB each, with room for the JSON around them.
    static let maximumLength = 16 << 20

    struct Entry: Codable {
        var name: String
        var value: String
        /// With a leading dot for a domain cookie, as `HTTPCookie.domain` has it.
        var domain: String
        var path: String
        var expires: Date?
        var secure: Bool
        var httpOnly: Bool
        var sameSite: CookieSameSitePolicy?

        init(_ cookie: HTTPCookie, sameSite: CookieSameSitePolicy?) {
            name = cookie.name
            value = cookie.value
            domain = cookie.domain
            path = cookie.path
            expires = cookie.expiresDate
            secure = cookie.isSecure
            httpOnly = cookie.isHTTPOnly
            self.sameSite = sameSite
        }

        var cookie: HTTPCookie? {
            CookieJar.makeCookie(
                name: name, value: value, domain: domain, path: path, expires: expires, secure: secure,
                httpOnly: httpOnly)
        }
    }

    var cookies: [Entry]
}
