import Foundation

/// httpie's configuration file, `config.json`, for its `default_options`: words put before every request's own, as
/// httpie puts them (`{"default_options": ["--style=fruity", "--verify=no"]}`).
///
/// The folder is httpie's: `$HTTPIE_CONFIG_DIR`, else `~/.httpie` when it exists (httpie's old place), else
/// `$XDG_CONFIG_HOME/httpie`, else `~/.config/httpie`. No file is no default options; a file that cannot be read,
/// is not JSON or holds something else than a list of words under `default_options` stops bonnet with an error that
/// names the file, as the options it was meant to add may be what keeps the request safe.
enum HTTPieConfiguration {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// The folder httpie reads its configuration from, for `console`'s environment.
    static func directory(in console: Console) -> URL {
        if let named = console.environment["HTTPIE_CONFIG_DIR"], !named.isEmpty { return console.file(named) }
        let legacy = console.homeDirectory.appendingPathComponent(".httpie")
        var isFolder: ObjCBool = false
        if FileManager.default.fileExists(atPath: legacy.path, isDirectory: &isFolder), isFolder.boolValue {
            return legacy
        }
        if let xdg = console.environment["XDG_CONFIG_HOME"], !xdg.isEmpty {
            return console.file(xdg).appendingPathComponent("httpie")
        }
        return console.homeDirectory.appendingPathComponent(".config/httpie")
    }

    /// The most `config.json` is read of.
    static let maximumLength = 1 << 20

    /// The `default_options` of `config.json`; none when there is no such file.
    static func defaultOptions(in console: Console) throws -> [String] {
        let file = directory(in: console).appendingPathComponent("config.json")
        let read: Data?
        do {
            read = try SettingsFile.read(file, limit: maximumLength)
        } catch {
            throw Failure(description: "httpie's configuration file: \(error)")
        }
        guard let data = read else { return [] }
        if let (line, column) = JSONValidator.firstError(in: data) {
            throw Failure(
                description: "httpie's configuration file \(file.path) is not valid JSON (line \(line), column "
                    + "\(column)): fix it or move it away")
        }
        guard let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]),
            let members = object as? [String: Any]
        else {
            throw Failure(description: "httpie's configuration file \(file.path) is not a JSON object")
        }
        guard let options = members["default_options"], !(options is NSNull) else { return [] }
        guard let words = options as? [String] else {
            throw Failure(
                description: "\"default_options\" in \(file.path) is not a list of words, such as [\"--form\"]")
        }
        return words
    }
}
