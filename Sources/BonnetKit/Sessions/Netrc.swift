import Foundation

/// The `.netrc` file, read as httpie (through requests) reads it: the credentials of a host when neither `--auth`,
/// a session nor the URL gives any, unless `--ignore-netrc`.
///
/// The file is `$NETRC`, else `~/.netrc`, else `~/_netrc`. Its entries are `machine NAME` (or `default`) followed by
/// `login`, `password` and `account` tokens; a token may be quoted (`"a b"`), `#` starts a comment, and a `macdef`
/// runs to the next empty line. A file that cannot be read or parsed gives no credentials, as for requests.
struct Netrc: Equatable {
    struct Entry: Equatable {
        var login = ""
        var account = ""
        var password = ""
    }

    /// Entries by machine name; `default` is the entry of `default`.
    private(set) var machines: [String: Entry] = [:]
    private(set) var fallback: Entry?

    /// The user name and password for `host`: its own entry, else the `default` one; the login, or the account when
    /// the login is empty (as requests takes them).
    func credentials(for host: String) -> (user: String, password: String)? {
        guard let entry = machines[host] ?? fallback else { return nil }
        return (entry.login.isEmpty ? entry.account : entry.login, entry.password)
    }

    /// The file `console` names (`$NETRC`, `~/.netrc`, `~/_netrc`), parsed; `nil` when there is none or it does not
    /// parse.
    static func file(in console: Console) -> Netrc? {
        let candidates: [URL] =
            if let named = console.environment["NETRC"] {
                [console.file(named)]
            } else {
                [".netrc", "_netrc"].map { console.homeDirectory.appendingPathComponent($0) }
            }
        // Read back as untrusted: a FIFO or a device named by `$NETRC` is not read, nor more than a netrc can hold.
        guard let url = candidates.first(where: { FileManager.default.fileExists(atPath: $0.path) }),
            let data = try? SettingsFile.read(url, limit: maximumLength),
            let text = String(data: data, encoding: .utf8)
        else { return nil }
        return Netrc(parsing: text)
    }

    /// The most a `.netrc` file is read of: larger, it gives no credentials.
    static let maximumLength = 1 << 20

    /// Parses `text`; `nil` when it is not a `.netrc` (a token out of place, an entry with no name).
    init?(parsing text: String) {
        var tokens = Tokens(text)
        var machines: [String: Entry] = [:]
        var fallback: Entry?
        var current: (name: String?, entry: Entry)?
        func finish() {
            guard let (name, entry) = current else { return }
            if let name { machines[name] = entry } else { fallback = entry }
            current = nil
        }
        while let token = tokens.next() {
            switch token {
            case "machine":
                finish()
                guard let name = tokens.next() else { return nil }
                current = (name, Entry())
            case "default":
                finish()
                current = (nil, Entry())
            case "macdef":
                finish()
                guard tokens.next() != nil else { return nil }
                tokens.skipMacro()
            case "login", "user", "account", "password":
                guard current != nil, let value = tokens.next() else { return nil }
                switch token {
                case "account": current?.entry.account = value
                case "password": current?.entry.password = value
                default: current?.entry.login = value
                }
            default:
                return nil
            }
        }
        finish()
        self.machines = machines
        self.fallback = fallback
    }

    /// The words of a `.netrc`: separated by white space, `"quoted"` with `\` escapes, a lone `#` starting a comment.
    private struct Tokens {
        private let characters: [Character]
        private var index = 0

        init(_ text: String) { characters = Array(text) }

        mutating func next() -> String? {
            while index < characters.count {
                let character = characters[index]
                if character.isWhitespace {
                    index += 1
                } else if character == "#", isLoneHash {
                    while index < characters.count, !characters[index].isNewline { index += 1 }
                } else {
                    break
                }
            }
            guard index < characters.count else { return nil }
            var word = ""
            if characters[index] == "\"" {
                index += 1
                while index < characters.count, characters[index] != "\"" {
                    if characters[index] == "\\", index + 1 < characters.count { index += 1 }
                    word.append(characters[index])
                    index += 1
                }
                index += 1
                return word
            }
            while index < characters.count, !characters[index].isWhitespace {
                if characters[index] == "\\", index + 1 < characters.count { index += 1 }
                word.append(characters[index])
                index += 1
            }
            return word
        }

        /// Whether the `#` at the index is a word of its own: a comment, not part of a password.
        private var isLoneHash: Bool {
            index + 1 >= characters.count || characters[index + 1].isWhitespace
                || (index == 0 || characters[index - 1].isNewline)
        }

        /// Skips a macro's body: the rest of its line and the lines up to the next empty one.
        mutating func skipMacro() {
            while index < characters.count, !characters[index].isNewline { index += 1 }
            index += 1
            while index < characters.count {
                var end = index
                while end < characters.count, !characters[end].isNewline { end += 1 }
                let line = characters[index..<end]
                index = end + 1
                if line.allSatisfy(\.isWhitespace) { return }
            }
        }
    }
}
