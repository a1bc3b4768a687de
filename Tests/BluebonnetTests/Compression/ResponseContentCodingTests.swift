@testable import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Brotli and zstd bodies (and stacked codings) decoded as they arrive, over real sockets, in every kind of request:
/// in memory, downloaded to a file, streamed, and as Server-Sent Events. The coded bodies are the reference
/// encoders' (the fixtures, sent back by `/encoded?raw=1`) or the test server's stored streams.
final class ResponseContentCodingTests: ServerTestCase {
    /// A reference encoder's stream and what it decodes to.
    private struct Coded {
        let coding: String
        let body: Data
        let plain: Data
    }

    private func fixtures() throws -> [Coded] {
        [
            Coded(
                coding: "br", body: try Fixtures.data("Brotli/text.q11.br"), plain: try Fixtures.data("Brotli/text.txt")
            ),
            Coded(
                coding: "br", body: try Fixtures.data("Brotli/records.w24.br"),
                plain: try Fixtures.data("Brotli/records.json")),
            Coded(
                coding: "zstd", body: try Fixtures.data("Zstd/text-level19.zst"),
                plain: try Fixtures.data("Zstd/text.txt")),
            Coded(
                coding: "zstd", body: try Fixtures.data("Zstd/data-nocheck.zst"),
                plain: try Fixtures.data("Zstd/data.json")),
        ]
    }

    /// `coded` served as it came, in 7-byte writes so the decoder meets the stream cut anywhere.
    private func request(_ coded: Coded) throws -> URLRequest {
        var request = try URLRequest(
            url: XCTUnwrap(URL(string: url("/encoded?raw=1&chunk=7&codings=\(coded.coding)"))), method: .post)
        request.httpBody = coded.body
        return request
    }

    func testTheDefaultAcceptEncodingAsksForBrotliAndZstdFirst() async throws {
        let response = await session.request(url("/headers")).serializingData().response
        let text = String(decoding: try XCTUnwrap(response.data), as: UTF8.self)
        XCTAssertTrue(text.contains("br;q=1.0, zstd;q=0.9, gzip;q=0.8, deflate;q=0.7"), text)
    }

    func testBrotliAndZstdRoutesDecode() async throws {
        for (path, key) in [("/brotli", "brotli"), ("/zstd", "zstd")] {
            let response = await session.request(url(path)).validate().serializingData().response
            let data = try XCTUnwrap(response.data, "\(path): \(String(describing: response.error))")
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any])
            XCTAssertEqual(object[key] as? Bool, true, path)
        }
    }

    func testReferenceEncodedBodiesDecodeByteExactInMemory() async throws {
        for coded in try fixtures() {
            let response = await session.request(try request(coded)).validate().serializingData().response
            XCTAssertNil(response.error, "\(coded.coding): \(String(describing: response.error))")
            XCTAssertEqual(response.data, coded.plain, coded.coding)
        }
    }

    func testReferenceEncodedBodiesDecodeIntoADownloadedFile() async throws {
        let directory = try TemporaryDirectory()
        for (index, coded) in try fixtures().enumerated() {
            let target = directory.url.appendingPathComponent("decoded-\(index)")
            let response = await session.download(try request(coded), to: { _, _ in (target, []) }).validate()
                .serializingDownloadedFileURL().response
            XCTAssertNil(response.error, "\(coded.coding): \(String(describing: response.error))")
            XCTAssertEqual(try Data(contentsOf: target), coded.plain, coded.coding)
        }
    }

    func testReferenceEncodedBodiesDecodeAsAStream() async throws {
        for coded in try fixtures() {
            var received = Data()
            for await chunk in session.streamRequest(try request(coded)).streamTask().streamingData() {
                if case let .stream(.success(data)) = chunk.event { received.append(data) }
                if case let .complete(completion) = chunk.event {
                    XCTAssertNil(completion.error, "\(coded.coding): \(String(describing: completion.error))")
                }
            }
            XCTAssertEqual(received, coded.plain, coded.coding)
        }
    }

    func testServerSentEventsArriveThroughACoding() async throws {
        let events = Data("data: one\n\ndata: two\n\n".utf8)
        for coding in ["br", "zstd", "gzip, br"] {
            var request = try URLRequest(
                url: XCTUnwrap(URL(string: url("/encoded?chunk=3&codings=\(coding)"))), method: .post)
            request.httpBody = events
            var data: [String] = []
            for await event in session.streamRequest(request).streamTask().streamingServerSentEvents() {
                if case let .stream(.success(sse)) = event.event { data.append(sse.data) }
            }
            XCTAssertEqual(data, ["one", "two"], coding)
        }
    }

    /// Before: bytes that decoded to nothing yet (one zstd block arriving slowly) did not count as the server's
    /// activity, so the idle timeout fired while the block was still arriving. One 4,000-byte block sent in 100-byte
    /// pieces 100 ms apart outlasts the 1 s idle timeout twice over, though no gap comes near it.
    func testBytesOfAnUnfinishedUnitKeepTheRequestAlive() async throws {
        let session = session { $0.timeoutIntervalForRequest = 1 }
        let plain = Data((0..<4000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        var request = try URLRequest(
            url: XCTUnwrap(URL(string: url("/encoded?codings=zstd&chunk=100&delay_ms=100"))), method: .post)
        request.httpBody = plain
        let response = await session.request(request).serializingData().response
        XCTAssertNil(response.error, "\(String(describing: response.error))")
        XCTAssertEqual(response.data, plain)
    }

    func testStackedCodingsAreUndoneInReverseOrder() async throws {
        let plain = Data((0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        for codings in ["gzip,br", "br,gzip", "zstd,deflate,br", "identity,br"] {
            var request = try URLRequest(
                url: XCTUnwrap(URL(string: url("/encoded?codings=\(codings)"))), method: .post)
            request.httpBody = plain
            let response = await session.request(request).serializingData().response
            XCTAssertNil(response.error, "\(codings): \(String(describing: response.error))")
            XCTAssertEqual(response.data, plain, codings)
        }
    }

    func testMoreThanThreeStackedCodingsAreRefused() async throws {
        var request = try URLRequest(
            url: XCTUnwrap(URL(string: url("/encoded?codings=br,br,zstd,gzip"))), method: .post)
        request.httpBody = Data("four".utf8)
        let response = await session.request(request).serializingData().response
        let error = try XCTUnwrap(response.error)
        XCTAssertEqual((error.underlyingError as? URLError)?.code, .cannotDecodeContentData, "\(error)")
        XCTAssertTrue(error.localizedDescription.contains("at most 3"), error.localizedDescription)
    }

    func testAnUnknownCodingIsLeftAsItCame() async throws {
        var request = try URLRequest(url: XCTUnwrap(URL(string: url("/encoded?raw=1&codings=compress"))), method: .post)
        request.httpBody = Data("as sent".utf8)
        let response = await session.request(request).serializingData().response
        XCTAssertEqual(response.data, Data("as sent".utf8))
        XCTAssertEqual(response.response?.value(forHTTPHeaderField: "Content-Encoding"), "compress")
    }

    func testMalformedAndTruncatedStreamsFailAsUndecodableContent() async throws {
        let text = try Fixtures.data("Zstd/text-level3.zst")
        let cases: [(String, Data, String)] = [
            ("br", try Fixtures.data("Brotli/malformed-copy-past-end.br"), "malformed"),
            ("br", try Fixtures.data("Brotli/text.q5.br").dropLast(9), "ended before"),
            ("zstd", text.dropLast(5), "ended before"),
            ("zstd", Data([0x28, 0xB5, 0x2F, 0xFD, 0x00, 0xFF]), "window"),
            ("gzip", Data([0x1F, 0x8B, 0x08, 0x00, 0x01]), "ended before"),
        ]
        for (coding, body, words) in cases {
            var request = try URLRequest(
                url: XCTUnwrap(URL(string: url("/encoded?raw=1&codings=\(coding)"))), method: .post)
            request.httpBody = body
            let response = await session.request(request).serializingData().response
            let error = try XCTUnwrap(response.error, coding)
            XCTAssertEqual((error.underlyingError as? URLError)?.code, .cannotDecodeContentData, "\(coding): \(error)")
            XCTAssertTrue(
                error.localizedDescription.contains(words), "\(coding): \(error.localizedDescription)")
        }
    }

    /// A zstd frame of RLE blocks: 4 bytes each that decode to 128 KiB, a ratio of 32,768.
    func testABombIsStoppedByTheRatioLimit() async throws {
        var bomb = Data([0x28, 0xB5, 0x2F, 0xFD, 0x00, 7 << 3])
        for index in 0..<400 {
            let last: UInt32 = index == 399 ? 1 : 0
            let header = last | (1 << 1) | (UInt32(128 * 1024) << 3)
            bomb.append(contentsOf: [UInt8(header & 0xFF), UInt8((header >> 8) & 0xFF), UInt8(header >> 16), 0x41])
        }
        for download in [false, true] {
            var request = try URLRequest(url: XCTUnwrap(URL(string: url("/encoded?raw=1&codings=zstd"))), method: .post)
            request.httpBody = bomb
            let error: AFError?
            if download {
                error = await session.download(request).serializingDownloadedFileURL().response.error
            } else {
                error = await session.request(request).serializingData().response.error
            }
            guard case let .responseLimitExceeded(.decompressionRatioExceeded(ratio, _))? = error else {
                return XCTFail("download \(download): \(String(describing: error))")
            }
            XCTAssertEqual(ratio, AsyncHTTPClientTransport.decompressionRatioLimit)
        }
    }
}
