import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a stored cookie has that `HTTPCookie` on Linux cannot hold, by storage and cookie identity: its `SameSite`,
/// and the creation time of the cookie it replaced (RFC 6265 §5.3 keeps it; Foundation stamps every new
/// `HTTPCookie` with the current time).
enum CookieAttributes {
    /// The extras of one cookie.
    struct Extras: Sendable {
        var sameSite: CookieSameSitePolicy?
        /// Seconds since the reference date, when it differs from the `HTTPCookie`'s own.
        var created: Double?
    }

    private struct Key: Hashable {
        let storage: ObjectIdentifier
        let cookie: String
    }

    private static let table = Protected<[Key: Extras]>([:])

    /// Records the extras of a cookie just stored; a cookie with none forgets older ones.
    static func remember(_ extras: Extras, of cookie: HTTPCookie, in storage: HTTPCookieStorage) {
        let key = Key(storage: ObjectIdentifier(storage), cookie: CookieJar.key(of: cookie))
        let bound = CookieJar.maximumCookies * 2
        let needsPruning = table.write { table -> Bool in
            table[key] = extras.sameSite == nil && extras.created == nil ? nil : extras
            return table.count > bound
        }
        // Cookies deleted through Foundation leave their entries behind; past the bound, keep only live ones.
        guard needsPruning else { return }
        let live = Set(PendingCookieWrites.cookies(of: storage).map(CookieJar.key))
        let id = ObjectIdentifier(storage)
        table.write { table in
            table = table.filter { $0.key.storage != id || live.contains($0.key.cookie) }
        }
    }

    /// Forgets a deleted cookie.
    static func forget(_ cookie: HTTPCookie, in storage: HTTPCookieStorage) {
        let key = Key(storage: ObjectIdentifier(storage), cookie: CookieJar.key(of: cookie))
        table.write { table in table[key] = nil }
    }

    /// The extras recorded for stored cookies, in their order, under one lock.
    static func extras(of cookies: [HTTPCookie], in storage: HTTPCookieStorage) -> [Extras?] {
        let id = ObjectIdentifier(storage)
        let keys = cookies.map { Key(storage: id, cookie: CookieJar.key(of: $0)) }
        return table.read { table in keys.map { table[$0] } }
    }

    /// When a stored cookie was first created, by RFC 6265's reckoning.
    static func creationTimes(of cookies: [HTTPCookie], in storage: HTTPCookieStorage) -> [Double] {
        zip(cookies, extras(of: cookies, in: storage)).map { cookie, extras in
            extras?.created ?? CookieJar.foundationCreationTime(of: cookie)
        }
    }
}
