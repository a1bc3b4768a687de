import Foundation
import XCTest

@testable import Bluebonnet

/// The Zstandard decoder on fixtures made by the reference encoder (`zstd` 1.5.4) and on streams made by hand.
///
/// Fixtures under `Fixtures/Zstd`, and what they exercise (block types, literals and sequence modes as counted by
/// walking the frames' headers):
/// - `text-level{1,3,9,19}.zst`, `text-fast5.zst` (`--fast=5`): one compressed block each; Huffman literals in four
///   streams with FSE-compressed weights (raw literals at the fast level), FSE sequence tables.
/// - `data-nocheck.zst` (`--no-check`), `data-nosize.zst` (from a pipe: no Frame_Content_Size, a window descriptor).
/// - `skippable.zst`: a skippable frame, then `text-level3.zst`.
/// - `run.zst`: 20,000 × "a", predefined sequence tables and raw literals.
/// - `runs-rle-blocks.zst` (`--zstd=wlog=10`): 5,000 × "a" then 3,000 × "b", six RLE blocks.
/// - `random.zst`: incompressible bytes, a raw block.
/// - `repeats.zst`: reworked 300-byte chunks far apart, repeat-offset heavy.
/// - `window-small.zst` (`-19 --zstd=wlog=10`): a 1 KiB window over 24 KB, so 24 blocks, matches reaching back
///   through the history ring as it wraps, Repeat_Mode for all three tables.
/// - `digits-treeless.zst` (`-19 --zstd=wlog=10`): treeless literals in four streams, RLE_Mode literal lengths and
///   offsets.
/// - `rows-rle-modes.zst` (`-9 --zstd=wlog=11`): treeless literals in one stream, RLE_Mode for all three tables.
/// - `huffman-direct.zst`, `literals-rle.zst`, `sequences-rle.zst`: made by hand (and checked with `zstd -d`):
///   Huffman weights written directly, RLE literals without sequences, RLE_Mode sequences copying from offset 1.
/// - `empty.zst`: an empty body's frame.
final class ZstdDecoderTests: XCTestCase {
    /// Each compressed fixture and the bytes it decodes to.
    private func fixtures() throws -> [(name: String, compressed: Data, original: Data)] {
        func file(_ name: String) throws -> Data { try Fixtures.data("Zstd/\(name)") }
        let text = try file("text.txt")
        let json = try file("data.json")
        let runs = Data(repeating: UInt8(ascii: "a"), count: 5000) + Data(repeating: UInt8(ascii: "b"), count: 3000)
        var list: [(String, Data)] = [
            ("text-level1.zst", text), ("text-level3.zst", text), ("text-level9.zst", text),
            ("text-level19.zst", text), ("text-fast5.zst", text), ("data-nocheck.zst", json),
            ("data-nosize.zst", json), ("skippable.zst", text),
            ("run.zst", Data(repeating: UInt8(ascii: "a"), count: 20000)), ("runs-rle-blocks.zst", runs),
            ("random.zst", try file("random.bin")), ("repeats.zst", try file("repeats.bin")),
            ("window-small.zst", try file("window.txt")), ("digits-treeless.zst", try file("digits.txt")),
            ("rows-rle-modes.zst", try file("rows.txt")), ("huffman-direct.zst", Data([0, 1, 1, 0])),
            ("literals-rle.zst", Data("zzzzzzzzzz".utf8)), ("sequences-rle.zst", Data("xxxx".utf8)),
            ("empty.zst", Data()),
        ]
        // Two frames back to back: one with a checksum, one without.
        list.append(("text-level3.zst + data-nocheck.zst", text + json))
        return try list.map { name, original in
            if name == "text-level3.zst + data-nocheck.zst" {
                return (name, try file("text-level3.zst") + file("data-nocheck.zst"), original)
            }
            return (name, try file(name), original)
        }
    }

    /// Decodes `data` fed in pieces whose sizes `nextSize` picks; returns the output, or the error with the output
    /// made before it.
    private func decode(
        _ data: Data, decoder: ZstdDecoder = ZstdDecoder(), nextSize: () -> Int = { .max }
    ) -> (output: Data, error: Error?) {
        var decoder = decoder
        var output = Data()
        do {
            try data.withUnsafeBytes { (bytes: UnsafeRawBufferPointer) in
                var index = 0
                repeat {
                    let end = index + min(max(1, nextSize()), bytes.count - index)
                    let piece = UnsafeRawBufferPointer(rebasing: bytes[index..<end])
                    try decoder.decode(piece) { output.append(contentsOf: $0) }
                    index = end
                } while index < bytes.count
            }
            try decoder.finish()
            return (output, nil)
        } catch {
            return (output, error)
        }
    }

    /// A seeded generator, so that random chunkings are the same on every run.
    private struct SplitMix: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var value = state
            value = (value ^ (value >> 30)) &* 0xBF58_476D_1CE4_E5B9
            value = (value ^ (value >> 27)) &* 0x94D0_49BB_1331_11EB
            return value ^ (value >> 31)
        }
    }

    func testEveryFixtureDecodesWholeByteByByteAndInRandomChunks() throws {
        var random = SplitMix(state: 8878)
        for fixture in try fixtures() {
            let whole = decode(fixture.compressed)
            XCTAssertNil(whole.error, fixture.name)
            XCTAssertEqual(whole.output, fixture.original, fixture.name)
            let bytewise = decode(fixture.compressed) { 1 }
            XCTAssertNil(bytewise.error, fixture.name)
            XCTAssertEqual(bytewise.output, fixture.original, "\(fixture.name) fed one byte at a time")
            for _ in 0..<3 {
                let chunked = decode(fixture.compressed) { Int.random(in: 1...700, using: &random) }
                XCTAssertNil(chunked.error, fixture.name)
                XCTAssertEqual(chunked.output, fixture.original, "\(fixture.name) fed in random chunks")
            }
        }
    }

    func testFeedingOneByteAtATimeCopiesEachByteOnceAndHandsOutWholeBlocks() throws {
        let compressed = try Fixtures.data("Zstd/window-small.zst")
        var decoder = ZstdDecoder()
        var chunks: [Int] = []
        for byte in compressed {
            try withUnsafeBytes(of: byte) { try decoder.decode($0) { chunks.append($0.count) } }
        }
        try decoder.finish()
        // Each input byte was copied into the unit buffer once at most: the work is linear in the input.
        XCTAssertLessThanOrEqual(decoder.bytesBuffered, compressed.count)
        XCTAssertEqual(chunks.reduce(0, +), 24047)
        // A 1 KiB window makes blocks of 1 KiB at most; the output came one block at a time.
        XCTAssertLessThanOrEqual(chunks.max() ?? 0, 1024)
        XCTAssertGreaterThan(chunks.count, 20)

        var whole = ZstdDecoder()
        try compressed.withUnsafeBytes { bytes in try whole.decode(bytes) { _ in } }
        XCTAssertEqual(whole.bytesBuffered, 0, "a body that arrives whole is decoded in place")
    }

    func testEveryPrefixOfAStreamIsTruncatedNeverWrong() throws {
        for name in ["text-level3.zst", "skippable.zst", "sequences-rle.zst", "huffman-direct.zst", "empty.zst"] {
            let compressed = try Fixtures.data("Zstd/\(name)")
            let original = try XCTUnwrap(try fixtures().first { $0.name == name }?.original)
            // A skippable frame alone is a whole stream: that cut is complete, not truncated.
            for cut in 0..<compressed.count where !(name == "skippable.zst" && cut == 19) {
                let result = decode(compressed.prefix(cut))
                XCTAssertEqual(
                    result.error as? ContentDecodingError, .truncated(coding: "zstd"), "\(name) cut at \(cut)")
                XCTAssertTrue(original.starts(with: result.output), "\(name) cut at \(cut) gave wrong bytes")
                let bytewise = decode(compressed.prefix(cut)) { 1 }
                XCTAssertEqual(bytewise.error as? ContentDecodingError, .truncated(coding: "zstd"))
                XCTAssertEqual(bytewise.output, result.output)
            }
        }
    }

    func testAWindowOverTheLimitIsRefusedBeforeDecoding() throws {
        // A window descriptor of 16 MiB (exponent 14, mantissa 0), no content size.
        let large = Data([0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x70, 0x01, 0x00, 0x00])
        XCTAssertEqual(
            decode(large).error as? ContentDecodingError,
            .windowTooLarge(coding: "zstd", requested: 16 << 20, limit: 8 << 20))
        // The largest descriptor asks for 3.75 TiB; it is reported, never allocated.
        let huge = Data([0x28, 0xB5, 0x2F, 0xFD, 0x00, 0xFF])
        XCTAssertEqual(
            decode(huge).error as? ContentDecodingError,
            .windowTooLarge(coding: "zstd", requested: (1 << 41) + 7 * (1 << 38), limit: 8 << 20))
        // A single-segment frame's window is its content size: 6,041 bytes here.
        let text = try Fixtures.data("Zstd/text-level3.zst")
        XCTAssertEqual(
            decode(text, decoder: ZstdDecoder(maximumWindowSize: 4096)).error as? ContentDecodingError,
            .windowTooLarge(coding: "zstd", requested: 6041, limit: 4096))
        XCTAssertNil(decode(text, decoder: ZstdDecoder(maximumWindowSize: 6041)).error)
        // An 8-byte content size of 2^63 in a single-segment frame.
        let declared = Data([0x28, 0xB5, 0x2F, 0xFD, 0xE0]) + Data([0, 0, 0, 0, 0, 0, 0, 0x80])
        XCTAssertEqual(
            decode(declared).error as? ContentDecodingError,
            .windowTooLarge(coding: "zstd", requested: Int.max, limit: 8 << 20))
    }

    func testAFlippedChecksumIsAMismatch() throws {
        var compressed = try Fixtures.data("Zstd/text-level3.zst")
        compressed[compressed.count - 1] ^= 0x01
        let result = decode(compressed)
        XCTAssertEqual(result.error as? ContentDecodingError, .checksumMismatch(coding: "zstd"))
        XCTAssertEqual(result.output, try Fixtures.data("Zstd/text.txt"), "the bytes came before the checksum")
    }

    /// Bytes after a complete frame that cannot begin another frame are `.trailingData`: frames may be
    /// concatenated, so only a byte that no frame's magic number starts with shows the stream is over. A partial
    /// magic number at the end of the body is `.truncated`, as the body may have been cut inside a next frame.
    func testBytesAfterAFrameAreTrailingDataOrATruncatedFrame() throws {
        let text = try Fixtures.data("Zstd/text-level3.zst")
        let garbages = [
            Data("<html>".utf8), Data([0x00]), Data([0x28, 0xB5, 0x2F, 0x00]), Data([0x51, 0x2A, 0x4D, 0x19]),
        ]
        for garbage in garbages {
            let result = decode(text + garbage)
            XCTAssertEqual(result.error as? ContentDecodingError, .trailingData(coding: "zstd"), "\(Array(garbage))")
            XCTAssertEqual(result.output, try Fixtures.data("Zstd/text.txt"))
            XCTAssertEqual(
                decode(text + garbage) { 1 }.error as? ContentDecodingError, .trailingData(coding: "zstd"))
        }
        XCTAssertEqual(
            decode(text + Data([0x28, 0xB5, 0x2F])).error as? ContentDecodingError, .truncated(coding: "zstd"))
        XCTAssertEqual(decode(Data()).error as? ContentDecodingError, .truncated(coding: "zstd"))
    }

    func testAnErrorStaysAndOutputErrorsPassThrough() throws {
        struct TooMuch: Error {}
        let text = try Fixtures.data("Zstd/text-level3.zst")
        var decoder = ZstdDecoder()
        try text.withUnsafeBytes { bytes in
            XCTAssertThrowsError(try decoder.decode(bytes) { _ in throw TooMuch() }) { XCTAssertTrue($0 is TooMuch) }
            XCTAssertThrowsError(try decoder.decode(bytes) { _ in }) { XCTAssertTrue($0 is TooMuch) }
        }
        var broken = ZstdDecoder()
        try Data("nope".utf8).withUnsafeBytes { bytes in
            XCTAssertThrowsError(try broken.decode(bytes) { _ in })
            XCTAssertThrowsError(try broken.finish()) { error in
                guard case .malformed = error as? ContentDecodingError else { return XCTFail("\(error)") }
            }
        }
    }

    func testXXHash64() {
        func hash(_ bytes: [UInt8], pieces: Int = 1) -> UInt64 {
            var hasher = XXHash64()
            let size = max(1, bytes.count / pieces)
            var index = 0
            while index < bytes.count {
                let end = min(bytes.count, index + size)
                bytes[index..<end].withUnsafeBytes { hasher.update($0) }
                index = end
            }
            return hasher.digest()
        }
        XCTAssertEqual(hash([]), 0xEF46_DB37_51D8_E999)
        let bytes = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 3) }
        for count in [1, 3, 4, 7, 8, 31, 32, 33, 63, 64, 100, 1000] {
            let prefix = Array(bytes.prefix(count))
            for pieces in [2, 3, 7, 50] {
                XCTAssertEqual(hash(prefix, pieces: pieces), hash(prefix), "\(count) bytes in \(pieces) pieces")
            }
        }
    }

    // MARK: Streams made by hand

    /// A frame with a 1 KiB window and no content size or checksum, holding `blocks` (type, content, size field).
    private func frame(
        _ blocks: [(type: Int, content: [UInt8], size: Int?)], descriptor: [UInt8] = [0x00, 0x00]
    ) -> Data {
        var bytes: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD] + descriptor
        for (index, block) in blocks.enumerated() {
            let last = index == blocks.count - 1 ? 1 : 0
            let header = (block.size ?? block.content.count) << 3 | block.type << 1 | last
            bytes += [UInt8(header & 0xFF), UInt8(header >> 8 & 0xFF), UInt8(header >> 16)] + block.content
        }
        return Data(bytes)
    }

    private func compressed(_ content: [UInt8]) -> Data { frame([(2, content, nil)]) }

    /// One literal "x", then one sequence under RLE_Mode tables: literal length code `literalLength`, offset code
    /// `offsetCode`, match length code `matchLength`, and the bitstream `stream`.
    private func sequence(
        literalLength: UInt8 = 1, offsetCode: UInt8 = 2, matchLength: UInt8 = 0, stream: [UInt8] = [0x04]
    ) -> Data {
        compressed([0x08, 0x78, 0x01, 0x54, literalLength, offsetCode, matchLength] + stream)
    }

    func testMalformedStreamsAreRefusedWithTheRuleTheyBreak() {
        let huffmanLiterals: [UInt8] = [0x42, 0xC0, 0x00, 0x80, 0x10]
        let cases: [(String, Data, String)] = [
            ("bad magic", Data("not zstd".utf8), "magic number"),
            ("reserved frame bit", frame([(0, [], nil)], descriptor: [0x08, 0x00]), "reserved bit"),
            ("dictionary", frame([(0, [], nil)], descriptor: [0x01, 0x00, 0x07]), "dictionaries are not supported"),
            ("reserved block type", frame([(3, [1, 2, 3], nil)]), "reserved block type"),
            ("raw block over the maximum", frame([(0, [UInt8](repeating: 1, count: 1025), nil)]), "block maximum"),
            ("RLE block over the maximum", frame([(1, [7], 1025)]), "block maximum"),
            (
                "single-segment block over the maximum",
                frame([(0, [1, 2, 3, 4, 5], nil)], descriptor: [0x20, 4]), "block maximum"
            ),
            ("content size short", frame([(0, [1, 2, 3], nil)], descriptor: [0x20, 4]), "Frame_Content_Size is 4"),
            ("content size exceeded", frame([(0, [1, 2, 3], nil)], descriptor: [0x20, 2]), "block maximum"),
            (
                "content size exceeded over blocks",
                frame([(0, [1, 2], nil), (0, [1, 2], nil)], descriptor: [0xA0, 3, 0, 0, 0]),
                "more than its Frame_Content_Size"
            ),
            ("empty compressed block", compressed([]), "no literals section"),
            ("raw literals past the block", compressed([0x28, 0x78, 0x00]), "raw literals run past"),
            ("RLE literals without a byte", compressed([0x51]), "no byte"),
            ("literals over the maximum", compressed([0x0D, 0xFF, 0xFF, 0x00]), "more than the block maximum"),
            ("treeless without a table", compressed([0x43, 0x40, 0x00, 0x16, 0x00]), "before any Huffman table"),
            ("compressed literals past the block", compressed([0x42, 0xC0, 0x0F, 0x80]), "run past the end"),
            ("Huffman stream without padding", compressed(huffmanLiterals + [0x00, 0x00]), "padding bit"),
            ("Huffman stream not read exactly", compressed(huffmanLiterals + [0x36, 0x00]), "exactly"),
            (
                "Huffman weights not a tree", compressed([0x42, 0x00, 0x01, 0x83, 0x22, 0x10, 0x16, 0x00]),
                "prefix code"
            ),
            (
                "Huffman weight over 11", compressed([0x42, 0x00, 0x01, 0x83, 0xC1, 0x10, 0x16, 0x00]),
                "above the maximum"
            ),
            (
                "Huffman weights all zero", compressed([0x42, 0xC0, 0x00, 0x80, 0x00, 0x16, 0x00]),
                "describe no symbol"
            ),
            (
                "four streams too short", compressed([0x46, 0x80, 0x02, 0x80, 0x10, 1, 0, 1, 0, 1, 0, 0x16, 0x00]),
                "at least 10 bytes"
            ),
            (
                "four streams with a bad jump table",
                compressed([0x46, 0x00, 0x03, 0x80, 0x10, 9, 0, 1, 0, 1, 0, 0x16, 0x16, 0x16, 0x16, 0x00]),
                "jump table"
            ),
            ("no sequences section", compressed([0x08, 0x78]), "no sequences section"),
            ("bytes after zero sequences", compressed([0x08, 0x78, 0x00, 0x00]), "no sequences"),
            ("no compression modes", compressed([0x08, 0x78, 0x01]), "no compression modes"),
            ("reserved mode bits", compressed([0x08, 0x78, 0x01, 0x55, 1, 2, 0, 0x04]), "reserved bits"),
            ("repeat without a table", compressed([0x08, 0x78, 0x01, 0xFC, 0x04]), "repeats a previous one"),
            ("RLE code out of range", sequence(literalLength: 36), "above the largest"),
            ("FSE accuracy log too large", compressed([0x08, 0x78, 0x01, 0x80, 0x0F, 0x04]), "accuracy log"),
            ("FSE description cut short", compressed([0x08, 0x78, 0x01, 0x80, 0x00]), "runs past its end"),
            ("offset before the data", sequence(offsetCode: 5, stream: [0x20]), "reaches before"),
            ("offset of zero", sequence(literalLength: 0, offsetCode: 1, stream: [0x03]), "offset of 0"),
            ("literals overrun", sequence(literalLength: 2), "more literals"),
            ("match over the block maximum", sequence(matchLength: 52, stream: [0x00, 0x00, 0x10]), "block maximum"),
            ("sequences not read exactly", sequence(stream: [0x08]), "exactly"),
            ("sequences stream without padding", sequence(stream: [0x00]), "padding bit"),
        ]
        for (name, bytes, detail) in cases {
            for nextSize: () -> Int in [{ .max }, { 1 }] {
                let result = decode(bytes, nextSize: nextSize)
                guard case let .malformed(coding, message)? = result.error as? ContentDecodingError else {
                    XCTFail("\(name): \(String(describing: result.error))")
                    continue
                }
                XCTAssertEqual(coding, "zstd")
                XCTAssertTrue(message.contains(detail), "\(name): \(message)")
            }
        }
        // The well-formed stream the sequence cases are made from.
        XCTAssertEqual(decode(sequence()).output, Data("xxxx".utf8))
    }
}
