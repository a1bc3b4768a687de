/// A streaming Zstandard decoder (RFC 8878) for the `zstd` content coding.
///
/// The body is read as a series of units whose sizes the format announces: a frame's magic number and header, each
/// block's 3-byte header and then its body (at most Block_Maximum_Size, 128 KiB), the checksum. A unit that arrives
/// whole within one `decode` call is decoded straight from the caller's bytes; one cut across calls is gathered in
/// `pending` first, so each input byte is copied at most once (`bytesBuffered` counts them). Each decoded block is
/// handed to `output` as one chunk.
///
/// Memory is the frame's window (the history matches copy from, grown as the frame produces bytes, never past
/// Window_Size, which is checked against `maximumWindowSize` before anything is allocated) plus a few buffers of one
/// block each. Several concatenated frames are decoded in turn; skippable frames are skipped without being buffered;
/// frames that need a dictionary are refused.
struct ZstdDecoder: StreamingContentDecoder {
    /// The largest Window_Size (or, for single-segment frames, Frame_Content_Size) accepted.
    let maximumWindowSize: Int
    private var phase = Phase.magic
    private var pending: [UInt8] = []
    private var blocks = ZstdBlockDecoder()
    private var frame = Frame()
    private var framesDecoded = 0
    private var failure: (any Error)?
    /// How many input bytes were copied into the buffer of units cut across calls.
    private(set) var bytesBuffered = 0

    private static let frameMagic: UInt32 = 0xFD2F_B528

    private enum Phase: Equatable {
        case magic
        case skippableSize
        case skipping(remaining: Int)
        case frameDescriptor
        case frameHeader(descriptor: UInt8, size: Int)
        case blockHeader
        case blockBody(size: Int, type: UInt8, last: Bool, regenerated: Int)
        case checksum
    }

    /// What is known of the frame being decoded.
    private struct Frame {
        var contentSize: UInt64?
        var produced: UInt64 = 0
        var checksum: XXHash64?
    }

    init(maximumWindowSize: Int = 8 << 20) {
        self.maximumWindowSize = maximumWindowSize
    }

    mutating func decode(
        _ input: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        if let failure { throw failure }
        do {
            try run(input, output: output)
        } catch {
            failure = error
            throw error
        }
    }

    func finish() throws {
        if let failure { throw failure }
        guard phase == .magic, pending.isEmpty, framesDecoded > 0 else {
            throw ContentDecodingError.truncated(coding: "zstd")
        }
    }

    private var unitSize: Int {
        switch phase {
        case .magic, .skippableSize, .checksum: 4
        case .skipping: 0
        case .frameDescriptor: 1
        case let .frameHeader(_, size): size
        case .blockHeader: 3
        case let .blockBody(size, _, _, _): size
        }
    }

    private mutating func run(_ input: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) throws -> Void) throws {
        var rest = input
        while true {
            if case let .skipping(remaining) = phase {
                let skipped = min(remaining, rest.count)
                rest = UnsafeRawBufferPointer(rebasing: rest[skipped...])
                if remaining > skipped {
                    phase = .skipping(remaining: remaining - skipped)
                    return
                }
                framesDecoded += 1
                phase = .magic
                continue
            }
            if phase == .magic { try checkMagicPrefix(rest) }
            let size = unitSize
            if pending.isEmpty && rest.count >= size {
                let unit = UnsafeRawBufferPointer(rebasing: rest[0..<size])
                rest = UnsafeRawBufferPointer(rebasing: rest[size...])
                try consume(unit, output: output)
                continue
            }
            let wanted = size - pending.count
            let taken = min(wanted, rest.count)
            if taken > 0 {
                if pending.isEmpty { pending.reserveCapacity(size) }
                pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: rest[0..<taken]))
                bytesBuffered += taken
                rest = UnsafeRawBufferPointer(rebasing: rest[taken...])
            }
            guard pending.count == size else { return }
            var unit = pending
            pending = []
            try unit.withUnsafeBytes { try consume($0, output: output) }
            unit.removeAll(keepingCapacity: true)
            pending = unit
        }
    }

    /// Refuses, as soon as a byte shows it, what cannot begin a frame: after a frame that is trailing data.
    private func checkMagicPrefix(_ rest: UnsafeRawBufferPointer) throws {
        let zstd: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD]
        let skippable: [UInt8] = [0x50, 0x2A, 0x4D, 0x18]
        var isZstd = true
        var isSkippable = true
        let known = min(4, pending.count + rest.count)
        for index in 0..<known {
            let byte = index < pending.count ? pending[index] : rest[index - pending.count]
            if byte != zstd[index] { isZstd = false }
            if index == 0 ? byte & 0xF0 != skippable[0] : byte != skippable[index] { isSkippable = false }
        }
        guard isZstd || isSkippable else {
            if framesDecoded > 0 { throw ContentDecodingError.trailingData(coding: "zstd") }
            throw zstdMalformed("the body does not start with a Zstandard frame's magic number")
        }
    }

    private mutating func consume(
        _ unit: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        switch phase {
        case .magic:
            let magic = Self.littleEndian(unit, 0, 4)
            if magic == UInt64(Self.frameMagic) {
                phase = .frameDescriptor
            } else if magic & 0xFFFF_FFF0 == 0x184D_2A50 {
                phase = .skippableSize
            } else if framesDecoded > 0 {
                throw ContentDecodingError.trailingData(coding: "zstd")
            } else {
                throw zstdMalformed("the body does not start with a Zstandard frame's magic number")
            }
        case .skippableSize:
            phase = .skipping(remaining: Int(Self.littleEndian(unit, 0, 4)))
        case .frameDescriptor:
            let descriptor = unit[0]
            guard descriptor & 0x08 == 0 else { throw zstdMalformed("the frame header's reserved bit is set") }
            let singleSegment = descriptor & 0x20 != 0
            let contentSizeBytes = [singleSegment ? 1 : 0, 2, 4, 8][Int(descriptor >> 6)]
            let dictionaryBytes = [0, 1, 2, 4][Int(descriptor & 3)]
            phase = .frameHeader(
                descriptor: descriptor, size: (singleSegment ? 0 : 1) + dictionaryBytes + contentSizeBytes)
        case let .frameHeader(descriptor, _):
            try startFrame(descriptor: descriptor, header: unit)
        case .blockHeader:
            let header = Int(Self.littleEndian(unit, 0, 3))
            let last = header & 1 == 1
            let type = UInt8((header >> 1) & 3)
            let size = header >> 3
            let maximum = blocks.blockMaximumSize
            switch type {
            case 3:
                throw zstdMalformed("a block has the reserved block type 3")
            case 1:
                guard size <= maximum else {
                    throw zstdMalformed("an RLE block of \(size) bytes is larger than the block maximum, \(maximum)")
                }
                phase = .blockBody(size: 1, type: type, last: last, regenerated: size)
            default:
                guard size <= maximum else {
                    throw zstdMalformed("a block of \(size) bytes is larger than the block maximum, \(maximum)")
                }
                phase = .blockBody(size: size, type: type, last: last, regenerated: size)
            }
        case let .blockBody(_, type, last, regenerated):
            try decodeBlock(unit, type: type, regenerated: regenerated, output: output)
            if last {
                if let expected = frame.contentSize, expected != frame.produced {
                    throw zstdMalformed(
                        "the frame decoded to \(frame.produced) bytes, but its Frame_Content_Size is \(expected)")
                }
                if frame.checksum != nil {
                    phase = .checksum
                } else {
                    framesDecoded += 1
                    phase = .magic
                }
            } else {
                phase = .blockHeader
            }
        case .checksum:
            let stored = UInt32(Self.littleEndian(unit, 0, 4))
            let computed = UInt32(truncatingIfNeeded: frame.checksum?.digest() ?? 0)
            guard stored == computed else { throw ContentDecodingError.checksumMismatch(coding: "zstd") }
            framesDecoded += 1
            phase = .magic
        case .skipping:
            break
        }
    }

    private mutating func startFrame(descriptor: UInt8, header: UnsafeRawBufferPointer) throws {
        let singleSegment = descriptor & 0x20 != 0
        var index = 0
        var windowSize: UInt64 = 0
        if !singleSegment {
            let windowDescriptor = header[0]
            let windowLog = 10 + UInt64(windowDescriptor >> 3)
            let windowBase = UInt64(1) << windowLog
            windowSize = windowBase + (windowBase / 8) * UInt64(windowDescriptor & 7)
            index = 1
        }
        let dictionaryBytes = [0, 1, 2, 4][Int(descriptor & 3)]
        let dictionary = Self.littleEndian(header, index, dictionaryBytes)
        index += dictionaryBytes
        guard dictionary == 0 else {
            throw zstdMalformed("the frame needs dictionary \(dictionary); dictionaries are not supported")
        }
        let contentSizeBytes = [singleSegment ? 1 : 0, 2, 4, 8][Int(descriptor >> 6)]
        var contentSize: UInt64?
        if contentSizeBytes > 0 {
            let value = Self.littleEndian(header, index, contentSizeBytes)
            contentSize = contentSizeBytes == 2 ? value + 256 : value
        }
        if singleSegment { windowSize = contentSize ?? 0 }
        guard windowSize <= UInt64(max(0, maximumWindowSize)) else {
            throw ContentDecodingError.windowTooLarge(
                coding: "zstd", requested: Int(clamping: windowSize), limit: maximumWindowSize)
        }
        blocks.startFrame(windowSize: Int(windowSize))
        frame = Frame(contentSize: contentSize, produced: 0, checksum: descriptor & 0x04 != 0 ? XXHash64() : nil)
        phase = .blockHeader
    }

    private mutating func decodeBlock(
        _ body: UnsafeRawBufferPointer, type: UInt8, regenerated: Int,
        output: (UnsafeRawBufferPointer) throws -> Void
    ) throws {
        let count: Int
        switch type {
        case 0: count = body.count
        case 1: count = blocks.decodeRLE(body[0], count: regenerated)
        default: count = try blocks.decodeCompressed(body)
        }
        let produced = frame.produced + UInt64(count)
        if let expected = frame.contentSize, produced > expected {
            throw zstdMalformed("the frame decodes to more than its Frame_Content_Size, \(expected) bytes")
        }
        frame.produced = produced
        if type == 0 {
            try blocks.emit(body, checksum: &frame.checksum, output: output)
        } else {
            try blocks.emitBlock(count: count, checksum: &frame.checksum, output: output)
        }
    }

    private static func littleEndian(_ bytes: UnsafeRawBufferPointer, _ start: Int, _ count: Int) -> UInt64 {
        var value: UInt64 = 0
        for index in 0..<count { value |= UInt64(bytes[start + index]) << UInt64(8 * index) }
        return value
    }
}
