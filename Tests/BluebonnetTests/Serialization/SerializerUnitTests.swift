import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationXML)
import FoundationXML
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Serializers called directly, with no network.
final class SerializerUnitTests: XCTestCase {
    let ok = Fixtures.response(contentType: "application/json")

    // MARK: A single space

    struct Named: Decodable, Equatable { let name: String }

    func testASingleSpaceIsEmptyForDecodableWithAJSONDecoder() throws {
        let blank = Data(" ".utf8)
        let empty = try DecodableResponseSerializer<Empty>(emptyResponseCodes: [200])
            .serialize(request: Fixtures.request(), response: ok, data: blank, error: nil)
        XCTAssertEqual(empty, Empty.value)
        XCTAssertThrowsError(
            try DecodableResponseSerializer<Named>().serialize(
                request: Fixtures.request(), response: ok, data: blank, error: nil)
        ) {
            guard case .responseSerializationFailed(.inputDataNilOrZeroLength)? = $0.asAFError else {
                return XCTFail("\($0)")
            }
        }
        let noContent = try DecodableResponseSerializer<Empty>().serialize(
            request: Fixtures.request(), response: Fixtures.response(status: 204),
            data: blank, error: nil)
        XCTAssertEqual(noContent, Empty.value)
    }

    func testASingleSpaceIsABodyForOtherDecoders() {
        // Only JSON reads a lone space as nothing; a decoder of another format is handed the byte.
        struct SpaceDecoder: DataDecoder {
            func decode<D: Decodable>(_ type: D.Type, from data: Data) throws -> D {
                guard data == Data(" ".utf8), let value = Named(name: "space") as? D else {
                    throw CocoaError(.coderInvalidValue)
                }
                return value
            }
        }
        let value = try? DecodableResponseSerializer<Named>(decoder: SpaceDecoder())
            .serialize(request: Fixtures.request(), response: ok, data: Data(" ".utf8), error: nil)
        XCTAssertEqual(value, Named(name: "space"))
    }

    // MARK: Strings

    func testStringEncodingsWithAndWithoutByteOrderMarks() throws {
        let text = "Bluebonnet — ĉu 🌼?"
        let cases: [(String.Encoding, String?, [UInt8])] = [
            (.utf8, "utf-8", []), (.utf8, nil, [0xEF, 0xBB, 0xBF]),
            (.utf16BigEndian, "utf-16be", []), (.utf16LittleEndian, "utf-16le", []),
            (.utf16BigEndian, nil, [0xFE, 0xFF]), (.utf16LittleEndian, nil, [0xFF, 0xFE]),
            (.utf32BigEndian, "utf-32be", []), (.utf32LittleEndian, "utf-32le", []),
            (.utf32LittleEndian, nil, [0xFF, 0xFE, 0x00, 0x00]),
        ]
        for (encoding, charset, bom) in cases {
            let body = Data(bom) + text.data(using: encoding)!
            let response = Fixtures.response(contentType: charset.map { "text/plain; charset=\($0)" } ?? "text/plain")
            let decoded = try StringResponseSerializer().serialize(
                request: nil, response: response, data: body, error: nil)
            XCTAssertEqual(decoded, text, "\(encoding) charset=\(charset ?? "none") bom=\(bom)")
        }
    }

    func testExplicitEncodingBeatsCharsetAndCharsetBeatsLatin1() throws {
        let body = "é".data(using: .utf8)!
        let utf8Response = Fixtures.response(contentType: "text/plain; charset=UTF-8")
        XCTAssertEqual(
            try StringResponseSerializer().serialize(request: nil, response: utf8Response, data: body, error: nil), "é")
        XCTAssertEqual(
            try StringResponseSerializer(encoding: .isoLatin1).serialize(
                request: nil, response: utf8Response, data: body, error: nil), "Ã©")
        XCTAssertEqual(
            try StringResponseSerializer().serialize(
                request: nil, response: Fixtures.response(contentType: "text/plain"), data: body, error: nil), "Ã©")
        XCTAssertThrowsError(
            try StringResponseSerializer(encoding: .utf8).serialize(
                request: nil, response: utf8Response, data: Data([0xC3]), error: nil)
        ) {
            XCTAssertEqual($0.asAFError?.failedStringEncoding, .utf8)
        }
    }

    // MARK: JSON

    func testJSONFragmentsAreAllowedByDefault() throws {
        XCTAssertEqual(
            try JSONResponseSerializer().serialize(request: nil, response: ok, data: Data("42".utf8), error: nil)
                as? Int, 42)
        XCTAssertEqual(
            try JSONResponseSerializer().serialize(request: nil, response: ok, data: Data("\"s\"".utf8), error: nil)
                as? String, "s")
        XCTAssertThrowsError(
            try JSONResponseSerializer(options: []).serialize(
                request: nil, response: ok, data: Data("42".utf8), error: nil))
    }

    func testInvalidJSONFailsWithJSONSerializationFailed() {
        XCTAssertThrowsError(
            try JSONResponseSerializer().serialize(request: nil, response: ok, data: Data("{nope".utf8), error: nil)
        ) { error in
            guard case .responseSerializationFailed(.jsonSerializationFailed) = error.asAFError else {
                return XCTFail("\(error)")
            }
            XCTAssertNotNil(error.asAFError?.underlyingError)
        }
    }

    func testNullValuedKeysAreRemovedRecursivelyWhenAsked() throws {
        let body = Data(#"{"a":null,"b":{"c":null,"d":1},"e":[{"f":null,"g":2},null]}"#.utf8)
        let kept =
            try JSONResponseSerializer().serialize(request: nil, response: ok, data: body, error: nil) as? [String: Any]
        XCTAssertTrue(kept?["a"] is NSNull)
        let cleaned = try XCTUnwrap(
            try JSONResponseSerializer(removesKeysWithNullValues: true).serialize(
                request: nil, response: ok, data: body, error: nil) as? [String: Any])
        XCTAssertNil(cleaned["a"])
        XCTAssertEqual((cleaned["b"] as? [String: Any])?.keys.sorted(), ["d"])
        let array = try XCTUnwrap(cleaned["e"] as? [Any])
        XCTAssertEqual((array[0] as? [String: Any])?.keys.sorted(), ["g"])
        XCTAssertTrue(array[1] is NSNull, "nulls inside arrays stay")
    }

    func testASingleSpaceIsAnEmptyJSONBody() throws {
        let noContent = Fixtures.response(status: 204)
        XCTAssertTrue(
            try JSONResponseSerializer().serialize(request: nil, response: noContent, data: Data(" ".utf8), error: nil)
                is NSNull)
        XCTAssertThrowsError(
            try JSONResponseSerializer().serialize(request: nil, response: ok, data: Data(" ".utf8), error: nil)
        ) { error in
            guard case .responseSerializationFailed(.inputDataNilOrZeroLength) = error.asAFError else {
                return XCTFail("\(error)")
            }
        }
    }

    // MARK: Decodable

    struct Flower: Decodable, Equatable {
        let commonName: String
        let bloomedAt: Date
    }

    func testDecodableUsesTheDecodersStrategies() throws {
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.dateDecodingStrategy = .iso8601
        let body = Data(#"{"common_name":"bluebonnet","bloomed_at":"2026-03-21T08:00:00Z"}"#.utf8)
        let flower = try DecodableResponseSerializer<Flower>(decoder: decoder).serialize(
            request: nil, response: ok, data: body, error: nil)
        XCTAssertEqual(flower, Flower(commonName: "bluebonnet", bloomedAt: Date(timeIntervalSince1970: 1_774_080_000)))
        XCTAssertThrowsError(
            try DecodableResponseSerializer<Flower>().serialize(request: nil, response: ok, data: body, error: nil)
        ) { error in
            guard case .responseSerializationFailed(.decodingFailed(let underlying)) = error.asAFError else {
                return XCTFail("\(error)")
            }
            XCTAssertTrue(underlying is DecodingError)
        }
    }

    func testDecodableWithAPropertyListDecoder() throws {
        struct Settings: Codable, Equatable { let volume: Int; let name: String }
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        let body = try encoder.encode(Settings(volume: 7, name: "loud"))
        let decoded = try DecodableResponseSerializer<Settings>(decoder: PropertyListDecoder()).serialize(
            request: nil, response: ok, data: body, error: nil)
        XCTAssertEqual(decoded, Settings(volume: 7, name: "loud"))
    }

    // MARK: Property lists and XML

    func testXMLAndBinaryPropertyListsParse() throws {
        for format in [PropertyListSerialization.PropertyListFormat.xml, .binary] {
            let body = try PropertyListSerialization.data(
                fromPropertyList: ["name": "Texas", "count": 3], format: format, options: 0)
            let parsed = try XCTUnwrap(
                try PropertyListResponseSerializer().serialize(request: nil, response: ok, data: body, error: nil)
                    as? [String: Any])
            XCTAssertEqual(parsed["name"] as? String, "Texas", "\(format)")
            XCTAssertEqual(parsed["count"] as? Int, 3, "\(format)")
        }
        XCTAssertThrowsError(
            try PropertyListResponseSerializer().serialize(
                request: nil, response: ok, data: Data("not a plist".utf8), error: nil)
        ) { error in
            guard case .responseSerializationFailed(.propertyListSerializationFailed) = error.asAFError else {
                return XCTFail("\(error)")
            }
        }
    }

    func testWellFormedXMLBecomesADocumentAndMalformedXMLIsRefused() throws {
        let document = try XMLResponseSerializer().serialize(
            request: nil, response: ok, data: Data("<a><b id=\"1\">x</b></a>".utf8), error: nil)
        XCTAssertEqual(document.rootElement()?.name, "a")
        XCTAssertEqual(document.rootElement()?.elements(forName: "b").first?.stringValue, "x")
        for malformed in ["<a><b>", "<a></b>", "not xml", "<a>&undefined;</a>"] {
            XCTAssertThrowsError(
                try XMLResponseSerializer().serialize(
                    request: nil, response: ok, data: Data(malformed.utf8), error: nil), malformed
            ) { error in
                guard case .responseSerializationFailed(.xmlSerializationFailed) = error.asAFError else {
                    return XCTFail("\(malformed): \(error)")
                }
            }
        }
    }

    func testXMLParserSerializerHandsBackAConfiguredParser() throws {
        final class Counter: NSObject, XMLParserDelegate {
            var elements = 0
            func parser(
                _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?,
                qualifiedName qName: String?, attributes attributeDict: [String: String] = [:]
            ) {
                elements += 1
            }
        }
        let parser = try XMLParserResponseSerializer(shouldProcessNamespaces: true).serialize(
            request: nil, response: ok, data: Data("<a><b/><c/></a>".utf8), error: nil)
        XCTAssertTrue(parser.shouldProcessNamespaces)
        XCTAssertFalse(parser.shouldResolveExternalEntities)
        let counter = Counter()
        parser.delegate = counter
        XCTAssertTrue(parser.parse())
        XCTAssertEqual(counter.elements, 3)
    }

    // MARK: Compound

    func testCompoundReturnsTheFirstSuccessInOrder() throws {
        let jsonFirst = CompoundResponseSerializer([JSONResponseSerializer(), StringResponseSerializer()])
        XCTAssertTrue(
            try jsonFirst.serialize(request: nil, response: ok, data: Data("{\"a\":1}".utf8), error: nil)
                is [String: Any])
        XCTAssertEqual(
            try jsonFirst.serialize(request: nil, response: ok, data: Data("plain".utf8), error: nil) as? String,
            "plain")
        let stringFirst = CompoundResponseSerializer([StringResponseSerializer(), JSONResponseSerializer()])
        XCTAssertEqual(
            try stringFirst.serialize(request: nil, response: ok, data: Data("{\"a\":1}".utf8), error: nil) as? String,
            "{\"a\":1}")
    }

    func testCompoundKeepsEveryErrorWithTheLastAsUnderlying() {
        let compound = CompoundResponseSerializer([JSONResponseSerializer(), PropertyListResponseSerializer()])
        XCTAssertThrowsError(try compound.serialize(request: nil, response: ok, data: Data("<html>".utf8), error: nil))
        { error in
            guard case .responseSerializationFailed(.compoundSerializationFailed(let errors)) = error.asAFError else {
                return XCTFail("\(error)")
            }
            XCTAssertEqual(errors.count, 2)
            guard case .responseSerializationFailed(.jsonSerializationFailed) = errors[0],
                case .responseSerializationFailed(.propertyListSerializationFailed) = errors[1]
            else { return XCTFail("\(errors)") }
            guard
                case .responseSerializationFailed(.propertyListSerializationFailed) = error.asAFError?.underlyingError
                    as? AFError
            else {
                return XCTFail("underlying: \(String(describing: error.asAFError?.underlyingError))")
            }
        }
    }

    // MARK: Acceptable content types and status codes

    func testAcceptableContentTypesAreCheckedBeforeParsing() {
        let html = Fixtures.response(contentType: "text/html; charset=utf-8")
        let strict = JSONResponseSerializer(
            acceptableContentTypes: JSONResponseSerializer.defaultAcceptableContentTypes)
        XCTAssertThrowsError(try strict.serialize(request: nil, response: html, data: Data("{}".utf8), error: nil)) {
            error in
            XCTAssertEqual(error.asAFError?.responseContentType, "text/html")
            XCTAssertEqual(
                error.asAFError?.acceptableContentTypes, ["application/json", "text/javascript", "text/json"])
        }
        let wildcard = StringResponseSerializer(acceptableContentTypes: ["text/*"])
        XCTAssertEqual(try wildcard.serialize(request: nil, response: html, data: Data("hi".utf8), error: nil), "hi")
        XCTAssertThrowsError(
            try wildcard.serialize(request: nil, response: Fixtures.response(), data: Data("hi".utf8), error: nil)
        ) { error in
            guard case .responseValidationFailed(.missingContentType) = error.asAFError else {
                return XCTFail("\(error)")
            }
        }
        XCTAssertEqual(XMLResponseSerializer.defaultAcceptableContentTypes, ["application/xml", "text/xml"])
        XCTAssertEqual(PropertyListResponseSerializer.defaultAcceptableContentTypes, ["application/x-plist"])
    }

    func testAcceptableStatusCodesAreCheckedBeforeParsing() {
        let serializer = DataResponseSerializer(acceptableStatusCodes: IndexSet(integersIn: 200..<300))
        XCTAssertThrowsError(
            try serializer.serialize(
                request: nil, response: Fixtures.response(status: 404), data: Data("x".utf8), error: nil)
        ) {
            XCTAssertEqual($0.asAFError?.responseCode, 404)
        }
    }

    func testARequestErrorIsRethrownBeforeAnyCheck() {
        let serializer = JSONResponseSerializer(acceptableContentTypes: ["application/json"])
        XCTAssertThrowsError(
            try serializer.serialize(request: nil, response: nil, data: nil, error: AFError.explicitlyCancelled)
        ) {
            XCTAssertEqual($0.asAFError?.isExplicitlyCancelledError, true)
        }
    }

    // MARK: Downloads

    func testDownloadVariantsReadTheFile() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("bluebonnet-\(UUID().uuidString).json")
        try Data("{\"a\":[1,2]}".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let json =
            try JSONResponseSerializer().serializeDownload(request: nil, response: ok, fileURL: file, error: nil)
            as? [String: [Int]]
        XCTAssertEqual(json, ["a": [1, 2]])
        let compound = try CompoundResponseSerializer([JSONResponseSerializer()]).serializeDownload(
            request: nil, response: ok, fileURL: file, error: nil)
        XCTAssertNotNil(compound as? [String: Any])
        XCTAssertThrowsError(
            try StringResponseSerializer().serializeDownload(request: nil, response: ok, fileURL: nil, error: nil)
        ) { error in
            guard case .responseSerializationFailed(.inputFileNil) = error.asAFError else { return XCTFail("\(error)") }
        }
        let missing = file.appendingPathExtension("missing")
        XCTAssertThrowsError(
            try DataResponseSerializer().serializeDownload(request: nil, response: ok, fileURL: missing, error: nil)
        ) { error in
            guard case .responseSerializationFailed(.inputFileReadFailed(at: missing)) = error.asAFError else {
                return XCTFail("\(error)")
            }
        }
    }
}
