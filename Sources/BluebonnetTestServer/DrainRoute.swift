import CZlib
import Foundation
import Hummingbird

/// `/drain`: reads a request body of any size as it arrives, keeping only its length and CRC-32, and reports both
/// as JSON (`{"bytes": n, "crc32": c, "method": m}`). Upload tests and the upload benchmark send gigabytes here.
///
/// A body with `Content-Encoding: deflate` or `gzip` is decoded as it arrives: `bytes` and `crc32` are then the
/// decoded body's, and the answer adds `encodedBytes`, `contentEncoding` and `contentLength` (the header as sent,
/// or `null` for a chunked body). A body that does not decode, or another coding, is refused with 415.
public enum DrainRoute {
    /// The route's path.
    public static let path = "/drain"

    static func respond(to request: Request) async throws -> Response {
        var count = 0
        var encodedCount = 0
        var crc = crc32(0, nil, 0)
        let coding = request.headers[.contentEncoding]?.lowercased()
        let inflater: Zlib.Inflater?
        switch coding {
        case nil, "identity": inflater = nil
        case "deflate": inflater = Zlib.Inflater(format: .zlib)
        case "gzip": inflater = Zlib.Inflater(format: .gzip)
        default: return HTTPBinResponses.text("unsupported Content-Encoding", status: .unsupportedMediaType)
        }
        for try await buffer in request.body {
            encodedCount += buffer.readableBytes
            let received = Data(buffer.readableBytesView)
            guard let decoded = inflater.map({ $0.inflate(received) }) ?? received else {
                return HTTPBinResponses.text(
                    "the body does not decode as \(coding ?? "")", status: .unsupportedMediaType)
            }
            count += decoded.count
            crc = decoded.withUnsafeBytes { bytes in
                crc32(crc, bytes.baseAddress?.assumingMemoryBound(to: Bytef.self), uInt(bytes.count))
            }
        }
        var answer: [String: Any] = ["bytes": count, "crc32": Int(crc), "method": request.method.rawValue]
        if let inflater, let coding {
            guard inflater.ended else {
                return HTTPBinResponses.text("the body ends before its \(coding) stream", status: .unsupportedMediaType)
            }
            answer["encodedBytes"] = encodedCount
            answer["contentEncoding"] = coding
            answer["contentLength"] = request.headers[.contentLength].map { $0 as Any } ?? NSNull()
        }
        return HTTPBinResponses.json(answer)
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
