import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class ParameterEncodingTests: XCTestCase {
    let base = URLRequest(url: URL(string: "https://example.com/path?existing=1")!)

    func testURLEncodingSortsKeysNestsAndEscapes() throws {
        let nested: [String: any Sendable] = ["c": 1, "b": [1, 2]]
        let parameters: Parameters = ["b": "x y&z", "a": nested, "t": true]
        let request = try URLEncoding.default.encode(base, with: parameters)
        XCTAssertEqual(request.url?.query, "existing=1&a%5Bb%5D%5B%5D=1&a%5Bb%5D%5B%5D=2&a%5Bc%5D=1&b=x%20y%26z&t=1")
    }

    func testURLEncodingWritesDoublesAsAlamofireDoes() throws {
        // NSNumber's description on Darwin, which Alamofire's output follows: a whole double has no ".0".
        let cases: [(any Sendable, String)] = [
            (1.0, "1"), (1.1, "1.1"), (-2.0, "-2"), (0.5, "0.5"), (1.0 / 3.0, "0.3333333333333333"),
            (123_456_789_012_345.0, "123456789012345"), (1e20, "1e%2B20"), (Float(2), "2"), (Float(0.25), "0.25"),
            (NSNumber(value: 3.0), "3"), (7, "7"), (Int64.max, "9223372036854775807"),
        ]
        for (value, expected) in cases {
            let request = try URLEncoding.queryString.encode(
                URLRequest(url: URL(string: "https://e.com/")!), with: ["n": value])
            XCTAssertEqual(request.url?.query, "n=\(expected)", "\(value)")
        }
    }

    func testURLEncodingOptions() throws {
        let parameters: Parameters = ["a": [1, 2], "t": false]
        let request = try URLEncoding(
            destination: .queryString, arrayEncoding: .indexInBrackets, boolEncoding: .literal
        )
        .encode(URLRequest(url: URL(string: "https://e.com/")!), with: parameters)
        XCTAssertEqual(request.url?.query, "a%5B0%5D=1&a%5B1%5D=2&t=false")
        let noBrackets = try URLEncoding(arrayEncoding: .noBrackets).encode(
            URLRequest(url: URL(string: "https://e.com/")!), with: ["a": [1, 2]])
        XCTAssertEqual(noBrackets.url?.query, "a=1&a=2")
    }

    func testURLEncodingKeepsQuestionMarkAndSlashInValues() throws {
        let request = try URLEncoding.queryString.encode(
            URLRequest(url: URL(string: "https://e.com/")!), with: ["p": "a/b?c"])
        XCTAssertEqual(request.url?.query, "p=a/b?c")
    }

    func testURLEncodingPutsPOSTParametersInTheBodyWithContentType() throws {
        var request = base
        request.httpMethod = "POST"
        let encoded = try URLEncoding.default.encode(request, with: ["k": "v"])
        XCTAssertEqual(encoded.httpBody, Data("k=v".utf8))
        XCTAssertEqual(
            encoded.value(forHTTPHeaderField: "Content-Type"), "application/x-www-form-urlencoded; charset=utf-8")
        XCTAssertEqual(encoded.url, base.url)
    }

    func testContentTypeIsSetOnlyWhenAbsent() throws {
        var request = base
        request.httpMethod = "POST"
        request.setValue("application/vnd.custom", forHTTPHeaderField: "Content-Type")
        XCTAssertEqual(
            try URLEncoding.default.encode(request, with: ["k": "v"]).value(forHTTPHeaderField: "Content-Type"),
            "application/vnd.custom")
        XCTAssertEqual(
            try JSONEncoding.default.encode(request, with: ["k": "v"]).value(forHTTPHeaderField: "Content-Type"),
            "application/vnd.custom")
    }

    func testJSONEncodingWritesObjectsAndTopLevelArrays() throws {
        let object = try JSONEncoding.default.encode(base, with: ["k": "v"])
        XCTAssertEqual(object.httpBody, Data("{\"k\":\"v\"}".utf8))
        let array = try JSONEncoding.default.encode(base, withJSONObject: [1, 2])
        XCTAssertEqual(array.httpBody, Data("[1,2]".utf8))
        XCTAssertEqual(array.value(forHTTPHeaderField: "Content-Type"), "application/json")
    }

    func testJSONEncodingRefusesValuesThatAreNotJSON() {
        XCTAssertThrowsError(try JSONEncoding.default.encode(base, with: ["date": Date()])) { error in
            guard case .parameterEncodingFailed(.jsonEncodingFailed) = error.asAFError else {
                return XCTFail("\(error)")
            }
        }
    }

    func testJSONParameterEncoderOptions() throws {
        struct Value: Encodable, Sendable { let b = 1; let a = 2 }
        let sorted = try JSONParameterEncoder.sortedKeys.encode(Value(), into: base)
        XCTAssertEqual(sorted.httpBody, Data("{\"a\":2,\"b\":1}".utf8))
        XCTAssertEqual(sorted.value(forHTTPHeaderField: "Content-Type"), "application/json")
    }

    func testFormParameterEncoderRefusesARootThatIsNotKeyed() {
        XCTAssertThrowsError(try URLEncodedFormParameterEncoder.default.encode([1, 2], into: base)) { error in
            guard case .parameterEncoderFailed(.encoderFailed) = error.asAFError else { return XCTFail("\(error)") }
        }
    }

    func testFormParameterEncoderWritesTheBodyForPOST() throws {
        struct Form: Encodable, Sendable { let name: String; let ok: Bool }
        var request = base
        request.httpMethod = "POST"
        let encoded = try URLEncodedFormParameterEncoder.default.encode(Form(name: "a+b", ok: true), into: request)
        XCTAssertEqual(encoded.httpBody, Data("name=a%2Bb&ok=1".utf8))
    }
}

final class URLEncodingNumberTests: XCTestCase {
    func testNSNumberBooleansUseTheBoolEncodingAndNumbersDoNot() throws {
        let literal = URLEncoding(boolEncoding: .literal)
        XCTAssertEqual(literal.queryComponents(fromKey: "b", value: NSNumber(value: true)).first?.1, "true")
        XCTAssertEqual(literal.queryComponents(fromKey: "n", value: NSNumber(value: 1)).first?.1, "1")
        XCTAssertEqual(literal.queryComponents(fromKey: "d", value: NSNumber(value: 2.5)).first?.1, "2.5")
        let parsed = try JSONSerialization.jsonObject(with: Data("{\"t\":true,\"one\":1}".utf8)) as! [String: Any]
        XCTAssertEqual(literal.queryComponents(fromKey: "t", value: parsed["t"]!).first?.1, "true")
        XCTAssertEqual(literal.queryComponents(fromKey: "one", value: parsed["one"]!).first?.1, "1")
    }
}

final class PropertyListEncodingTests: XCTestCase {
    let request = URLRequest(url: URL(string: "https://example.com/plist")!)

    func testXMLAndBinaryBodiesRoundTrip() throws {
        for (encoding, prefix) in [(PropertyListEncoding.xml, "<?xml"), (.binary, "bplist")] {
            let encoded = try encoding.encode(request, with: ["name": "Texas", "count": 3, "flowers": ["bluebonnet"]])
            let body = try XCTUnwrap(encoded.httpBody)
            XCTAssertTrue(body.starts(with: Data(prefix.utf8)), prefix)
            XCTAssertEqual(encoded.value(forHTTPHeaderField: "Content-Type"), "application/x-plist")
            let decoded = try XCTUnwrap(
                try PropertyListSerialization.propertyList(from: body, format: nil) as? [String: Any])
            XCTAssertEqual(decoded["name"] as? String, "Texas")
            XCTAssertEqual(decoded["flowers"] as? [String], ["bluebonnet"])
        }
    }

    func testValuesAPropertyListCannotHoldAreRefused() {
        struct NotAPlistValue: Sendable {}
        XCTAssertThrowsError(try PropertyListEncoding.default.encode(request, with: ["bad": NotAPlistValue()])) {
            error in
            guard case .parameterEncodingFailed(.propertyListEncodingFailed) = error.asAFError else {
                return XCTFail("\(error)")
            }
        }
    }
}

final class EncodingErrorPathTests: XCTestCase {
    let base = URLRequest(url: URL(string: "https://example.com/path")!)

    private var requestWithoutURL: URLRequest {
        var request = base
        request.url = nil
        return request
    }

    func testURLEncodingWithoutAURLFailsWithMissingURL() {
        XCTAssertThrowsError(try URLEncoding.default.encode(requestWithoutURL, with: ["a": 1])) { error in
            guard case .parameterEncodingFailed(reason: .missingURL)? = error.asAFError else {
                return XCTFail("\(error)")
            }
        }
    }

    func testFormParameterEncoderWithoutAURLFailsWithMissingRequiredComponent() {
        XCTAssertThrowsError(try URLEncodedFormParameterEncoder.default.encode(["a": "1"], into: requestWithoutURL)) {
            error in
            guard case .parameterEncoderFailed(reason: .missingRequiredComponent(.url))? = error.asAFError else {
                return XCTFail("\(error)")
            }
        }
    }

    func testNilParametersLeaveTheRequestAlone() throws {
        let encoded = try URLEncodedFormParameterEncoder.default.encode(Optional<[String: String]>.none, into: base)
        XCTAssertEqual(encoded, base)
        XCTAssertEqual(try URLEncoding.default.encode(base, with: nil), base)
    }

    private struct FailingEncoding: ParameterEncoding {
        struct Failure: Error {}
        let wrapped: Bool
        func encode(_ urlRequest: any URLRequestConvertible, with parameters: Parameters?) throws -> URLRequest {
            throw wrapped ? AFError.parameterEncodingFailed(reason: .customEncodingFailed(error: Failure())) : Failure()
        }
    }

    func testCustomEncodingErrorsReachTheResponseAndNothingIsSent() async throws {
        let session = Session()
        let unwrapped = await session.request(
            "http://127.0.0.1:1/never", parameters: ["a": 1],
            encoding: FailingEncoding(wrapped: false)
        ).serializingData().response
        guard case let .createURLRequestFailed(error)? = unwrapped.error else {
            return XCTFail("\(String(describing: unwrapped.error))")
        }
        XCTAssertTrue(error is FailingEncoding.Failure)
        XCTAssertNil(unwrapped.response)

        let wrapped = await session.request(
            "http://127.0.0.1:1/never", parameters: ["a": 1],
            encoding: FailingEncoding(wrapped: true)
        ).serializingData().response
        guard case .parameterEncodingFailed(reason: .customEncodingFailed)? = wrapped.error else {
            return XCTFail("\(String(describing: wrapped.error))")
        }
    }
}

/// The static members Alamofire's users write in parameter position: `.json`, `.urlEncodedForm`.
final class ParameterEncoderStaticMemberTests: XCTestCase {
    struct Parameters: Encodable, Sendable { let a: Int }

    func encoded(_ encoder: some ParameterEncoder, method: HTTPMethod = .post) throws -> URLRequest {
        try encoder.encode(
            Parameters(a: 1), into: URLRequest(url: URL(string: "https://example.com/p")!, method: method))
    }

    func testJSONMembers() throws {
        XCTAssertEqual(try encoded(.json).httpBody, Data(#"{"a":1}"#.utf8))
        let sorted = JSONEncoder()
        sorted.outputFormatting = .sortedKeys
        XCTAssertEqual(try encoded(.json(encoder: sorted)).headers["Content-Type"], "application/json")
    }

    func testURLEncodedFormMembers() throws {
        XCTAssertEqual(try encoded(.urlEncodedForm).httpBody, Data("a=1".utf8))
        XCTAssertEqual(try encoded(.urlEncodedForm(destination: .queryString)).url?.query, "a=1")
        XCTAssertEqual(try encoded(.urlEncodedForm, method: .get).url?.query, "a=1", "method dependent by default")
    }
}
