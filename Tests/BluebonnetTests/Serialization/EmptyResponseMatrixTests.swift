import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationXML)
import FoundationXML
#endif
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// 204, 205, a HEAD request and an empty 200, through every serializer.
final class EmptyResponseMatrixTests: XCTestCase {
    struct Named: Decodable {}

    /// Each serializer, with what it yields for an allowed empty body (or the error it throws).
    let serializers: [(name: String, serialize: (URLRequest, HTTPURLResponse) throws -> String)] = [
        (
            "data",
            {
                try
                    "\(DataResponseSerializer().serialize(request: $0, response: $1, data: Data(), error: nil).count) bytes"
            }
        ),
        (
            "string",
            { try "\"\(StringResponseSerializer().serialize(request: $0, response: $1, data: Data(), error: nil))\"" }
        ),
        (
            "json",
            {
                try
                    "\(JSONResponseSerializer().serialize(request: $0, response: $1, data: Data(), error: nil) is NSNull ? "null" : "?")"
            }
        ),
        (
            "decodable Empty",
            {
                try
                    "\(DecodableResponseSerializer<Empty>().serialize(request: $0, response: $1, data: Data(), error: nil) == Empty.value ? "Empty" : "?")"
            }
        ),
        (
            "decodable other",
            {
                _ = try DecodableResponseSerializer<Named>().serialize(
                    request: $0, response: $1, data: Data(), error: nil);
                return "?"
            }
        ),
        (
            "property list",
            {
                try
                    "\(PropertyListResponseSerializer().serialize(request: $0, response: $1, data: Data(), error: nil) is NSNull ? "null" : "?")"
            }
        ),
        (
            "xml",
            {
                try
                    "\(XMLResponseSerializer().serialize(request: $0, response: $1, data: Data(), error: nil).rootElement() == nil ? "empty document" : "?")"
            }
        ),
        (
            "xml parser",
            {
                _ = try XMLParserResponseSerializer().serialize(request: $0, response: $1, data: Data(), error: nil);
                return "parser"
            }
        ),
        (
            "image",
            {
                _ = try ImageResponseSerializer().serialize(request: $0, response: $1, data: Data(), error: nil);
                return "?"
            }
        ),
        (
            "compound",
            {
                try
                    "\(CompoundResponseSerializer([JSONResponseSerializer()]).serialize(request: $0, response: $1, data: Data(), error: nil) is NSNull ? "null" : "?")"
            }
        ),
    ]

    let expectedForAllowedEmpty: [String: String] = [
        "data": "0 bytes", "string": "\"\"", "json": "null", "decodable Empty": "Empty",
        "decodable other": "invalidEmptyResponse(Named)", "property list": "null", "xml": "empty document",
        "xml parser": "parser", "image": "invalidEmptyResponse(Image)", "compound": "null",
    ]

    func outcome(_ body: () throws -> String) -> String {
        do {
            return try body()
        } catch {
            switch error.asAFError {
            case .responseSerializationFailed(.inputDataNilOrZeroLength): return "inputDataNilOrZeroLength"
            case let .responseSerializationFailed(.invalidEmptyResponse(type)): return "invalidEmptyResponse(\(type))"
            case let .responseSerializationFailed(.compoundSerializationFailed(errors)) where errors.count == 1:
                if case .responseSerializationFailed(.inputDataNilOrZeroLength) = errors[0] {
                    return "inputDataNilOrZeroLength"
                }
                return "\(error)"
            default: return "\(error)"
            }
        }
    }

    func testAllowedEmptyBodiesFor204And205AndHEAD() {
        let cases = [
            ("204", Fixtures.request(), Fixtures.response(status: 204)),
            ("205", Fixtures.request(), Fixtures.response(status: 205)),
            ("HEAD", Fixtures.request(method: "HEAD"), Fixtures.response(status: 200)),
        ]
        for (label, request, response) in cases {
            for (name, serialize) in serializers {
                XCTAssertEqual(
                    outcome { try serialize(request, response) }, expectedForAllowedEmpty[name], "\(name) \(label)")
            }
        }
    }

    func testEmpty200FailsForEverySerializer() {
        for (name, serialize) in serializers {
            XCTAssertEqual(
                outcome { try serialize(Fixtures.request(), Fixtures.response(status: 200)) },
                "inputDataNilOrZeroLength", name)
        }
    }
}
