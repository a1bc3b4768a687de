import CZlib

/// `gzip` and `deflate` (RFC 1952's and RFC 1950's containers, told apart by their first bytes, as zlib does with
/// window bits 15 + 32) decoded by the system's zlib, as the body arrives.
struct ZlibInflater: StreamingContentDecoder {
    /// The zlib stream, at a fixed address: zlib keeps a pointer back to it and refuses a stream that moved.
    private final class Stream {
        let pointer: UnsafeMutablePointer<z_stream>
        let coding: String
        var ended = false

        init(coding: String) throws {
            self.coding = coding
            pointer = .allocate(capacity: 1)
            pointer.initialize(to: z_stream())
            let status = inflateInit2_(pointer, 15 + 32, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size))
            guard status == Z_OK else {
                pointer.deinitialize(count: 1)
                pointer.deallocate()
                throw ContentDecodingError.malformed(coding: coding, detail: "zlib could not start (status \(status))")
            }
        }

        deinit {
            inflateEnd(pointer)
            pointer.deinitialize(count: 1)
            pointer.deallocate()
        }
    }

    /// Decoded bytes handed over at a time.
    static let outputChunkSize = 64 * 1024

    private let stream: Stream
    private let output: UnsafeMutableRawBufferPointer

    /// - Parameter coding: The coding's name (`gzip` or `deflate`), for errors.
    init(coding: String) throws {
        stream = try Stream(coding: coding)
        output = .allocate(byteCount: Self.outputChunkSize, alignment: 1)
        outputOwner = OutputOwner(buffer: output)
    }

    /// Frees the output buffer with the last copy of the decoder.
    private final class OutputOwner {
        let buffer: UnsafeMutableRawBufferPointer
        init(buffer: UnsafeMutableRawBufferPointer) { self.buffer = buffer }
        deinit { buffer.deallocate() }
    }

    private let outputOwner: OutputOwner

    mutating func decode(_ input: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) throws -> Void) throws {
        guard !input.isEmpty else { return }
        let z = stream.pointer
        if stream.ended { throw ContentDecodingError.trailingData(coding: stream.coding) }
        z.pointee.next_in = UnsafeMutablePointer(mutating: input.bindMemory(to: Bytef.self).baseAddress)
        z.pointee.avail_in = uInt(input.count)
        defer { z.pointee.next_in = nil }
        while true {
            z.pointee.next_out = self.output.baseAddress?.assumingMemoryBound(to: Bytef.self)
            z.pointee.avail_out = uInt(self.output.count)
            let status = inflate(z, Z_NO_FLUSH)
            let produced = self.output.count - Int(z.pointee.avail_out)
            z.pointee.next_out = nil
            switch status {
            case Z_OK, Z_BUF_ERROR:
                break
            case Z_STREAM_END:
                stream.ended = true
            case Z_NEED_DICT:
                throw ContentDecodingError.malformed(
                    coding: stream.coding, detail: "the stream needs a preset dictionary")
            default:
                let message = z.pointee.msg.map { String(cString: $0) } ?? "status \(status)"
                throw ContentDecodingError.malformed(coding: stream.coding, detail: message)
            }
            if produced > 0 { try output(UnsafeRawBufferPointer(rebasing: self.output[..<produced])) }
            if stream.ended {
                if z.pointee.avail_in > 0 { throw ContentDecodingError.trailingData(coding: stream.coding) }
                return
            }
            // zlib stops when it has no input left or no room: room was made, so no input means done for now.
            if z.pointee.avail_in == 0 && produced < self.output.count { return }
            if status == Z_BUF_ERROR && produced == 0 { return }
        }
    }

    func finish() throws {
        if !stream.ended { throw ContentDecodingError.truncated(coding: stream.coding) }
    }
}
