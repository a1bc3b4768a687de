import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class ResponseSerializerTests: ServerTestCase {
    func testStringUsesTheResponseCharset() async throws {
        let text = try await session.request(url("/encoding/utf8")).serializingString().value
        XCTAssertTrue(text.contains("いろはにほへとちりぬるを"))
    }

    func testStringFallsBackToLatin1WithoutCharset() async throws {
        // application/octet-stream has no charset: every byte maps to one ISO-8859-1 character.
        let bytes = try await session.request(url("/bytes/64?seed=3")).serializingData().value
        let text = try await session.request(url("/bytes/64?seed=3")).serializingString().value
        XCTAssertEqual(text.unicodeScalars.count, 64)
        XCTAssertEqual(text, String(data: bytes, encoding: .isoLatin1))
    }

    func testInvalidBytesForTheCharsetFailWithStringSerializationFailed() async {
        // /base64/6Q is the single byte 0xE9, served as UTF-8, where it is not valid.
        let response = await session.request(url("/base64/6Q")).serializingString().response
        XCTAssertEqual(response.error?.failedStringEncoding, .utf8, "\(String(describing: response.error))")
        XCTAssertEqual(response.data, Data([0xE9]))
    }

    func testExplicitEncodingWinsOverTheCharset() async throws {
        let latin = try await session.request(url("/encoding/utf8")).serializingString(encoding: .isoLatin1).value
        XCTAssertFalse(latin.contains("いろは"))
    }

    func testEmpty204And205AndHEADAreEmptySuccesses() async throws {
        for status in [204, 205] {
            let data = await session.request(url("/status/\(status)")).serializingData().response
            XCTAssertEqual(data.value, Data(), "\(status)")
            let string = await session.request(url("/status/\(status)")).serializingString().response
            XCTAssertEqual(string.value, "", "\(status)")
        }
        let head = await session.request(url("/get"), method: .head).serializingString().response
        XCTAssertEqual(head.value, "")
    }

    func testEmpty200FailsWithInputDataNilOrZeroLength() async {
        let response = await session.request(url("/status/200")).serializingData().response
        guard case .responseSerializationFailed(.inputDataNilOrZeroLength) = response.error else {
            return XCTFail("\(String(describing: response.error))")
        }
        XCTAssertEqual(response.response?.statusCode, 200)
    }

    func testCustomEmptyResponseCodesAreHonoured() async {
        let response = await session.request(url("/status/200")).serializingData(emptyResponseCodes: [200]).response
        XCTAssertEqual(response.value, Data())
    }

    func testUnserializedResponseCarriesDataAndError() async {
        let ok = await session.request(url("/bytes/10?seed=1")).serializingResponse().response
        XCTAssertEqual(ok.value??.count, 10)
        let failed = await session.request("").serializingResponse().response
        XCTAssertNotNil(failed.error)
    }

    func testGoogleXSSIPreprocessorStripsThePrefix() throws {
        let data = Data(")]}',\n{\"a\":1}".utf8)
        XCTAssertEqual(try GoogleXSSIPreprocessor().preprocess(data), Data("{\"a\":1}".utf8))
        XCTAssertEqual(try PassthroughPreprocessor().preprocess(data), data)
    }

    func testCustomSerializerErrorsBecomeCustomSerializationFailed() async {
        struct Failing: DataResponseSerializerProtocol {
            struct Boom: Error {}
            func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws
                -> Int
            {
                throw Boom()
            }
        }
        let response = await session.request(url("/get")).serializingResponse(using: Failing()).response
        guard case .responseSerializationFailed(.customSerializationFailed(let error)) = response.error else {
            return XCTFail("\(String(describing: response.error))")
        }
        XCTAssertTrue(error is Failing.Boom)
        XCTAssertGreaterThanOrEqual(response.serializationDuration, 0)
    }

    func testResponseMapsTransformResultsAndKeepTheRest() async {
        let response = await session.request(url("/get")).serializingData().response
        let mapped = response.map(\.count)
        XCTAssertEqual(mapped.value, response.data?.count)
        XCTAssertEqual(mapped.timeline, response.timeline)
        struct Nope: Error {}
        let tried = response.tryMap { _ -> Int in throw Nope() }
        XCTAssertTrue(tried.error is Nope)
        let flat = response.flatMap { _ in Result<Int, AFError>.failure(.explicitlyCancelled) }
        XCTAssertEqual(flat.error?.isExplicitlyCancelledError, true)
        let failed = await session.request("").serializingData().response
        let remapped = failed.mapError { _ in Nope() }
        XCTAssertNotNil(remapped.error)
        let tryRemapped = failed.tryMapError { _ -> Nope in throw AFError.sessionDeinitialized }
        XCTAssertEqual((tryRemapped.error as? AFError)?.isSessionDeinitializedError, true)
    }
}
