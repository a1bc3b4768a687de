import Foundation

/// Hides the command's secrets in what it says of an error: a URL that is not valid is quoted with its password,
/// and `--traceback` and `--debug` print the error in full, for a bug report that is meant to be shared.
///
/// Two nets: any `scheme://user:password@` in the text loses its password, and any `Authorization`,
/// `Proxy-Authorization` or `Cookie` field quoted in it loses its value; then every secret the command was given
/// (a URL's or a proxy's password, `--auth`, `--cert-key-pass`, the value of a credential header item, and the Basic
/// token made from them) is replaced wherever it appears. A secret shorter than three characters is left to the
/// first net: hiding every `a` of a traceback would hide the traceback.
struct SecretRedaction: Sendable {
    static let hidden = "(hidden)"
    /// The secrets, longest first, so that one inside another is not left half shown.
    let secrets: [String]

    init(secrets: some Sequence<String>) {
        self.secrets = Set(secrets.filter { $0.count >= 3 }).sorted {
            $0.count > $1.count || ($0.count == $1.count && $0 < $1)
        }
    }

    /// The secrets a request command was given: in its words (URLs and header items), `--auth`, `--proxy`, the
    /// proxy variables of the environment and `--cert-key-pass`.
    init(words: [String], auth: String?, proxies: [String], certKeyPass: String?, environment: [String: String]) {
        var found: [String] = []
        func credentials(user: String, password: String) {
            found += [password, password.removingPercentEncoding ?? password]
            found.append(Data("\(user):\(password)".utf8).base64EncodedString())
            if let decoded = password.removingPercentEncoding, let name = user.removingPercentEncoding {
                found.append(Data("\(name):\(decoded)".utf8).base64EncodedString())
            }
        }
        let variables = ["http_proxy", "https_proxy", "all_proxy"].flatMap { [$0, $0.uppercased()] }
        for text in words + proxies + variables.compactMap({ environment[$0] }) {
            if let (user, password) = Self.userInfo(in: text) { credentials(user: user, password: password) }
        }
        for word in words {
            guard let colon = word.firstIndex(of: ":") else { continue }
            let name = word[..<colon].lowercased()
            guard ["authorization", "proxy-authorization", "cookie"].contains(name) else { continue }
            let value = word[word.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            found.append(value)
            // The token after the scheme (`Bearer TOKEN`), and each cookie's value.
            found += value.split(separator: " ").dropFirst().map(String.init)
            found += value.split(separator: ";").compactMap {
                $0.split(separator: "=", maxSplits: 1).last.map(String.init)
            }
        }
        if let auth {
            if let colon = auth.firstIndex(of: ":") {
                credentials(user: String(auth[..<colon]), password: String(auth[auth.index(after: colon)...]))
            } else {
                found.append(auth)  // a bearer token
            }
        }
        if let certKeyPass { found.append(certKeyPass) }
        self.init(secrets: found)
    }

    /// `text` with every secret hidden.
    func apply(to text: String) -> String {
        var result = text
        for (pattern, template) in Self.patterns {
            result = pattern.stringByReplacingMatches(
                in: result, range: NSRange(result.startIndex..., in: result), withTemplate: template)
        }
        for secret in secrets where result.contains(secret) {
            result = result.replacingOccurrences(of: secret, with: Self.hidden)
        }
        return result
    }

    /// The user and password of a `scheme://user:password@host` in `text`, if it has one.
    private static func userInfo(in text: String) -> (String, String)? {
        guard let scheme = text.range(of: "://") else { return nil }
        let rest = text[scheme.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard let at = authority.lastIndex(of: "@") else { return nil }
        let userInfo = authority[..<at]
        guard let colon = userInfo.firstIndex(of: ":") else { return nil }
        return (String(userInfo[..<colon]), String(userInfo[userInfo.index(after: colon)...]))
    }

    /// The nets, with what each match becomes.
    private static let patterns: [(NSRegularExpression, String)] = {
        let fields = "(authorization|proxy-authorization|cookie)"
        let sources: [(String, String)] = [
            // scheme://user:password@ (a password may hold anything but the authority's end and white space).
            (#"([A-Za-z][A-Za-z0-9+.\-]*://[^/?#@\s:"]*):[^/?#\s"]*@"#, "$1:\(hidden)@"),
            // "Authorization": "…" as a dictionary prints it.
            (#"(?i)("\#(fields)"\s*:\s*)"[^"]*""#, "$1\"\(hidden)\""),
            // key: "Authorization" then value: "…", as `dump` prints a dictionary's pair.
            (#"(?i)(key: "\#(fields)"\n\s*- value: )"[^"]*""#, "$1\"\(hidden)\""),
            // Authorization: … on a line of its own, as a request head prints.
            (#"(?im)^(\s*\#(fields):)[^\n]*$"#, "$1 \(hidden)"),
        ]
        // Constants, each checked by a test: none is dropped.
        return sources.compactMap { source in (try? NSRegularExpression(pattern: source.0)).map { ($0, source.1) } }
    }()
}
