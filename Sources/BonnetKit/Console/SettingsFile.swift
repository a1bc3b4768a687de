import Foundation

/// A small file of the user's settings (`.netrc`, httpie's `config.json`), read back as untrusted input: only a
/// regular file (a FIFO would block the command and a device never ends), and at most `limit` bytes.
enum SettingsFile {
    /// What is wrong with a settings file that exists.
    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    /// The file's bytes; `nil` when there is no file at `url`.
    ///
    /// - Parameters:
    ///   - url:   The file.
    ///   - limit: The most bytes such a file can hold.
    /// - Returns: The bytes, or `nil`.
    /// - Throws: `Refusal` for a file that is not a regular file, cannot be read, or is larger than `limit`.
    static func read(_ url: URL, limit: Int) throws -> Data? {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path) else { return nil }
        guard attributes[.type] as? FileAttributeType == .typeRegular else {
            throw Refusal(description: "\(url.path) is not a regular file")
        }
        guard let handle = FileHandle(forReadingAtPath: url.path) else {
            throw Refusal(description: "cannot read \(url.path)")
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: limit + 1)) ?? Data()
        guard data.count <= limit else {
            throw Refusal(description: "\(url.path) is larger than such a file can be (\(limit >> 10) KiB)")
        }
        return data
    }
}
