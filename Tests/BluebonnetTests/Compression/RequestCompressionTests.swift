@testable import Bluebonnet
@testable import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Request bodies compressed by `DeflateRequestCompressor` and `GzipRequestCompressor`, decoded by the test server's
/// `/drain` as they arrive: bodies in memory (Alamofire's case), and uploads of data, files, forms and streams,
/// compressed as they are sent.
final class RequestCompressionTests: ServerTestCase {
    private struct Drained: Decodable, Equatable {
        let bytes: Int
        let crc32: Int
        let method: String
        let encodedBytes: Int?
        let contentEncoding: String?
        let contentLength: String?
    }

    /// Text that compresses well, with enough variety that zlib has work to do.
    private static func text(count: Int) -> Data {
        var text = ""
        var line = 0
        while text.utf8.count < count {
            text += "line \(line): the quick brown fox jumps over the lazy dog \(line % 97)\n"
            line += 1
        }
        return Data(text.utf8.prefix(count))
    }

    private func drained(_ request: DataRequest, file: StaticString = #filePath, line: UInt = #line) async throws
        -> Drained
    {
        try await request.validate().serializingDecodable(Drained.self).value
    }

    // MARK: - Bodies in memory

    func testABodyInMemoryIsSentDeflatedOrGzippedAndDecodesToWhatWasWritten() async throws {
        let body = Self.text(count: 200_000)
        for (interceptor, coding) in [
            (DeflateRequestCompressor() as any RequestInterceptor, "deflate"), (GzipRequestCompressor(), "gzip"),
        ] {
            var urlRequest = try URLRequest(url: url("/drain"), method: .post)
            urlRequest.httpBody = body
            let result = try await drained(session.request(urlRequest, interceptor: interceptor))
            XCTAssertEqual(result.bytes, body.count, coding)
            XCTAssertEqual(result.crc32, DrainRoute.checksum(body), coding)
            XCTAssertEqual(result.contentEncoding, coding)
            XCTAssertLessThan(try XCTUnwrap(result.encodedBytes), body.count / 10, "\(coding) compressed")
            XCTAssertEqual(result.contentLength, result.encodedBytes.map(String.init), "a body in memory has a length")
        }
    }

    func testAnEncodedParameterBodyIsCompressedThroughTheStaticMember() async throws {
        let parameters = ["property": String(repeating: "compressed ", count: 500)]
        let result = try await drained(
            session.request(
                url("/drain"), method: .post, parameters: parameters, encoder: .json, interceptor: .deflateCompressor))
        let expected = try JSONEncoder().encode(parameters)
        XCTAssertEqual(result.contentEncoding, "deflate")
        XCTAssertEqual(result.bytes, expected.count)
    }

    func testAnExistingContentEncodingFailsReplacesOrSkipsAsConfigured() async throws {
        let body = Self.text(count: 10_000)
        func request(encoding: String) throws -> URLRequest {
            var urlRequest = try URLRequest(url: url("/drain"), method: .post, headers: [.contentEncoding(encoding)])
            urlRequest.httpBody = body
            return urlRequest
        }
        for interceptor in [
            DeflateRequestCompressor(), .deflateCompressor(duplicateHeaderBehavior: .error),
        ] as [DeflateRequestCompressor] {
            let failed = await session.request(try request(encoding: "br"), interceptor: interceptor)
                .serializingData().response
            XCTAssertNotNil(
                failed.error?.underlyingError as? DeflateRequestCompressor.DuplicateHeaderError,
                String(describing: failed.error))
            XCTAssertTrue(failed.error?.isRequestAdaptationError == true)
            XCTAssertNil(failed.response, "nothing was sent")
        }
        let gzipFailed = await session.request(
            try request(encoding: "br"), interceptor: .gzipCompressor
        ).serializingData().response
        XCTAssertNotNil(gzipFailed.error?.underlyingError as? GzipRequestCompressor.DuplicateHeaderError)

        let replaced = try await drained(
            session.request(
                try request(encoding: "br"),
                interceptor: .deflateCompressor(duplicateHeaderBehavior: .replace)))
        XCTAssertEqual(replaced.contentEncoding, "deflate")
        XCTAssertEqual(replaced.crc32, DrainRoute.checksum(body))

        // Skipped: the body goes as it is, under the header the caller set, which the server cannot decode.
        let skipped = await session.request(
            try request(encoding: "gzip"),
            interceptor: .deflateCompressor(duplicateHeaderBehavior: .skip)
        ).serializingData().response
        XCTAssertEqual(skipped.response?.statusCode, 415)
    }

    func testShouldCompressBodyDataDecidesForBodiesInMemory() async throws {
        let small = Data("tiny".utf8)
        let large = Self.text(count: 50_000)
        let compressor = DeflateRequestCompressor(shouldCompressBodyData: { $0.count > 1024 })
        for (body, compressed) in [(small, false), (large, true)] {
            var urlRequest = try URLRequest(url: url("/drain"), method: .post)
            urlRequest.httpBody = body
            let result = try await drained(session.request(urlRequest, interceptor: compressor))
            XCTAssertEqual(result.contentEncoding, compressed ? "deflate" : nil)
            XCTAssertEqual(result.crc32, DrainRoute.checksum(body))
            let uploaded = try await drained(session.upload(body, to: url("/drain"), interceptor: compressor))
            XCTAssertEqual(uploaded.contentEncoding, compressed ? "deflate" : nil, "an upload of data is asked too")
            XCTAssertEqual(uploaded.crc32, DrainRoute.checksum(body))
        }
    }

    func testARequestWithoutABodyIsLeftAlone() async throws {
        let echo = try json(
            try await session.request(url("/get"), interceptor: .gzipCompressor).serializingData().value)
        XCTAssertNil((echo["headers"] as? [String: String])?["Content-Encoding"])
    }

    // MARK: - Uploads, compressed as they stream

    func testAFileUploadIsCompressedAsItStreamsWithChunkedTransferEncoding() async throws {
        let directory = try TemporaryDirectory()
        let payload = Self.text(count: 3_000_000) + patternedData(count: 300_001)
        let fileURL = try directory.file("payload.txt", contents: payload)
        for (interceptor, coding) in [
            (GzipRequestCompressor() as any RequestInterceptor, "gzip"), (DeflateRequestCompressor(), "deflate"),
        ] {
            let progress = Recorder<Int64>()
            let progressQueue = DispatchQueue(label: "upload progress")
            let request = session.upload(fileURL, to: url("/drain"), method: .put, interceptor: interceptor)
                .uploadProgress(queue: progressQueue) { progress.append($0.completedUnitCount) }
            let result = try await drained(request)
            // Every update was handed to the queue before the body was sent; the queue's turn is the barrier.
            progressQueue.sync {}
            XCTAssertEqual(
                result,
                Drained(
                    bytes: payload.count, crc32: DrainRoute.checksum(payload), method: "PUT",
                    encodedBytes: result.encodedBytes, contentEncoding: coding, contentLength: nil))
            XCTAssertLessThan(try XCTUnwrap(result.encodedBytes), payload.count / 2)
            XCTAssertEqual(
                progress.values.last, Int64(try XCTUnwrap(result.encodedBytes)), "progress counts bytes sent")
        }
    }

    func testAMultipartFormAndAStreamAreCompressedAsTheyStream() async throws {
        let directory = try TemporaryDirectory()
        let fileURL = try directory.file("part.txt", contents: Self.text(count: 1_500_000))
        func form(_ form: MultipartFormData) {
            form.append(Data("value".utf8), withName: "field")
            form.append(fileURL, withName: "file")
        }
        // The same form, plain and compressed (above the threshold, so encoded to a file): as many bytes arrive.
        let plain = try await drained(
            session.upload(multipartFormData: form, to: url("/drain"), usingThreshold: 1024))
        let compressed = try await drained(
            session.upload(
                multipartFormData: { form($0) }, to: url("/drain"), usingThreshold: 1024,
                interceptor: .deflateCompressor))
        XCTAssertEqual(compressed.contentEncoding, "deflate")
        XCTAssertEqual(compressed.bytes, plain.bytes)
        XCTAssertLessThan(try XCTUnwrap(compressed.encodedBytes), plain.bytes / 2)

        let payload = Self.text(count: 800_000)
        let streamed = try await drained(
            session.upload(InputStream(data: payload), to: url("/drain"), interceptor: .gzipCompressor))
        XCTAssertEqual(streamed.contentEncoding, "gzip")
        XCTAssertEqual(streamed.crc32, DrainRoute.checksum(payload))
        XCTAssertNil(streamed.contentLength)
    }

    func testAFileUploadRedirectedWith307IsCompressedAgainForTheNextHop() async throws {
        let directory = try TemporaryDirectory()
        let payload = Self.text(count: 400_000)
        let fileURL = try directory.file("payload.txt", contents: payload)
        let target =
            "/redirect-to?status_code=307&url=" + url("/drain").addingPercentEncoding(
                withAllowedCharacters: .alphanumerics)!
        let result = try await drained(session.upload(fileURL, to: url(target), interceptor: .deflateCompressor))
        XCTAssertEqual(result.contentEncoding, "deflate")
        XCTAssertEqual(result.crc32, DrainRoute.checksum(payload))
    }

    // MARK: - The compressing reader

    func testTheCompressingReaderYieldsAStreamThatDecodesWhateverTheChunkSizes() throws {
        for (payload, chunk) in [
            (Data(), 1), (Data("a".utf8), 1), (Self.text(count: 300_000), 7), (patternedData(count: 200_000), 100_000),
        ] {
            for format in [Deflater.Format.zlib, .gzip] {
                let reader = try CompressingChunkReader(source: DataChunkReader(data: payload), format: format)
                var compressed = Data()
                while true {
                    let piece = try reader.read(upTo: chunk)
                    XCTAssertLessThanOrEqual(piece.count, chunk)
                    if piece.isEmpty { break }
                    compressed.append(piece)
                }
                reader.close()
                XCTAssertEqual(try Self.inflate(compressed, format: format), payload, "\(format), chunk \(chunk)")
                XCTAssertEqual(compressed, try Deflater.compress(payload, format: format), "one stream, one result")
            }
        }
    }

    func testAFailingSourceFailsTheReader() throws {
        struct Broken: Error {}
        final class BrokenReader: BodyChunkReader {
            func read(upTo maxLength: Int) throws -> Data { throw Broken() }
            func close() {}
        }
        let reader = try CompressingChunkReader(source: BrokenReader(), format: .gzip)
        XCTAssertThrowsError(try reader.read(upTo: 1024)) { XCTAssertTrue($0 is Broken) }
    }

    /// Decodes with the test server's inflater, which `/drain` uses.
    private static func inflate(_ data: Data, format: Deflater.Format) throws -> Data {
        let inflater = try XCTUnwrap(Zlib.Inflater(format: format == .gzip ? .gzip : .zlib))
        let decoded = try XCTUnwrap(inflater.inflate(data))
        XCTAssertTrue(inflater.ended)
        return decoded
    }
}
