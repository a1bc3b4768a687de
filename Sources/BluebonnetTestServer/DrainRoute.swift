import CZlib
import Foundation
import Hummingbird

/// `/drain`: reads a request body of any size as it arrives, keeping only its length and CRC-32, and reports both
/// as JSON (`{"bytes": n, "crc32": c, "method": m}`). Upload tests and the upload benchmark send gigabytes here.
public enum DrainRoute {
    /// The route's path.
    public static let path = "/drain"

    static func respond(to request: Request) async throws -> Response {
        var count = 0
        var crc = crc32(0, nil, 0)
        for try await buffer in request.body {
            count += buffer.readableBytes
            crc = buffer.withUnsafeReadableBytes { bytes in
                crc32(crc, bytes.baseAddress?.assumingMemoryBound(to: Bytef.self), uInt(bytes.count))
            }
        }
        return HTTPBinResponses.json(["bytes": count, "crc32": Int(crc), "method": request.method.rawValue])
    }

    /// The CRC-32 of `data` as `/drain` reports it, for tests to compare with.
    ///
    /// - Parameter data: The bytes that were uploaded.
    /// - Returns: Their CRC-32.
    public static func checksum(_ data: Data) -> Int {
        Int(
            data.withUnsafeBytes { bytes in
                crc32(0, bytes.baseAddress?.assumingMemoryBound(to: Bytef.self), uInt(bytes.count))
            })
    }
}
