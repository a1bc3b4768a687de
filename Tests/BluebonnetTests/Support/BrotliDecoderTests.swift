import Foundation
import XCTest

@testable import Bluebonnet

/// The brotli decoder on streams the reference encoder made (every quality, several windows, the static dictionary),
/// on hand-made streams for what it never makes (metadata, every word transform, each malformed reason), and its
/// streaming promises: any chunking makes the same output, a cut stream is truncated, re-reading stays linear.
///
/// Fixtures (`Fixtures/Brotli`): `text.qN.br` is `text.txt` at quality N; `records.wN.br` is `records.json` at window
/// N; `dictionary-words.q11.br` is `dictionary-words.txt`, words of the static dictionary under its transforms;
/// `random.q0.br` is `random.bin` (an uncompressed meta-block); `zeros.w16*.br` are 300,000 zeros in a 64 KiB window;
/// `transforms.br` (every one of the 121 transforms), `metadata.br` and `crafted-copy.br` were made by hand and
/// checked with the reference decoder, as were the `malformed-*.br` streams, which it refuses.
final class BrotliDecoderTests: XCTestCase {
    private struct Outcome: Equatable {
        var output: [UInt8]
        var error: ContentDecodingError?
    }

    private static func bytes(_ name: String) throws -> [UInt8] {
        [UInt8](try Fixtures.data("Brotli/\(name)"))
    }

    /// Decodes `stream` cut into chunks of the sizes `nextSize` gives, then finishes.
    private static func decode(
        _ stream: [UInt8], maximumWindowSize: Int = 16 << 20, nextSize: () -> Int = { Int.max }
    ) -> (outcome: Outcome, decoder: BrotliDecoder) {
        var decoder = BrotliDecoder(maximumWindowSize: maximumWindowSize)
        var output: [UInt8] = []
        var start = 0
        do {
            repeat {
                let end = start + min(max(1, nextSize()), stream.count - start)
                try stream[start..<end].withUnsafeBytes { chunk in
                    try decoder.decode(chunk) { piece in
                        XCTAssertLessThanOrEqual(piece.count, BrotliDecoder.outputChunk)
                        output.append(contentsOf: piece)
                    }
                }
                start = end
            } while start < stream.count
            try decoder.finish()
        } catch let error as ContentDecodingError {
            return (Outcome(output: output, error: error), decoder)
        } catch {
            XCTFail("unexpected \(error)")
        }
        return (Outcome(output: output, error: nil), decoder)
    }

    /// The outcome of decoding `stream` whole, checked to be the same fed one byte at a time and in seeded random
    /// chunks.
    private static func decodeEveryWay(
        _ stream: [UInt8], maximumWindowSize: Int = 16 << 20, file: StaticString = #filePath, line: UInt = #line
    ) -> Outcome {
        let whole = decode(stream, maximumWindowSize: maximumWindowSize).outcome
        let bytewise = decode(stream, maximumWindowSize: maximumWindowSize, nextSize: { 1 }).outcome
        XCTAssertEqual(bytewise, whole, "one byte at a time", file: file, line: line)
        var random = SeededRandom(seed: UInt64(stream.count))
        let chunked = decode(stream, maximumWindowSize: maximumWindowSize, nextSize: { random.below(700) + 1 })
        XCTAssertEqual(chunked.outcome, whole, "random chunks", file: file, line: line)
        return whole
    }

    private func assertDecodes(
        _ name: String, to originalName: String, file: StaticString = #filePath, line: UInt = #line
    ) throws {
        let outcome = Self.decodeEveryWay(try Self.bytes(name), file: file, line: line)
        XCTAssertNil(outcome.error, name, file: file, line: line)
        XCTAssertTrue(outcome.output == (try Self.bytes(originalName)), "\(name) decoded wrong", file: file, line: line)
    }

    func testEveryQualityDecodesWholeBytewiseAndInRandomChunks() throws {
        for quality in 0...11 { try assertDecodes("text.q\(quality).br", to: "text.txt") }
    }

    func testWindowSizes() throws {
        for bits in [10, 16, 24] { try assertDecodes("records.w\(bits).br", to: "records.json") }
    }

    func testStaticDictionaryWordsUnderEveryTransform() throws {
        try assertDecodes("dictionary-words.q11.br", to: "dictionary-words.txt")
        try assertDecodes("transforms.br", to: "transforms.out")
    }

    func testUncompressedMetaBlocksMetadataAndDirectDistances() throws {
        try assertDecodes("random.q0.br", to: "random.bin")
        try assertDecodes("metadata.br", to: "metadata.out")
        try assertDecodes("crafted-copy.br", to: "crafted-copy.out")
    }

    func testLongOutputWrapsASmallWindowAndComesInBoundedChunks() throws {
        for name in ["zeros.w16.br", "zeros.w16.q1.br"] {
            let outcome = Self.decodeEveryWay(try Self.bytes(name))
            XCTAssertNil(outcome.error)
            XCTAssertEqual(outcome.output.count, 300_000)
            XCTAssertTrue(outcome.output.allSatisfy { $0 == 0 })
        }
    }

    func testTheEmptyStreamDecodesToNothing() throws {
        XCTAssertEqual(Self.decodeEveryWay(try Self.bytes("empty.br")), Outcome(output: [], error: nil))
    }

    func testEachMalformedStreamIsRefusedWithItsReason() throws {
        let reasons = [
            "code-length-code-oversubscribed": "a prefix code is over-subscribed",
            "context-map-run": "a run of zeros goes past the end of a context map",
            "copy-past-end": "a command copies 4 bytes, past the meta-block's end",
            "dictionary-length": "a distance past the window refers to a dictionary word of length 2",
            "dictionary-transform": "a dictionary reference names transform 49151 (there are 121)",
            "insert-past-end": "a command inserts 4 literals, past the meta-block's end",
            "large-window": "the window size code is invalid (large-window brotli?)",
            "metadata-length-zero-byte": "a metadata length has a needless zero byte",
            "metadata-reserved-bit": "the reserved bit of a metadata block is set",
            "mlen-zero-nibble": "a meta-block length has a needless zero nibble",
            "padding-bits": "the padding after the last meta-block is not zero",
            "prefix-code-incomplete": "a prefix code is incomplete",
            "prefix-code-oversubscribed": "a prefix code is over-subscribed",
            "short-distance-zero": "a short distance code makes a distance below 1",
            "simple-code-repeated-symbol": "a simple prefix code repeats a symbol",
            "simple-code-symbol-too-large": "a simple prefix code's symbol is too large",
            "uncompressed-fill-bits": "the fill bits before an uncompressed meta-block are not zero",
        ]
        for (name, detail) in reasons.sorted(by: { $0.key < $1.key }) {
            let outcome = Self.decodeEveryWay(try Self.bytes("malformed-\(name).br"))
            XCTAssertEqual(outcome.error, .malformed(coding: "br", detail: detail), name)
        }
    }

    func testAWindowLargerThanTheLimitIsRefusedBeforeAnythingIsAllocated() throws {
        let outcome = Self.decodeEveryWay(try Self.bytes("records.w24.br"), maximumWindowSize: 1 << 20)
        XCTAssertEqual(outcome.error, .windowTooLarge(coding: "br", requested: (1 << 24) - 16, limit: 1 << 20))
        XCTAssertEqual(outcome.output, [])
        // WBITS 16 is a window of 65,520 bytes: within a limit of 64 KiB.
        let accepted = Self.decodeEveryWay(try Self.bytes("records.w16.br"), maximumWindowSize: 1 << 16)
        XCTAssertNil(accepted.error)
    }

    func testEveryPrefixOfAStreamIsTruncatedAndMakesOnlyAPrefixOfTheOutput() throws {
        for (name, originalName) in [("text.q5.br", "text.txt"), ("records.w10.br", "records.json")] {
            let stream = try Self.bytes(name)
            let original = try Self.bytes(originalName)
            for length in 0..<stream.count {
                let outcome = Self.decode(Array(stream[..<length])).outcome
                XCTAssertEqual(outcome.error, .truncated(coding: "br"), "\(name) cut at \(length)")
                XCTAssertTrue(original.starts(with: outcome.output), "\(name) cut at \(length) made wrong output")
            }
        }
    }

    func testBytesAfterTheStreamAreTrailingData() throws {
        let stream = try Self.bytes("text.q5.br")
        let outcome = Self.decodeEveryWay(stream + [0])
        XCTAssertEqual(outcome.error, .trailingData(coding: "br"))
        XCTAssertEqual(outcome.output, try Self.bytes("text.txt"))
        // Also when they come in a later call, and the decoder keeps refusing.
        var decoder = BrotliDecoder()
        try stream.withUnsafeBytes { try decoder.decode($0) { _ in } }
        XCTAssertNoThrow(try decoder.finish())
        XCTAssertThrowsError(try [UInt8(7)].withUnsafeBytes { try decoder.decode($0) { _ in } }) { error in
            XCTAssertEqual(error as? ContentDecodingError, .trailingData(coding: "br"))
        }
        XCTAssertThrowsError(try decoder.finish())
    }

    func testFeedingOneByteAtATimeRereadsLittle() throws {
        for name in ["text.q11.br", "dictionary-words.q11.br", "records.w24.br", "transforms.br", "random.q0.br"] {
            let stream = try Self.bytes(name)
            let (outcome, decoder) = Self.decode(stream, nextSize: { 1 })
            XCTAssertNil(outcome.error)
            // A dropped unit is at most ~20 bytes, and only the unit cut by the end of a chunk is dropped.
            XCTAssertLessThanOrEqual(decoder.rereadBits / 8, 3 * stream.count, name)
        }
    }

    func testTheDictionaryIsRFC7932s() {
        XCTAssertEqual(BrotliDictionary.bytes.count, 122_784)
        XCTAssertEqual(SHA256Digest.hex(BrotliDictionary.bytes), BrotliDictionary.sha256)
        XCTAssertEqual(
            BrotliDictionary.sha256, "20e42eb1b511c21806d4d227d07e5dd06877d8ce7b3a817f378f313653f35c70")
    }

    func testASmallSHA256MatchesKnownDigests() {
        XCTAssertEqual(
            SHA256Digest.hex(Array("abc".utf8)), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(
            SHA256Digest.hex([]), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    }
}

/// A xorshift generator, so that random chunkings are the same on every run.
private struct SeededRandom {
    private var state: UInt64

    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }

    mutating func below(_ bound: Int) -> Int {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return Int(state % UInt64(bound))
    }
}

/// SHA-256 (FIPS 180-4), small and slow, to check the dictionary without a dependency.
private enum SHA256Digest {
    private static let roundConstants: [UInt32] = [
        0x428a_2f98, 0x7137_4491, 0xb5c0_fbcf, 0xe9b5_dba5, 0x3956_c25b, 0x59f1_11f1, 0x923f_82a4, 0xab1c_5ed5,
        0xd807_aa98, 0x1283_5b01, 0x2431_85be, 0x550c_7dc3, 0x72be_5d74, 0x80de_b1fe, 0x9bdc_06a7, 0xc19b_f174,
        0xe49b_69c1, 0xefbe_4786, 0x0fc1_9dc6, 0x240c_a1cc, 0x2de9_2c6f, 0x4a74_84aa, 0x5cb0_a9dc, 0x76f9_88da,
        0x983e_5152, 0xa831_c66d, 0xb003_27c8, 0xbf59_7fc7, 0xc6e0_0bf3, 0xd5a7_9147, 0x06ca_6351, 0x1429_2967,
        0x27b7_0a85, 0x2e1b_2138, 0x4d2c_6dfc, 0x5338_0d13, 0x650a_7354, 0x766a_0abb, 0x81c2_c92e, 0x9272_2c85,
        0xa2bf_e8a1, 0xa81a_664b, 0xc24b_8b70, 0xc76c_51a3, 0xd192_e819, 0xd699_0624, 0xf40e_3585, 0x106a_a070,
        0x19a4_c116, 0x1e37_6c08, 0x2748_774c, 0x34b0_bcb5, 0x391c_0cb3, 0x4ed8_aa4a, 0x5b9c_ca4f, 0x682e_6ff3,
        0x748f_82ee, 0x78a5_636f, 0x84c8_7814, 0x8cc7_0208, 0x90be_fffa, 0xa450_6ceb, 0xbef9_a3f7, 0xc671_78f2,
    ]

    static func hex(_ message: [UInt8]) -> String {
        var hash: [UInt32] = [
            0x6a09_e667, 0xbb67_ae85, 0x3c6e_f372, 0xa54f_f53a, 0x510e_527f, 0x9b05_688c, 0x1f83_d9ab, 0x5be0_cd19,
        ]
        var padded = message + [0x80]
        while padded.count % 64 != 56 { padded.append(0) }
        let bitCount = UInt64(message.count) * 8
        for shift in stride(from: 56, through: 0, by: -8) {
            padded.append(UInt8(truncatingIfNeeded: bitCount >> shift))
        }
        var words = [UInt32](repeating: 0, count: 64)
        for block in stride(from: 0, to: padded.count, by: 64) {
            for index in 0..<16 {
                words[index] = (0..<4).reduce(0) { $0 << 8 | UInt32(padded[block + index * 4 + $1]) }
            }
            for index in 16..<64 {
                let low = words[index - 15]
                let high = words[index - 2]
                let sigma0 = rotate(low, 7) ^ rotate(low, 18) ^ (low >> 3)
                let sigma1 = rotate(high, 17) ^ rotate(high, 19) ^ (high >> 10)
                words[index] = words[index - 16] &+ sigma0 &+ words[index - 7] &+ sigma1
            }
            var state = hash
            for index in 0..<64 {
                let (a, b, c, d) = (state[0], state[1], state[2], state[3])
                let (e, f, g, h) = (state[4], state[5], state[6], state[7])
                let choice = (e & f) ^ (~e & g)
                let temporary1 =
                    h &+ (rotate(e, 6) ^ rotate(e, 11) ^ rotate(e, 25)) &+ choice
                    &+ roundConstants[index] &+ words[index]
                let majority = (a & b) ^ (a & c) ^ (b & c)
                let temporary2 = (rotate(a, 2) ^ rotate(a, 13) ^ rotate(a, 22)) &+ majority
                state = [temporary1 &+ temporary2, a, b, c, d &+ temporary1, e, f, g]
            }
            for index in 0..<8 { hash[index] = hash[index] &+ state[index] }
        }
        return hash.map { word in
            let digits = String(word, radix: 16)
            return String(repeating: "0", count: 8 - digits.count) + digits
        }.joined()
    }

    private static func rotate(_ value: UInt32, _ count: UInt32) -> UInt32 {
        value >> count | value << (32 - count)
    }
}
