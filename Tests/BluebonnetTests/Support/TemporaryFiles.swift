import Foundation
import XCTest

/// A scratch directory per test, removed afterwards.
final class TemporaryDirectory {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "bluebonnet-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// Writes `data` to `name` inside the directory.
    func file(_ name: String, contents data: Data) throws -> URL {
        let fileURL = url.appendingPathComponent(name)
        try data.write(to: fileURL)
        return fileURL
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}

/// Deterministic bytes that are not all alike, so a shifted or dropped chunk changes the checksum.
func patternedData(count: Int, seed: UInt8 = 7) -> Data {
    var bytes = [UInt8](repeating: 0, count: count)
    var value = seed
    for index in 0..<count {
        value = value &* 31 &+ UInt8(truncatingIfNeeded: index >> 8)
        bytes[index] = value
    }
    return Data(bytes)
}

/// The multipart temporary files Bluebonnet leaves behind, if any.
func multipartTemporaryFiles() -> [String] {
    let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("org.bluebonnet.session/multipart.form.data", isDirectory: true)
    return (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
}
