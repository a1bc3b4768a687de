import CZlib
import Foundation

/// httpie's rule for `-x`: a body is sent deflated only when deflating makes it smaller.
enum Deflated {
    /// Whether `data`, deflated (zlib's container, as the request compressor sends it), is shorter than `data`.
    static func isSmaller(_ data: Data) -> Bool {
        guard !data.isEmpty else { return false }
        var length = compressBound(uLong(data.count))
        var output = [Bytef](repeating: 0, count: Int(length))
        let status = data.withUnsafeBytes { input in
            compress2(
                &output, &length, input.bindMemory(to: Bytef.self).baseAddress, uLong(data.count),
                Z_DEFAULT_COMPRESSION)
        }
        return status == Z_OK && Int(length) < data.count
    }
}
