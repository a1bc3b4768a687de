import Bluebonnet
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `--session`: headers, `--auth` and cookies kept between runs in a JSON file, as httpie's sessions keep them.
///
/// A name is kept per host in `$BONNET_CONFIG_DIR` (else `$XDG_CONFIG_HOME/bonnet`, else `~/.config/bonnet`), under
/// `sessions/HOST_PORT/NAME.json`; a value with a `/` is the file's path. The file holds credentials, so it is
/// written readable by its owner only, and in one go (a temporary file renamed over the old one).
///
/// The file is always written in httpie's layout (3.x), so httpie can use a session bonnet made and the other way
/// round; httpie's cookie domains are translated both ways: a host without a dot is `HOST.local` in httpie's files
/// (Python's cookie jar's spelling), and a cookie with no domain (httpie 2's cookies by name, httpie 3's `""`, which
/// a `Cookie:` header given with `--session` becomes) belongs to the session's host, and is written back as it was.
struct SessionFile {
    /// Where the file is.
    let location: URL
    /// The host of the request the session is used for, lowercased: where a cookie without a domain belongs.
    let host: String
    /// Headers sent with every request of the session, unless the request sets its own.
    var headers: [String: String] = [:]
    /// `--auth` and `--auth-type` as given.
    var auth: StoredAuth?
    /// The cookies read: the library's cookie archive (a file an earlier bonnet wrote), or httpie's list.
    var cookies: Any?
    /// Whether `cookies` is httpie's list rather than the library's archive.
    private var cookiesInHTTPieLayout = true
    /// httpie's `__meta__`: the file's own when it has one, else the one bonnet writes.
    private var httpieMeta: [String: Any] = [
        "about": "HTTPie session file", "help": "https://httpie.io/docs#sessions", "httpie": "3.2.4",
    ]
    /// The cookies read without a domain (`name` and `path`): written back without one while they stay the host's.
    private var domainlessCookies: Set<[String]> = []

    /// `--auth` as kept in the file.
    struct StoredAuth: Equatable {
        var type: String
        var raw: String
    }

    /// Why a session could not be used.
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Headers that belong to one request, never to the session (httpie's rule).
    static func isRequestSpecific(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return lowered.hasPrefix("content-") || lowered.hasPrefix("if-") || lowered == "cookie"
            || lowered == "authorization"
    }

    /// Reads the session `nameOrPath` for `url`'s host; a missing file is an empty session.
    ///
    /// - Parameters:
    ///   - nameOrPath:  `--session`'s value.
    ///   - url:         The request's URL, whose host names the folder of a named session.
    ///   - console:     Where a relative path starts, and the environment that names the configuration folder.
    init(_ nameOrPath: String, for url: URL, in console: Console) throws {
        location = try Self.location(of: nameOrPath, for: url, in: console)
        host = (url.host ?? "localhost").lowercased()
        guard let handle = FileHandle(forReadingAtPath: location.path) else { return }
        defer { try? handle.close() }
        // Read back like a server's answer: a session is headers, credentials and at most the jar's 3,000 cookies.
        let data = try handle.read(upToCount: Self.maximumLength + 1) ?? Data()
        guard data.count <= Self.maximumLength else {
            throw Failure(description: "--session: \(location.path) is larger than a session file can be (16 MiB)")
        }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw Failure(description: "--session: \(location.path) is not a session file (a JSON object)")
        }
        if let meta = object["__meta__"] as? [String: Any] {
            httpieMeta = meta
            try readHTTPie(object)
            return
        }
        // The layout of bonnet before it wrote httpie's: read once, then saved in httpie's.
        headers = object["headers"] as? [String: String] ?? [:]
        if let auth = object["auth"] as? [String: String], let type = auth["type"], let raw = auth["raw"] {
            self.auth = StoredAuth(type: type, raw: raw)
        }
        cookies = object["cookies"]
        cookiesInHTTPieLayout = false
    }

    /// httpie's layout: `headers` as a list of `name`/`value` pairs (a dictionary before httpie 3), `auth` with
    /// `type` and `raw_auth` (or `username` and `password`), `cookies` as a list of `name`, `value`, `domain`, `path`,
    /// `secure` and `expires` (seconds since 1970, or `null` for a session cookie; a dictionary by name before 3.1).
    private mutating func readHTTPie(_ object: [String: Any]) throws {
        if let list = object["headers"] as? [[String: Any]] {
            for field in list {
                guard let name = field["name"] as? String, let value = field["value"] as? String else { continue }
                headers[name] = headers[name].map { "\($0), \(value)" } ?? value
            }
        } else if let dictionary = object["headers"] as? [String: Any] {
            headers = dictionary.compactMapValues { $0 as? String }
        }
        if let auth = object["auth"] as? [String: Any], let type = auth["type"] as? String {
            if let raw = auth["raw_auth"] as? String {
                self.auth = StoredAuth(type: type, raw: raw)
            } else if let user = auth["username"] as? String {
                self.auth = StoredAuth(type: type, raw: "\(user):\(auth["password"] as? String ?? "")")
            }
        }
        var list: [[String: Any]] = object["cookies"] as? [[String: Any]] ?? []
        if let byName = object["cookies"] as? [String: [String: Any]] {
            list = byName.map { name, cookie in cookie.merging(["name": name]) { $1 } }
        }
        for (index, entry) in list.enumerated() {
            let domain = (entry["domain"] as? String) ?? ""
            if domain.isEmpty {
                list[index]["domain"] = host
                if let name = entry["name"] as? String {
                    domainlessCookies.insert([name, entry["path"] as? String ?? "/"])
                }
            } else {
                list[index]["domain"] = Self.domain(fromHTTPie: domain)
            }
        }
        cookies = list
    }

    /// The `name=value` pairs of a `Cookie` header.
    static func cookiePairs(_ header: String) -> [(name: String, value: String)] {
        header.split(separator: ";").compactMap { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = parts[0].trimmingCharacters(in: .whitespaces)
            guard !name.isEmpty else { return nil }
            return (name, parts.count > 1 ? parts[1].trimmingCharacters(in: .whitespaces) : "")
        }
    }

    /// Python's cookie jar keeps a host without a dot (`localhost`) as `localhost.local`.
    static func domain(fromHTTPie domain: String) -> String {
        let bare = domain.hasPrefix(".") ? domain.dropFirst() : Substring(domain)
        guard bare.lowercased().hasSuffix(".local") else { return domain }
        let host = bare.dropLast(".local".count)
        return host.isEmpty || host.contains(".") ? domain : String(host)
    }

    /// A domain as httpie's cookie jar spells it: `HOST.local` for a host without a dot (an IPv6 literal aside).
    static func httpieDomain(of domain: String) -> String {
        let bare = domain.hasPrefix(".") ? domain.dropFirst() : Substring(domain)
        return bare.isEmpty || bare.contains(".") || bare.contains(":") ? domain : domain + ".local"
    }

    /// The largest session file read.
    static let maximumLength = 16 << 20

    /// An httpie cookie as an entry of the library's cookie archive (so it is loaded as every stored cookie is: the
    /// expired skipped, each one checked, the jar's limits kept); `nil` for one without a name, a value or a domain,
    /// or whose expiry is not a date.
    private static func archiveEntry(fromHTTPie entry: [String: Any]) -> [String: Any]? {
        guard let name = entry["name"] as? String, let value = entry["value"] as? String,
            let domain = entry["domain"] as? String, !domain.isEmpty
        else { return nil }
        var archived: [String: Any] = [
            "name": name, "value": value, "domain": domain, "path": entry["path"] as? String ?? "/",
            "secure": entry["secure"] as? Bool ?? false, "httpOnly": false,
        ]
        if let expires = (entry["expires"] as? Double) ?? (entry["expires"] as? Int).map(Double.init) {
            // Up to the end of year 9999, what an ISO 8601 date holds.
            guard (0...253_402_300_799).contains(expires) else { return nil }
            archived["expires"] = ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: expires))
        }
        return archived
    }

    /// A cookie as httpie keeps it.
    private func httpieEntry(of cookie: HTTPCookie) -> [String: Any] {
        let domainless =
            cookie.domain.lowercased() == host && domainlessCookies.contains([cookie.name, cookie.path])
        return [
            "name": cookie.name, "value": cookie.value,
            "domain": domainless ? "" : Self.httpieDomain(of: cookie.domain), "path": cookie.path,
            "secure": cookie.isSecure,
            "expires": cookie.expiresDate.map { $0.timeIntervalSince1970.rounded() } as Any? ?? NSNull(),
        ]
    }

    /// Where a session lives.
    static func location(of nameOrPath: String, for url: URL, in console: Console) throws -> URL {
        if nameOrPath.contains("/") { return console.file(nameOrPath) }
        let environment = console.environment
        guard !nameOrPath.isEmpty,
            nameOrPath.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "_-.".contains($0)) }),
            nameOrPath != ".", nameOrPath != ".."
        else {
            throw Failure(
                description: "--session: a name is letters, digits, '_', '-' and '.'; give a path with a '/' for a file"
            )
        }
        let base: URL
        if let directory = environment["BONNET_CONFIG_DIR"], !directory.isEmpty {
            base = URL(fileURLWithPath: directory)
        } else if let xdg = environment["XDG_CONFIG_HOME"], !xdg.isEmpty {
            base = URL(fileURLWithPath: xdg).appendingPathComponent("bonnet")
        } else {
            base = console.homeDirectory.appendingPathComponent(".config/bonnet")
        }
        let host = (url.host ?? "localhost").replacingOccurrences(of: ":", with: "_")
        let folder = url.port.map { "\(host)_\($0)" } ?? host
        return base.appendingPathComponent("sessions").appendingPathComponent(folder).appendingPathComponent(
            nameOrPath + ".json")
    }

    /// Loads the stored cookies into `storage`.
    func loadCookies(into storage: HTTPCookieStorage) throws {
        guard let cookies else { return }
        do {
            let archive =
                cookiesInHTTPieLayout
                ? ["cookies": (cookies as? [[String: Any]] ?? []).compactMap(Self.archiveEntry(fromHTTPie:))] : cookies
            try storage.af.importCookies(from: JSONSerialization.data(withJSONObject: archive))
        } catch {
            throw Failure(description: "--session: the cookies in \(location.path) cannot be read: \(error)")
        }
    }

    /// Keeps what this run adds: its session-wide headers, its auth and every cookie (session cookies included), the
    /// cookies of a `Cookie:` item among them, without a domain, as httpie keeps them.
    mutating func update(
        headers sent: HTTPHeaders, auth: StoredAuth?, cookies storage: HTTPCookieStorage, typedCookies: String? = nil
    ) throws {
        for header in sent where !Self.isRequestSpecific(header.name) {
            headers = headers.filter { $0.key.caseInsensitiveCompare(header.name) != .orderedSame }
            headers[header.name] = header.value
        }
        if let auth { self.auth = auth }
        for (name, value) in Self.cookiePairs(typedCookies ?? "") {
            guard
                let cookie = HTTPCookie(properties: [.name: name, .value: value, .domain: host, .path: "/"])
            else { continue }
            storage.setCookie(cookie)
            domainlessCookies.insert([name, "/"])
        }
        cookies = (storage.cookies ?? []).sorted { ($0.domain, $0.path, $0.name) < ($1.domain, $1.path, $1.name) }
            .map(httpieEntry)
        cookiesInHTTPieLayout = true
    }

    /// Writes the file: owner-only, in one rename.
    func save() throws {
        let object: [String: Any] = [
            "__meta__": httpieMeta,
            "headers": headers.sorted { $0.key < $1.key }.map { ["name": $0.key, "value": $0.value] },
            "cookies": cookiesInHTTPieLayout ? cookies ?? [[String: Any]]() : [[String: Any]](),
            "auth": auth.map { ["type": $0.type, "raw_auth": $0.raw] as [String: Any] }
                ?? ["type": NSNull(), "raw_auth": NSNull()],
        ]
        let data = try JSONSerialization.data(
            withJSONObject: object, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        let folder = location.deletingLastPathComponent()
        try FileManager.default.createDirectory(
            at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = folder.appendingPathComponent(".\(location.lastPathComponent).\(UUID().uuidString)")
        guard
            FileManager.default.createFile(
                atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600])
        else {
            throw Failure(description: "--session: cannot write \(temporary.path)")
        }
        if rename(temporary.path, location.path) != 0 {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw Failure(description: "--session: cannot replace \(location.path): \(reason)")
        }
    }
}
