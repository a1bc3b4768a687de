import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationXML)
import FoundationXML
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Serializers through real requests to the test server.
final class SerializerEndToEndTests: ServerTestCase {
    struct Slideshow: Decodable, Sendable {
        struct Show: Decodable, Sendable {
            struct Slide: Decodable, Sendable { let title: String; let items: [String]? }
            let author: String
            let slides: [Slide]
        }
        let slideshow: Show
    }

    /// A request whose body comes straight back with the given status and content type.
    func echo(_ body: Data, contentType: String, status: Int = 200) -> DataRequest {
        var request = URLRequest(
            url: server.url(
                "/echo?status=\(status)&content_type=\(contentType.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"
            ))
        request.httpMethod = "POST"
        request.httpBody = body
        return session.request(request)
    }

    func testResponseJSONHandler() async {
        let response = await withCheckedContinuation {
            (continuation: CheckedContinuation<Handed<AFDataResponse<Any>>, Never>) in
            session.request(url("/json")).responseJSON(queue: .global()) {
                continuation.resume(returning: Handed(value: $0))
            }
        }.value
        let slideshow = (response.value as? [String: Any])?["slideshow"] as? [String: Any]
        XCTAssertEqual(slideshow?["author"] as? String, "Yours Truly")
    }

    func testDecodableThroughHandlerAndAsync() async throws {
        let show = try await session.request(url("/json")).serializingDecodable(Slideshow.self).value
        XCTAssertEqual(show.slideshow.slides.count, 2)
        let handled: AFDataResponse<Slideshow> = await withCheckedContinuation { continuation in
            session.request(url("/json")).responseDecodable(of: Slideshow.self, queue: .global()) {
                continuation.resume(returning: $0)
            }
        }
        XCTAssertEqual(handled.value?.slideshow.author, "Yours Truly")
    }

    func testDecodableEmptyFor204AndHEAD() async throws {
        let noContent = try await session.request(url("/status/204")).serializingDecodable(Empty.self).value
        XCTAssertEqual(noContent, Empty.value)
        let head = try await session.request(url("/get"), method: .head).serializingDecodable(Empty.self).value
        XCTAssertEqual(head, Empty.value)
        let notEmpty = await session.request(url("/status/204")).serializingDecodable(Slideshow.self).response
        guard case .responseSerializationFailed(.invalidEmptyResponse) = notEmpty.error else {
            return XCTFail("\(String(describing: notEmpty.error))")
        }
    }

    func testFourMegabyteJSONBodyDecodes() async throws {
        struct Item: Codable, Sendable { let id: Int; let name: String; let tags: [String] }
        let items = (0..<52_000).map {
            Item(id: $0, name: "flower number \($0)", tags: ["bluebonnet", "texas", "spring"])
        }
        let body = try JSONEncoder().encode(items)
        XCTAssertGreaterThan(body.count, 4_000_000)
        let decoded = try await echo(body, contentType: "application/json").serializingDecodable([Item].self).value
        XCTAssertEqual(decoded.count, 52_000)
        XCTAssertEqual(decoded.last?.name, "flower number 51999")
    }

    /// An XML property list cut off inside its dictionary. (A bare word would not do: it is a valid OpenStep plist.)
    static let brokenPlist = Data("<?xml version=\"1.0\"?><plist version=\"1.0\"><dict><key>a</key>".utf8)

    func testPropertyListsBothFormats() async throws {
        for format in [PropertyListSerialization.PropertyListFormat.xml, .binary] {
            let body = try PropertyListSerialization.data(
                fromPropertyList: ["state": "TX", "flowers": ["bluebonnet"]], format: format, options: 0)
            let value = try await echo(body, contentType: "application/x-plist").serializingPropertyList().value
            XCTAssertEqual((value as? [String: Any])?["state"] as? String, "TX", "\(format)")
        }
        let handled = await withCheckedContinuation {
            (continuation: CheckedContinuation<Handed<AFDataResponse<Any>>, Never>) in
            echo(Self.brokenPlist, contentType: "application/x-plist").responsePropertyList(queue: .global()) {
                continuation.resume(returning: Handed(value: $0))
            }
        }.value
        guard case .responseSerializationFailed(.propertyListSerializationFailed) = handled.error else {
            return XCTFail("\(String(describing: handled.error))")
        }
        XCTAssertEqual(handled.data, Self.brokenPlist)
    }

    func testXMLDocumentsAndMalformedXML() async throws {
        let document = try await session.request(url("/xml")).serializingXML().value
        XCTAssertEqual(document.rootElement()?.name, "slideshow")
        XCTAssertEqual(document.rootElement()?.elements(forName: "slide").count, 2)
        let malformed = await withCheckedContinuation {
            (continuation: CheckedContinuation<Handed<AFDataResponse<XMLDocument>>, Never>) in
            echo(Data("<slideshow><slide>".utf8), contentType: "application/xml").responseXML(queue: .global()) {
                continuation.resume(returning: Handed(value: $0))
            }
        }.value
        guard case .responseSerializationFailed(.xmlSerializationFailed) = malformed.error else {
            return XCTFail("\(String(describing: malformed.error))")
        }
    }

    func testUnacceptableContentTypeKeepsTheResponseAndDataAndDoesNotParse() async {
        let strict = JSONResponseSerializer(
            acceptableContentTypes: JSONResponseSerializer.defaultAcceptableContentTypes)
        let response = await session.request(url("/html")).serializingResponse(using: strict).response
        guard case .responseValidationFailed(.unacceptableContentType(_, "text/html")) = response.error else {
            return XCTFail("\(String(describing: response.error))")
        }
        XCTAssertEqual(response.response?.statusCode, 200)
        XCTAssertGreaterThan(response.data?.count ?? 0, 100)
        let accepted = await session.request(url("/json")).serializingResponse(using: strict).response
        XCTAssertNil(accepted.error)
    }

    func testCompoundOverTheNetwork() async throws {
        let compound = CompoundResponseSerializer([JSONResponseSerializer(), StringResponseSerializer()])
        let json = try await session.request(url("/json")).serializingResponse(using: compound).value
        XCTAssertNotNil(json as? [String: Any])
        let html = try await session.request(url("/html")).serializingResponse(using: compound).value
        XCTAssertTrue((html as? String)?.contains("Moby-Dick") == true)
    }

    func testStringCharsetFromTheServer() async throws {
        let utf16 = "Grüße 🌼".data(using: .utf16LittleEndian)!
        let text = try await echo(utf16, contentType: "text/plain; charset=utf-16le").serializingString().value
        XCTAssertEqual(text, "Grüße 🌼")
    }

    func testGoogleXSSIPrefixIsStrippedBeforeDecoding() async throws {
        struct Payload: Decodable, Sendable { let ok: Bool }
        let value = try await echo(Data(")]}',\n{\"ok\":true}".utf8), contentType: "application/json")
            .serializingDecodable(Payload.self, dataPreprocessor: GoogleXSSIPreprocessor()).value
        XCTAssertTrue(value.ok)
    }
}
