@testable import Bluebonnet
import Foundation
import XCTest

/// The decoding chain's limits, counted: what a piece of the body may decode to, whatever came before it.
final class ResponseBodyDecodingTests: XCTestCase {
    /// A zstd skippable frame of `size` bytes of payload: bytes that decode to nothing.
    private func skippable(_ size: Int) -> Data {
        var frame = Data([0x50, 0x2A, 0x4D, 0x18])
        withUnsafeBytes(of: UInt32(size).littleEndian) { frame.append(contentsOf: $0) }
        frame.append(Data(count: size))
        return frame
    }

    /// A zstd frame of `blocks` RLE blocks of 128 KiB each: 4 bytes a block.
    private func rleFrame(blocks: Int) -> Data {
        var frame = Data([0x28, 0xB5, 0x2F, 0xFD, 0x00, 7 << 3])
        for index in 0..<blocks {
            let last: UInt32 = index == blocks - 1 ? 1 : 0
            let header = last | (1 << 1) | (UInt32(128 * 1024) << 3)
            frame.append(contentsOf: [UInt8(header & 0xFF), UInt8((header >> 8) & 0xFF), UInt8(header >> 16), 0x41])
        }
        return frame
    }

    /// Before: 2 MiB that decode to nothing allowed the next piece 400 MiB at once (the ratio of all that came), held
    /// whole by the engine before any limit looked at it. Now a piece decodes to at most its own ratio and a window.
    func testBytesThatDecodeToNothingBuyNoBurstLater() throws {
        let decoding = try XCTUnwrap(ResponseBodyDecoding.make(contentEncoding: "zstd", ratioLimit: 200))
        var delivered = 0
        try skippable(2 << 20).withUnsafeBytes { bytes in
            try decoding.decode(bytes) { delivered += $0.count }
        }
        XCTAssertEqual(delivered, 0)
        let burst = rleFrame(blocks: 3000)  // 12,006 bytes decoding to 375 MiB
        XCTAssertThrowsError(
            try burst.withUnsafeBytes { bytes in try decoding.decode(bytes) { delivered += $0.count } }
        ) { error in
            guard case .responseLimitExceeded(.decompressionRatioExceeded(200, _))? = error as? AFError else {
                return XCTFail("\(error)")
            }
        }
        XCTAssertLessThanOrEqual(delivered, burst.count * 200 + ResponseBodyDecoding.burstAllowance, "\(delivered)")
    }

    /// A stream within the ratio decodes whole, however it is cut, and `finish()` accepts it: RLE blocks at a ratio
    /// under 200 (each after 2,000 bytes stored raw).
    func testAStreamWithinTheLimitsDecodesWhole() throws {
        let decoding = try XCTUnwrap(ResponseBodyDecoding.make(contentEncoding: "zstd", ratioLimit: 200))
        var frame = Data([0x28, 0xB5, 0x2F, 0xFD, 0x00, 7 << 3])
        var expected = 0
        for index in 0..<4 {
            let raw = UInt32(2000) << 3
            frame.append(contentsOf: [UInt8(raw & 0xFF), UInt8((raw >> 8) & 0xFF), UInt8(raw >> 16)])
            frame.append(Data(repeating: UInt8(index), count: 2000))
            let last: UInt32 = index == 3 ? 1 : 0
            let rle = last | (1 << 1) | (UInt32(100_000) << 3)
            frame.append(contentsOf: [UInt8(rle & 0xFF), UInt8((rle >> 8) & 0xFF), UInt8(rle >> 16), 0x41])
            expected += 2000 + 100_000
        }
        var delivered = 0
        for start in stride(from: 0, to: frame.count, by: 3) {
            try frame[start..<min(start + 3, frame.count)].withUnsafeBytes { bytes in
                try decoding.decode(bytes) { delivered += $0.count }
            }
        }
        XCTAssertNoThrow(try decoding.finish())
        XCTAssertEqual(delivered, expected)
    }

    func testCodingsNoneOfWhichAreKnownAreLeftAlone() throws {
        XCTAssertNil(try ResponseBodyDecoding.make(contentEncoding: "compress", ratioLimit: 200))
        XCTAssertNil(try ResponseBodyDecoding.make(contentEncoding: "identity", ratioLimit: 200))
        XCTAssertNil(try ResponseBodyDecoding.make(contentEncoding: "gzip, compress", ratioLimit: 200))
        XCTAssertNotNil(try ResponseBodyDecoding.make(contentEncoding: "X-GZIP", ratioLimit: 200))
    }
}
