import CZlib
import Foundation
import NIOCore

/// RFC 7692's `permessage-deflate` for one socket: messages the server compressed are inflated within the message
/// size limit (a compression bomb stops at the limit, not in memory), and the client's own are compressed, each on
/// its own (the client keeps no context between messages, which the extension always allows).
///
/// The client offers the extension without parameters, so the server may not limit the client's window; whatever it
/// answers about its own compression (`server_no_context_takeover`, `server_max_window_bits`) is decoded by a
/// 32 KiB window, which reads any smaller one.
final class PerMessageDeflate {
    /// What the upgrade request offers.
    static let offer = "permessage-deflate"

    /// Why the server's answer cannot be accepted.
    struct NegotiationError: Error {
        let description: String
    }

    /// The tail a sender strips from each message and a receiver puts back (RFC 7692 §7.2.1).
    private static let tail: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]

    // At fixed addresses: zlib keeps pointers back to its streams and refuses one that moved.
    private let inflater: UnsafeMutablePointer<z_stream>
    private let deflater: UnsafeMutablePointer<z_stream>

    /// Whether the server's answer (its `Sec-WebSocket-Extensions` values) accepts the offer: `false` when it
    /// named none. An extension that was not offered, or a parameter this offer does not allow, fails the socket.
    static func accepts(_ values: [String]) throws -> Bool {
        let extensions = values.flatMap { $0.split(separator: ",") }.map { $0.trimmingCharacters(in: .whitespaces) }
        guard !extensions.isEmpty else { return false }
        guard extensions.count == 1 else {
            throw NegotiationError(description: "The server accepted \(extensions.count) extensions; one was offered")
        }
        let parts = extensions[0].split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard parts.first?.lowercased() == "permessage-deflate" else {
            throw NegotiationError(description: "The server named the extension \(parts.first ?? ""), not offered")
        }
        var seen = Set<String>()
        for parameter in parts.dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map {
                $0.trimmingCharacters(in: CharacterSet(charactersIn: " \""))
            }
            guard let name = pair.first?.lowercased(), !name.isEmpty else {
                throw NegotiationError(description: "The server's answer has an empty parameter")
            }
            guard seen.insert(name).inserted else {
                throw NegotiationError(description: "The server repeated the parameter \(name)")
            }
            switch name {
            case "server_no_context_takeover", "client_no_context_takeover":
                guard pair.count == 1 else { throw NegotiationError(description: "\(name) takes no value") }
            case "server_max_window_bits":
                guard pair.count == 2, let bits = Int(pair[1]), (8...15).contains(bits) else {
                    throw NegotiationError(description: "server_max_window_bits must be 8 to 15")
                }
            default:
                // `client_max_window_bits` included: the offer did not name it, so the server may not ask for it.
                throw NegotiationError(description: "The server answered with the parameter \(name), not offered")
            }
        }
        return true
    }

    init() throws {
        inflater = .allocate(capacity: 1)
        inflater.initialize(to: z_stream())
        deflater = .allocate(capacity: 1)
        deflater.initialize(to: z_stream())
        let inflated = inflateInit2_(inflater, -15, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
        let deflated = deflateInit2_(
            deflater, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
            Int32(MemoryLayout<z_stream>.size))
        guard inflated == Z_OK, deflated == Z_OK else {
            if inflated == Z_OK { inflateEnd(inflater) }
            if deflated == Z_OK { deflateEnd(deflater) }
            Self.release(inflater)
            Self.release(deflater)
            throw NegotiationError(description: "zlib could not start (status \(inflated), \(deflated))")
        }
    }

    deinit {
        inflateEnd(inflater)
        deflateEnd(deflater)
        Self.release(inflater)
        Self.release(deflater)
    }

    private static func release(_ stream: UnsafeMutablePointer<z_stream>) {
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// What went wrong inflating a message.
    enum InflateError: Error {
        /// The message inflated past the limit.
        case tooLarge
        /// The bytes are not deflate data.
        case corrupt
    }

    /// A compressed message's payload, inflated; at most `limit` bytes of it.
    func inflate(_ payload: ByteBuffer, limit: Int) throws(InflateError) -> ByteBuffer {
        var input = payload
        input.writeBytes(Self.tail)
        var output = ByteBuffer()
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        var status = Z_OK
        try input.withUnsafeReadableBytes { (raw: UnsafeRawBufferPointer) throws(InflateError) in
            inflater.pointee.next_in = UnsafeMutablePointer(mutating: raw.bindMemory(to: Bytef.self).baseAddress)
            inflater.pointee.avail_in = uInt(raw.count)
            defer { inflater.pointee.next_in = nil }
            repeat {
                let produced = chunk.withUnsafeMutableBytes { out -> Int in
                    inflater.pointee.next_out = out.bindMemory(to: Bytef.self).baseAddress
                    inflater.pointee.avail_out = uInt(out.count)
                    status = CZlib.inflate(inflater, Z_SYNC_FLUSH)
                    inflater.pointee.next_out = nil
                    return out.count - Int(inflater.pointee.avail_out)
                }
                guard status == Z_OK || status == Z_STREAM_END || status == Z_BUF_ERROR else { throw .corrupt }
                // No progress is possible: the input is spent (or cut short, which the next message's bytes do not
                // mend: the message is corrupt only if zlib later says so).
                if status == Z_BUF_ERROR && produced == 0 { break }
                guard output.readableBytes + produced <= limit else { throw .tooLarge }
                output.writeBytes(chunk[..<produced])
                // A sender may end a message with a final block (RFC 7692 §7.2.3.4): the next starts a new stream.
                if status == Z_STREAM_END {
                    inflateReset(inflater)
                    break
                }
            } while inflater.pointee.avail_in > 0 || inflater.pointee.avail_out == 0
        }
        return output
    }

    /// A message's payload, compressed on its own (sync flush, the tail stripped).
    func deflate(_ payload: ByteBuffer) -> ByteBuffer? {
        var output = ByteBuffer()
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        var failed = false
        payload.withUnsafeReadableBytes { raw in
            deflater.pointee.next_in = UnsafeMutablePointer(mutating: raw.bindMemory(to: Bytef.self).baseAddress)
            deflater.pointee.avail_in = uInt(raw.count)
            defer { deflater.pointee.next_in = nil }
            repeat {
                let produced = chunk.withUnsafeMutableBytes { out -> Int in
                    deflater.pointee.next_out = out.bindMemory(to: Bytef.self).baseAddress
                    deflater.pointee.avail_out = uInt(out.count)
                    let status = CZlib.deflate(deflater, Z_SYNC_FLUSH)
                    if status != Z_OK && status != Z_BUF_ERROR { failed = true }
                    deflater.pointee.next_out = nil
                    return out.count - Int(deflater.pointee.avail_out)
                }
                output.writeBytes(chunk[..<produced])
                if produced == 0 && deflater.pointee.avail_in == 0 { break }
            } while !failed && (deflater.pointee.avail_in > 0 || deflater.pointee.avail_out == 0)
        }
        deflateReset(deflater)
        guard !failed, output.readableBytes >= 4 else { return nil }
        output.moveWriterIndex(to: output.writerIndex - 4)
        return output
    }
}
