import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class URLEncodedFormEncoderTests: XCTestCase {
    struct Flat: Encodable { let b = "two words"; let a = 1; let c = true }
    struct Nested: Encodable {
        struct Inner: Encodable { let x = 1; let y = [2, 3] }
        let inner = Inner()
        let list = ["p", "q"]
    }
    struct Optionals: Encodable { let present: String? = "here"; let missing: String? = nil; let number: Int? = nil }
    struct Keys: Encodable { let userName = "a"; let homeURLValue = "b"; let id2Name = "c" }
    struct Stamp: Encodable { let date: Date; let data: Data }

    /// Hand-written `encode(to:)` with nested keyed and unkeyed containers, several levels deep.
    struct HandWritten: Encodable {
        enum RootKey: String, CodingKey { case root }
        enum InnerKey: String, CodingKey { case a, s }
        func encode(to encoder: any Encoder) throws {
            var root = encoder.container(keyedBy: RootKey.self)
            var list = root.nestedUnkeyedContainer(forKey: .root)
            var deeper = list.nestedUnkeyedContainer()
            try deeper.encode(1)
            try deeper.encode(2)
            var object = list.nestedContainer(keyedBy: InnerKey.self)
            var inner = object.nestedContainer(keyedBy: InnerKey.self, forKey: .a)
            try inner.encode("text", forKey: .s)
        }
    }

    class Base: Encodable {
        let one = "one"
        let two = 2
    }

    /// A subclass that encodes its superclass into the same container, and again through `superEncoder()` and
    /// `superEncoder(forKey:)`.
    final class Derived: Base {
        enum Key: String, CodingKey { case three, base }
        override func encode(to encoder: any Encoder) throws {
            try super.encode(to: encoder)
            var container = encoder.container(keyedBy: Key.self)
            try container.encode([3, 4], forKey: .three)
            try super.encode(to: container.superEncoder())
            try super.encode(to: container.superEncoder(forKey: .base))
        }
    }

    func testHandWrittenNestedContainers() throws {
        XCTAssertEqual(
            try encode(HandWritten(), URLEncodedFormEncoder(alphabetizeKeyValuePairs: false)),
            "root%5B%5D%5B%5D=1&root%5B%5D%5B%5D=2&root%5B%5D%5Ba%5D%5Bs%5D=text")
    }

    /// `superEncoder()` writes into the container's own node, as Alamofire's does (no `super[…]` key): the
    /// superclass's `one` and `two` land where they already are.
    func testSuperclassesEncodeIntoTheSameContainerAndThroughSuperEncoders() throws {
        XCTAssertEqual(
            try encode(Derived()),
            "base%5Bone%5D=one&base%5Btwo%5D=2&one=one&three%5B%5D=3&three%5B%5D=4&two=2"
        )
    }

    func encode(_ value: some Encodable, _ encoder: URLEncodedFormEncoder = URLEncodedFormEncoder()) throws -> String {
        try encoder.encode(value)
    }

    func testDefaultsSortEscapeAndUseNumericBools() throws {
        XCTAssertEqual(try encode(Flat()), "a=1&b=two%20words&c=1")
        XCTAssertEqual(
            try encode(Flat(), URLEncodedFormEncoder(alphabetizeKeyValuePairs: false)), "b=two%20words&a=1&c=1")
        XCTAssertEqual(try encode(["k": "a&b=c+d/e?f"]), "k=a%26b%3Dc%2Bd/e?f")
    }

    func testNestedObjectsAndArrays() throws {
        XCTAssertEqual(
            try encode(Nested()), "inner%5Bx%5D=1&inner%5By%5D%5B%5D=2&inner%5By%5D%5B%5D=3&list%5B%5D=p&list%5B%5D=q")
        XCTAssertEqual(
            try encode(Nested(), URLEncodedFormEncoder(keyPathEncoding: .dots)),
            "inner.x=1&inner.y%5B%5D=2&inner.y%5B%5D=3&list%5B%5D=p&list%5B%5D=q")
    }

    func testAlphabetizingKeepsArrayElementsInTheirOrder() throws {
        // Found by the httpbin interop suite: sorting `a[]=9&a[]=10` as strings reversed the array.
        XCTAssertEqual(
            try encode(["a": [9, 10, 1]], URLEncodedFormEncoder(arrayEncoding: .noBrackets)), "a=9&a=10&a=1")
        XCTAssertEqual(try encode(["z": ["b"], "a": ["10", "9"]]), "a%5B%5D=10&a%5B%5D=9&z%5B%5D=b")
    }

    func testArrayEncodings() throws {
        let value = ["a": [1, 2]]
        XCTAssertEqual(try encode(value, URLEncodedFormEncoder(arrayEncoding: .noBrackets)), "a=1&a=2")
        XCTAssertEqual(
            try encode(value, URLEncodedFormEncoder(arrayEncoding: .indexInBrackets)), "a%5B0%5D=1&a%5B1%5D=2")
        XCTAssertEqual(
            try encode(value, URLEncodedFormEncoder(arrayEncoding: .custom { key, index in "\(key)(\(index))" })),
            "a%280%29=1&a%281%29=2")
    }

    func testBoolEncodings() throws {
        XCTAssertEqual(
            try encode(["t": true, "f": false], URLEncodedFormEncoder(boolEncoding: .literal)), "f=false&t=true")
    }

    func testNilEncodings() throws {
        XCTAssertEqual(try encode(Optionals()), "present=here")
        XCTAssertEqual(
            try encode(Optionals(), URLEncodedFormEncoder(nilEncoding: .dropValue)), "missing=&number=&present=here")
        XCTAssertEqual(
            try encode(Optionals(), URLEncodedFormEncoder(nilEncoding: .null)), "missing=null&number=null&present=here")
    }

    func testKeyEncodings() throws {
        XCTAssertEqual(
            try encode(Keys(), URLEncodedFormEncoder(keyEncoding: .convertToSnakeCase)),
            "home_url_value=b&id2_name=c&user_name=a")
        XCTAssertEqual(
            try encode(Keys(), URLEncodedFormEncoder(keyEncoding: .convertToKebabCase)),
            "home-url-value=b&id2-name=c&user-name=a")
        XCTAssertEqual(
            try encode(Keys(), URLEncodedFormEncoder(keyEncoding: .capitalized)), "HomeURLValue=b&Id2Name=c&UserName=a")
        XCTAssertEqual(
            try encode(Keys(), URLEncodedFormEncoder(keyEncoding: .uppercased)), "HOMEURLVALUE=b&ID2NAME=c&USERNAME=a")
        XCTAssertEqual(
            try encode(Keys(), URLEncodedFormEncoder(keyEncoding: .lowercased)), "homeurlvalue=b&id2name=c&username=a")
        XCTAssertEqual(
            try encode(Keys(), URLEncodedFormEncoder(keyEncoding: .custom { "x_" + $0 })),
            "x_homeURLValue=b&x_id2Name=c&x_userName=a")
    }

    func testDateEncodings() throws {
        let stamp = Stamp(date: Date(timeIntervalSince1970: 1_000), data: Data([1, 2, 255]))
        XCTAssertEqual(try encode(stamp), "data=AQL/&date=-978306200.0")
        XCTAssertEqual(
            try encode(stamp, URLEncodedFormEncoder(dateEncoding: .secondsSince1970)), "data=AQL/&date=1000.0")
        XCTAssertEqual(
            try encode(stamp, URLEncodedFormEncoder(dateEncoding: .millisecondsSince1970)), "data=AQL/&date=1000000.0")
        XCTAssertEqual(
            try encode(stamp, URLEncodedFormEncoder(dateEncoding: .iso8601)), "data=AQL/&date=1970-01-01T00%3A16%3A40Z")
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy/MM/dd"
        XCTAssertEqual(
            try encode(stamp, URLEncodedFormEncoder(dateEncoding: .formatted(formatter))), "data=AQL/&date=1970/01/01")
        XCTAssertEqual(
            try encode(stamp, URLEncodedFormEncoder(dateEncoding: .custom { _ in "then" })), "data=AQL/&date=then")
    }

    func testDataEncodings() throws {
        let stamp = Stamp(date: Date(timeIntervalSince1970: 0), data: Data([1, 2]))
        XCTAssertTrue(
            try encode(stamp, URLEncodedFormEncoder(dataEncoding: .deferredToData)).hasPrefix(
                "data%5B%5D=1&data%5B%5D=2&"))
        XCTAssertTrue(
            try encode(stamp, URLEncodedFormEncoder(dataEncoding: .custom { "\($0.count) bytes" })).hasPrefix(
                "data=2%20bytes&"))
    }

    func testSpaceEncodingsAndAllowedCharacters() throws {
        XCTAssertEqual(try encode(["q": "a b"], URLEncodedFormEncoder(spaceEncoding: .plusReplaced)), "q=a+b")
        XCTAssertEqual(try encode(["q": "a/b"], URLEncodedFormEncoder(allowedCharacters: .alphanumerics)), "q=a%2Fb")
    }

    func testANonKeyedRootIsRefused() {
        XCTAssertThrowsError(try encode([1, 2])) { error in
            guard case .invalidRootObject = error as? URLEncodedFormEncoder.Error else { return XCTFail("\(error)") }
        }
        XCTAssertThrowsError(try encode("plain"))
    }

    func testAnEmptyDictionaryIsAnEmptyFormAndLeavesTheQueryUnset() throws {
        struct Nothing: Encodable {}
        XCTAssertEqual(try encode([String: String]()), "")
        XCTAssertEqual(try encode(Nothing()), "")
        let request = URLRequest(url: URL(string: "https://example.com/path")!)
        let encoded = try URLEncodedFormParameterEncoder(destination: .queryString).encode(
            [String: String](), into: request)
        XCTAssertEqual(encoded.url?.absoluteString, "https://example.com/path")
        XCTAssertNil(URLComponents(url: encoded.url!, resolvingAgainstBaseURL: false)?.percentEncodedQuery)
    }

    func testCustomEncodingErrorsSurfaceAsParameterEncoderFailed() {
        struct Boom: Error {}
        let encoder = URLEncodedFormParameterEncoder(
            encoder: URLEncodedFormEncoder(dateEncoding: .custom { _ in throw Boom() }))
        XCTAssertThrowsError(
            try encoder.encode(Stamp(date: Date(), data: Data()), into: URLRequest(url: URL(string: "https://e.com/")!))
        ) { error in
            guard case .parameterEncoderFailed(.encoderFailed(let underlying)) = error.asAFError else {
                return XCTFail("\(error)")
            }
            XCTAssertTrue(underlying is Boom)
        }
    }

    func testParameterEncoderDestinations() throws {
        var post = URLRequest(url: URL(string: "https://e.com/p?x=1")!)
        post.httpMethod = "POST"
        let body = try URLEncodedFormParameterEncoder.default.encode(["a": "b"], into: post)
        XCTAssertEqual(body.httpBody, Data("a=b".utf8))
        XCTAssertEqual(body.url?.query, "x=1")
        let query = try URLEncodedFormParameterEncoder(destination: .queryString).encode(["a": "b"], into: post)
        XCTAssertEqual(query.url?.query, "x=1&a=b")
        XCTAssertNil(query.httpBody)
    }
}

/// Hand-written `encode(to:)`s, as Alamofire's own tests write them: containers are paths, `superEncoder()` writes into
/// the container's own node, and an array's elements are ordered by key.
final class URLEncodedFormManualEncodingTests: XCTestCase {
    private class Base: Encodable {
        let one = "one"
        let two = 2
    }

    private final class Derived: Base {
        let four = [1, 2, 3]
        let five = ["a": "a", "b": "b"]

        private enum Keys: String, CodingKey { case four, five }

        override func encode(to encoder: any Encoder) throws {
            var keyed = encoder.container(keyedBy: Keys.self)
            try keyed.encode(four, forKey: .four)
            try keyed.encode(five, forKey: .five)
            // Into this container's own node: `four` becomes "one".
            var sameNode = keyed.superEncoder().container(keyedBy: Keys.self)
            try sameNode.encode(one, forKey: .four)
            // Into `four`, which becomes an object.
            var atFour = keyed.superEncoder(forKey: .four).container(keyedBy: Keys.self)
            try atFour.encode(two, forKey: .five)
            // An unkeyed container at `four` changes nothing until an element is appended; its super encoder writes
            // into `four` itself.
            var array = keyed.nestedUnkeyedContainer(forKey: .four)
            var fromArray = array.superEncoder().container(keyedBy: Keys.self)
            try fromArray.encode(one, forKey: .four)
        }
    }

    private struct Nested: Encodable {
        private enum Root: String, CodingKey { case root }
        private enum Keys: String, CodingKey { case a, b }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Root.self)
            var object = container.nestedContainer(keyedBy: Keys.self, forKey: .root)
            try object.encode(["string": "string"], forKey: .a)
            // `root` becomes an array when the first element is appended.
            var array = container.nestedUnkeyedContainer(forKey: .root)
            try array.encode([1, 2, 3])
            var element = array.nestedContainer(keyedBy: Keys.self)
            try element.encode(["string": "string"], forKey: .a)
            var inner = array.nestedUnkeyedContainer()
            try inner.encode([1, 2, 3])
        }
    }

    func testSuperEncodersWriteIntoTheContainersOwnNode() throws {
        let expected = "five%5Ba%5D=a&five%5Bb%5D=b&four%5Bfive%5D=2&four%5Bfour%5D=one"
        XCTAssertEqual(try URLEncodedFormEncoder().encode(Derived()), expected)
        XCTAssertEqual(try URLEncodedFormEncoder(arrayEncoding: .indexInBrackets).encode(Derived()), expected)
    }

    func testNestedArraysAreOrderedByKeyAsAlamofireOrdersThem() throws {
        XCTAssertEqual(
            try URLEncodedFormEncoder().encode(Nested()),
            "root%5B%5D%5B%5D%5B%5D=1&root%5B%5D%5B%5D%5B%5D=2&root%5B%5D%5B%5D%5B%5D=3&root%5B%5D%5B%5D=1"
                + "&root%5B%5D%5B%5D=2&root%5B%5D%5B%5D=3&root%5B%5D%5Ba%5D%5Bstring%5D=string")
        XCTAssertEqual(
            try URLEncodedFormEncoder(arrayEncoding: .indexInBrackets).encode(Nested()),
            "root%5B0%5D%5B0%5D=1&root%5B0%5D%5B1%5D=2&root%5B0%5D%5B2%5D=3&root%5B1%5D%5Ba%5D%5Bstring%5D=string"
                + "&root%5B2%5D%5B0%5D%5B0%5D=1&root%5B2%5D%5B0%5D%5B1%5D=2&root%5B2%5D%5B0%5D%5B2%5D=3")
    }

    func testValuesUnderOneKeyKeepTheirOrder() throws {
        XCTAssertEqual(try URLEncodedFormEncoder().encode(["a": [9, 10, 1]]), "a%5B%5D=9&a%5B%5D=10&a%5B%5D=1")
    }
}
