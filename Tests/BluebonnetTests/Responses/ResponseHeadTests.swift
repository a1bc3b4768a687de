@_spi(Transport) @testable import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The response head is made into an `HTTPURLResponse` only when something reads one, once, and every reader gets
/// that same object with what the server sent.
final class ResponseHeadTests: ServerTestCase {
    private func head<Success, Failure>(of response: DataResponse<Success, Failure>) throws -> ResponseHead {
        guard case let .head(head) = try XCTUnwrap(response.source) else {
            throw XCTSkip("the response was not received from the engine")
        }
        return head
    }

    func testABodyReadAloneNeverMakesAnHTTPURLResponse() async throws {
        for serialized in [
            await session.request(url("/json")).serializingData().response.map { _ in () },
            await session.request(url("/json")).serializingString().response.map { _ in () },
            await session.request(url("/json")).serializingDecodable(Empty.self).response.map { _ in () },
        ] {
            XCTAssertNotNil(serialized.value)
            XCTAssertFalse(try head(of: serialized).isMade, "serializing the body made an HTTPURLResponse")
        }
        // An optional `SerializedObject` whose value is `nil` (the body `null`) is a success from the head too.
        let null = await session.request(url("/base64/bnVsbA==")).serializingDecodable(String?.self).response
        XCTAssertEqual(try XCTUnwrap(null.value), nil)
        XCTAssertFalse(try head(of: null).isMade, "serializing an optional made an HTTPURLResponse")
    }

    func testTheResponseIsMadeOnceAndSharedByEveryReader() async throws {
        let request = session.request(url("/response-headers?Zeta=1&X-Many=a&X-Many=b"))
        let response = await request.serializingData().response
        let head = try head(of: response)
        let made = try XCTUnwrap(response.response)
        XCTAssertTrue(head.isMade)
        XCTAssertTrue(response.response === made, "a second read made another response")
        XCTAssertTrue(request.response === made, "the request and its response disagree")
        XCTAssertTrue(response.taskMetrics?.transactionMetrics.last?.response === made)
        XCTAssertEqual(made.statusCode, 200)
        XCTAssertEqual(made.value(forHTTPHeaderField: "x-many"), "a, b")
        XCTAssertEqual(made.af.fields.filter { $0.name == "X-Many" }.map(\.value), ["a", "b"])
        XCTAssertEqual(response.map { $0.count }.response, made, "a mapped response has the same response")
    }

    func testAHeadAnswersFieldsAsTheResponseWould() throws {
        let fields = [
            (name: "Content-Type", value: "text/plain; charset=utf-8"), (name: "set-cookie", value: "a=1"),
            (name: "Set-Cookie", value: "b=2"), (name: "X-Émoji", value: "✓"),
        ]
        let head = ResponseHead(
            url: URL(string: "http://example.com/a")!, statusCode: 201, httpVersion: "HTTP/1.1", fields: fields)
        for name in ["content-type", "CONTENT-TYPE", "Set-Cookie", "x-émoji", "Missing"] {
            XCTAssertEqual(head.value(for: name), head.httpResponse.value(forHTTPHeaderField: name), name)
        }
        let made = ResponseHead(head.httpResponse)
        XCTAssertTrue(made.isMade)
        XCTAssertTrue(made.httpResponse === head.httpResponse)
        XCTAssertEqual(made.statusCode, 201)
    }

    func testTheBuiltInSerializersJudgeAHeadAsTheyJudgeAResponse() throws {
        let fields = [(name: "Content-Type", value: "text/html")]
        let url = URL(string: "http://example.com/a")!
        for status in [200, 204, 404] {
            let head = ResponseHead(url: url, statusCode: status, httpVersion: "HTTP/1.1", fields: fields)
            for data in [Data(), Data("<p>".utf8)] {
                let serializer = DataResponseSerializer(
                    acceptableContentTypes: ["application/json"], acceptableStatusCodes: IndexSet(200..<300))
                func outcome(_ serialize: () throws -> Data) -> String {
                    do { return "success \(try serialize())" } catch { return "failure \(error)" }
                }
                XCTAssertEqual(
                    outcome { try serializer.serialize(request: nil, source: .head(head), data: data, error: nil) },
                    outcome {
                        try serializer.serialize(request: nil, response: head.httpResponse, data: data, error: nil)
                    },
                    "\(status) \(data)")
            }
        }
    }

    /// Repeated names are joined under their first spelling whichever way the fields are joined: pairwise for a head
    /// of real size, through lowercased names past `fieldsComparedPairwise`, so a hostile head's cost stays linear.
    func testRepeatedFieldsJoinUnderTheirFirstSpellingInHeadsOfEverySize() {
        let limit = OrderedHTTPURLResponse.fieldsComparedPairwise
        for count in [0, 1, 5, limit, limit + 1, 4 * limit] {
            var fields: [(name: String, value: String)] = []
            for index in 0..<count {
                switch index % 4 {
                case 0: fields.append((name: "X-Field-\(index)", value: "\(index)"))
                case 1: fields.append((name: "Set-Cookie", value: "c\(index)=1"))
                case 2: fields.append((name: "set-COOKIE", value: "c\(index)=2"))
                default: fields.append((name: "x-field-\(index - 3)", value: "again"))
                }
            }
            // What the join must be, from its definition.
            var expected: [String: String] = [:]
            var spelling: [String: String] = [:]
            for (name, value) in fields {
                let key = spelling[name.lowercased()] ?? name
                spelling[name.lowercased()] = key
                expected[key] = expected[key].map { "\($0), \(value)" } ?? value
            }
            XCTAssertEqual(OrderedHTTPURLResponse.joined(fields), expected, "\(count) fields")
            let made = OrderedHTTPURLResponse(
                url: URL(string: "http://example.com/")!, statusCode: 200, httpVersion: "HTTP/1.1",
                orderedFields: fields)
            XCTAssertEqual(made.allHeaderFields.count, expected.count, "\(count) fields")
            if count > 2 {
                XCTAssertEqual(made.value(forHTTPHeaderField: "set-cookie"), expected["Set-Cookie"])
                XCTAssertEqual(made.af.fields.count, count, "\(count) fields: each field as received")
            }
        }
    }

    func testOnlyOneNonNegativeDecimalContentLengthDeclaresALength() {
        let url = URL(string: "http://example.com/")!
        let cases: [([String], Int64?)] = [
            (["12"], 12), (["0"], 0), (["-5"], nil), (["+5"], nil), ([" 5"], nil), (["5 "], nil), ([""], nil),
            (["0x10"], nil), (["99999999999999999999"], nil), (["5", "5"], nil), ([], nil), (["٣"], nil),
        ]
        for (values, expected) in cases {
            let head = ResponseHead(
                url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                fields: values.map { (name: "Content-Length", value: $0) })
            XCTAssertEqual(head.declaredContentLength, expected, "\(values)")
        }
    }
}
