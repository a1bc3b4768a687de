import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Requests checked by an independent server: Python's httpbin under gunicorn, which `.ci/run` starts on
/// 127.0.0.1 and names in `BLUEBONNET_HTTPBIN_URL`. What httpbin's own (Werkzeug) parser reports is the oracle.
///
/// Without the variable the suite is skipped, unless `BLUEBONNET_REQUIRE_HTTPBIN` is set (as `.ci/run` does), in
/// which case a missing or unreachable httpbin fails it.
final class HTTPBinInteropTests: XCTestCase {
    private var base: String!
    private var session: Session!

    override func setUp() async throws {
        try await super.setUp()
        let environment = ProcessInfo.processInfo.environment
        guard let base = environment["BLUEBONNET_HTTPBIN_URL"], !base.isEmpty else {
            if environment["BLUEBONNET_REQUIRE_HTTPBIN"] != nil {
                XCTFail("BLUEBONNET_REQUIRE_HTTPBIN is set but BLUEBONNET_HTTPBIN_URL is not")
            }
            throw XCTSkip("BLUEBONNET_HTTPBIN_URL is not set; .ci/run starts httpbin under gunicorn and sets it")
        }
        self.base = base.hasSuffix("/") ? String(base.dropLast()) : base
        session = Session()
    }

    override func tearDown() async throws {
        session = nil
        try await super.tearDown()
    }

    private func url(_ path: String) -> String { base + path }

    private func echo(_ request: DataRequest, file: StaticString = #filePath, line: UInt = #line) async throws
        -> [String: Any]
    {
        let response = await request.validate().serializingData().response
        let data = try response.result.get()
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: data) as? [String: Any], file: file, line: line)
    }

    // MARK: - Cookies

    func testHTTPBinsCookiesAreStoredAcrossItsRedirectsAndDeleted() async throws {
        let storage = try XCTUnwrap(URLSessionConfiguration.ephemeral.httpCookieStorage)
        let configuration = URLSessionConfiguration.af.default
        configuration.httpCookieStorage = storage
        let cookieSession = Session(configuration: configuration)
        let set = try await echo(cookieSession.request(url("/cookies/set?flower=bluebonnet&state=texas")))
        XCTAssertEqual(set["cookies"] as? [String: String], ["flower": "bluebonnet", "state": "texas"])
        let named = try await echo(cookieSession.request(url("/cookies/set/color/blue")))
        XCTAssertEqual(
            named["cookies"] as? [String: String], ["flower": "bluebonnet", "state": "texas", "color": "blue"])
        let deleted = try await echo(cookieSession.request(url("/cookies/delete?state&color")))
        XCTAssertEqual(deleted["cookies"] as? [String: String], ["flower": "bluebonnet"])
        XCTAssertEqual(storage.cookies?.map(\.name), ["flower"])
    }

    // MARK: - Caching

    func testHTTPBinsCachingRoutesAreServedRevalidatedAndStoredByTheCache() async throws {
        let configuration = URLSessionConfiguration.af.default
        configuration.urlCache = Session.HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 0)
        let cached = Session(configuration: configuration)
        // Each request says which it is; a body that still says "1" is the first response, kept.
        func attempt(_ path: String, _ number: Int) async throws -> (
            String?, RequestTaskTransactionMetrics.ResourceFetchType?
        ) {
            let response = await cached.request(url(path), headers: ["X-Attempt": "\(number)"]).validate()
                .serializingData().response
            let object = try XCTUnwrap(try JSONSerialization.jsonObject(with: response.result.get()) as? [String: Any])
            let headers = object["headers"] as? [String: String] ?? [:]
            return (headers["X-Attempt"], response.taskMetrics?.transactionMetrics.last?.resourceFetchType)
        }
        // `/cache/60`: `Cache-Control: public, max-age=60`, served from the cache.
        _ = try await attempt("/cache/60", 1)
        let fresh = try await attempt("/cache/60", 2)
        XCTAssertEqual(fresh.0, "1")
        XCTAssertEqual(fresh.1, .localCache)
        // `/etag/{etag}`: no lifetime, so revalidated; httpbin's 304 delivers the stored body.
        _ = try await attempt("/etag/bluebonnet", 1)
        let revalidated = try await attempt("/etag/bluebonnet", 2)
        XCTAssertEqual(revalidated.0, "1")
        XCTAssertEqual(revalidated.1, .networkLoad)
        // `/cache`: Last-Modified and ETag; httpbin answers any conditional request with 304.
        _ = try await attempt("/cache", 1)
        let conditional = try await attempt("/cache", 2)
        XCTAssertEqual(conditional.0, "1")
        // `/response-headers` sets what the query says.
        let headersURL = url("/response-headers?Cache-Control=max-age%3D60&X-Mark=kept")
        _ = await cached.request(headersURL).serializingData().response
        let again = await cached.request(headersURL).serializingData().response
        XCTAssertEqual(again.taskMetrics?.transactionMetrics.last?.resourceFetchType, .localCache)
        XCTAssertEqual(again.response?.value(forHTTPHeaderField: "X-Mark"), "kept")
    }

    // MARK: - Parameters

    func testURLEncodedFormFieldsAreReadByHTTPBin() async throws {
        let echo = try await echo(
            session.request(
                url("/post"), method: .post,
                parameters: ["name": "blue bonnet", "symbols": "a&b=c?d/e", "count": 3]))
        XCTAssertEqual(
            echo["form"] as? [String: String], ["name": "blue bonnet", "symbols": "a&b=c?d/e", "count": "3"])
        XCTAssertEqual(
            (echo["headers"] as? [String: String])?["Content-Type"], "application/x-www-form-urlencoded; charset=utf-8")
    }

    func testNestedAndArrayParametersUseBracketKeys() async throws {
        let user: [String: any Any & Sendable] = ["name": "ann", "tags": ["a", "b"]]
        let parameters: Parameters = ["user": user, "ids": [1, 2], "flag": true]
        let echo = try await echo(session.request(url("/post"), method: .post, parameters: parameters))
        let form = try XCTUnwrap(echo["form"] as? [String: Any])
        XCTAssertEqual(form["user[name]"] as? String, "ann")
        XCTAssertEqual(form["user[tags][]"] as? [String], ["a", "b"])
        XCTAssertEqual(form["ids[]"] as? [String], ["1", "2"])
        XCTAssertEqual(form["flag"] as? String, "1")
    }

    func testQueryParametersMergeWithAnExistingQuery() async throws {
        let echo = try await echo(
            session.request(
                url("/get?existing=1"), parameters: ["added": "two words", "list": ["x", "y"]],
                encoding: URLEncoding(arrayEncoding: .noBrackets)))
        let args = try XCTUnwrap(echo["args"] as? [String: Any])
        XCTAssertEqual(args["existing"] as? String, "1")
        XCTAssertEqual(args["added"] as? String, "two words")
        XCTAssertEqual(args["list"] as? [String], ["x", "y"])
    }

    func testJSONEncodingBodyIsParsedAsJSON() async throws {
        let echo = try await echo(
            session.request(
                url("/post"), method: .post,
                parameters: ["a": 1, "b": ["c": [true, false]], "s": "é"], encoding: JSONEncoding.default))
        let json = try XCTUnwrap(echo["json"] as? [String: Any])
        XCTAssertEqual(json["a"] as? Int, 1)
        XCTAssertEqual((json["b"] as? [String: [Bool]])?["c"], [true, false])
        XCTAssertEqual(json["s"] as? String, "é")
        XCTAssertEqual((echo["headers"] as? [String: String])?["Content-Type"], "application/json")
    }

    func testTopLevelJSONArrayFromAnEncodableValue() async throws {
        let echo = try await echo(
            session.request(url("/put"), method: .put, parameters: [3, 1, 2], encoder: JSONParameterEncoder.default))
        XCTAssertEqual(echo["json"] as? [Int], [3, 1, 2])
    }

    func testEncodableFormWithNestedValuesAndSnakeCaseKeys() async throws {
        struct Profile: Encodable, Sendable {
            struct Address: Encodable, Sendable { let postCode: String }
            let firstName: String
            let address: Address
            let scores: [Int]
        }
        let encoder = URLEncodedFormParameterEncoder(
            encoder: URLEncodedFormEncoder(keyEncoding: .convertToSnakeCase), destination: .httpBody)
        let profile = Profile(firstName: "Ann", address: .init(postCode: "78701"), scores: [9, 10])
        let echo = try await echo(session.request(url("/post"), method: .post, parameters: profile, encoder: encoder))
        let form = try XCTUnwrap(echo["form"] as? [String: Any])
        XCTAssertEqual(form["first_name"] as? String, "Ann")
        XCTAssertEqual(form["address[post_code]"] as? String, "78701")
        XCTAssertEqual(form["scores[]"] as? [String], ["9", "10"])
    }

    func testPropertyListBodyArrivesWithItsContentType() async throws {
        let echo = try await echo(
            session.request(
                url("/post"), method: .post, parameters: ["key": "value", "n": 2],
                encoding: PropertyListEncoding.xml))
        XCTAssertEqual((echo["headers"] as? [String: String])?["Content-Type"], "application/x-plist")
        let body = try XCTUnwrap((echo["data"] as? String)?.data(using: .utf8))
        let plist = try XCTUnwrap(try PropertyListSerialization.propertyList(from: body, format: nil) as? [String: Any])
        XCTAssertEqual(plist["key"] as? String, "value")
        XCTAssertEqual(plist["n"] as? Int, 2)
    }

    // MARK: - Multipart

    func testMultipartFieldsAndSeveralFilesBinaryAndText() async throws {
        let binary = Data([0x00, 0xFF, 0xFE, 0x10, 0x80])
        let request = session.upload(
            multipartFormData: { form in
                form.append(Data("plain value".utf8), withName: "field")
                form.append(Data("second".utf8), withName: "repeated")
                form.append(Data("third".utf8), withName: "repeated")
                form.append(
                    Data("hello, text file\n".utf8), withName: "text", fileName: "hello.txt", mimeType: "text/plain")
                form.append(binary, withName: "binary", fileName: "blob.bin", mimeType: "application/octet-stream")
            }, to: url("/post"))
        let echo = try await echo(request)
        let form = try XCTUnwrap(echo["form"] as? [String: Any])
        XCTAssertEqual(form["field"] as? String, "plain value")
        XCTAssertEqual(form["repeated"] as? [String], ["second", "third"])
        let files = try XCTUnwrap(echo["files"] as? [String: String])
        XCTAssertEqual(files["text"], "hello, text file\n")
        XCTAssertEqual(files["binary"], "data:application/octet-stream;base64,\(binary.base64EncodedString())")
    }

    func testMultipartUnicodeNamesAndFileNames() async throws {
        let echo = try await echo(
            session.upload(
                multipartFormData: { form in
                    form.append(Data("valeur".utf8), withName: "champ_é")
                    form.append(
                        Data("内容".utf8), withName: "ファイル", fileName: "résumé 名前.txt",
                        mimeType: "text/plain; charset=utf-8")
                }, to: url("/post")))
        XCTAssertEqual((echo["form"] as? [String: String])?["champ_é"], "valeur")
        XCTAssertEqual((echo["files"] as? [String: String])?["ファイル"], "内容")
    }

    func testMultipartNamesThatTryToInjectHeadersStayOneField() async throws {
        let echo = try await echo(
            session.upload(
                multipartFormData: { form in
                    form.append(Data("x".utf8), withName: "a\"\r\nContent-Disposition: form-data; name=\"injected")
                    form.append(Data("y".utf8), withName: "safe")
                }, to: url("/post")))
        let form = try XCTUnwrap(echo["form"] as? [String: String])
        XCTAssertEqual(form.count, 2, "\(form)")
        XCTAssertNil(form["injected"])
        XCTAssertEqual(form["safe"], "y")
    }

    func testMultipartFilesFromDiskThroughATemporaryFile() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "interop-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let json = directory.appendingPathComponent("data.json")
        try Data(#"{"k": [1, 2]}"#.utf8).write(to: json)
        let png = directory.appendingPathComponent("pixel.png")
        let pngBytes = Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00])
        try pngBytes.write(to: png)
        let request = session.upload(
            multipartFormData: { form in
                form.append(json, withName: "document")
                form.append(png, withName: "image")
            }, to: url("/post"), usingThreshold: 0)
        let echo = try await echo(request)
        let files = try XCTUnwrap(echo["files"] as? [String: String])
        XCTAssertEqual(files["document"], #"{"k": [1, 2]}"#)
        XCTAssertEqual(files["image"], "data:image/png;base64,\(pngBytes.base64EncodedString())")
        guard case .file? = request.uploadable else { return XCTFail("expected the form to go through a file") }
    }

    // MARK: - Uploads

    func testRawUploadsOfDataFileAndStream() async throws {
        let text = Data("raw text body".utf8)
        let fromData = try await echo(session.upload(text, to: url("/post"), headers: ["Content-Type": "text/plain"]))
        XCTAssertEqual(fromData["data"] as? String, "raw text body")

        let fileURL = FileManager.default.temporaryDirectory.appendingPathComponent("interop-\(UUID().uuidString).bin")
        let binary = Data((0..<300).map { UInt8(truncatingIfNeeded: $0 * 7) })
        try binary.write(to: fileURL)
        defer { try? FileManager.default.removeItem(at: fileURL) }
        let fromFile = try await echo(
            session.upload(
                fileURL, to: url("/put"), method: .put,
                headers: ["Content-Type": "application/octet-stream"]))
        XCTAssertEqual(
            fromFile["data"] as? String, "data:application/octet-stream;base64,\(binary.base64EncodedString())")

        let fromStream = try await echo(
            session.upload(InputStream(data: text), to: url("/post"), headers: ["Content-Type": "text/plain"]))
        XCTAssertEqual(fromStream["data"] as? String, "raw text body")
    }

    func testTemporaryRedirectResendsTheUploadBody() async throws {
        let echo = try await echo(
            session.upload(
                Data("again".utf8), to: url("/redirect-to?url=/post&status_code=307"),
                headers: ["Content-Type": "text/plain"]))
        XCTAssertEqual(echo["data"] as? String, "again")
    }

    // MARK: - Validation

    func testValidationAgainstHTTPBinsStatusAndContentTypes() async throws {
        let teapot = await session.request(url("/status/418")).validate().serializingData().response
        XCTAssertEqual(teapot.error?.responseCode, 418)
        let json = await session.request(url("/json")).validate(contentType: ["application/json"]).serializingData()
            .response
        XCTAssertNil(json.error)
        let xml = await session.request(url("/xml")).validate(contentType: ["application/json", "text/*"])
            .serializingData().response
        guard case let .responseValidationFailed(reason: .unacceptableContentType(_, responseContentType))? = xml.error
        else {
            return XCTFail("\(String(describing: xml.error))")
        }
        XCTAssertEqual(responseContentType, "application/xml")
        let html = await session.request(url("/html"), headers: ["Accept": "text/*"]).validate().serializingData()
            .response
        XCTAssertNil(html.error)
    }

    // MARK: - Authentication

    /// Every httpbin auth route with the right and the wrong credential: the status that ends the request, and how
    /// many hops it took (the closing note of the authentication issue lists these lines).
    func testEveryHTTPBinAuthRouteWithRightAndWrongCredentials() async throws {
        let cases: [(path: String, right: Int, wrong: Int, hops: Int)] = [
            ("/basic-auth/user/passwd", 200, 401, 2),
            ("/digest-auth/auth/user/passwd/MD5", 200, 401, 2),
            ("/digest-auth/auth/user/passwd/SHA-256", 200, 401, 2),
            ("/digest-auth/auth-int/user/passwd/MD5", 200, 401, 2),
            ("/digest-auth/auth-int/user/passwd/SHA-256", 200, 401, 2),
            ("/digest-auth/auth/user/passwd/MD5/never", 200, 401, 2),
            // httpbin tracks staleness in cookies; without a cookie jar (not built yet) each nonce is fresh.
            ("/digest-auth/auth/user/passwd/MD5/1", 200, 401, 2),
            ("/digest-auth/auth/user/passwd/SHA-256/2", 200, 401, 2),
        ]
        for route in cases {
            for (password, expected) in [("passwd", route.right), ("wrong", route.wrong)] {
                let request = session.request(url(route.path)).authenticate(username: "user", password: password)
                let response = await request.serializingData(emptyResponseCodes: [401]).response
                let hops = request.taskMetrics?.transactionMetrics.count ?? 0
                print(
                    "AUTH-ROUTE \(route.path) password=\(password) -> \(response.response?.statusCode ?? 0) in \(hops) hops"
                )
                XCTAssertEqual(response.response?.statusCode, expected, "\(route.path) \(password)")
                XCTAssertEqual(hops, route.hops, "\(route.path) \(password): one answer, no loop")
            }
        }
    }

    func testHTTPBinHiddenBasicAuthAndBearerNeedTheHeaderUpFront() async throws {
        let hidden = await session.request(url("/hidden-basic-auth/user/passwd"))
            .authenticate(username: "user", password: "passwd").serializingData().response
        print("AUTH-ROUTE /hidden-basic-auth/user/passwd authenticate() -> \(hidden.response?.statusCode ?? 0)")
        XCTAssertEqual(hidden.response?.statusCode, 404, "no challenge to answer")
        let preemptive = try await echo(
            session.request(
                url("/hidden-basic-auth/user/passwd"),
                headers: [.authorization(username: "user", password: "passwd")]))
        XCTAssertEqual(preemptive["authenticated"] as? Bool, true)
        let bearer = try await echo(session.request(url("/bearer"), headers: [.authorization(bearerToken: "abc")]))
        XCTAssertEqual(bearer["token"] as? String, "abc")
        let noBearer = await session.request(url("/bearer")).serializingData(emptyResponseCodes: [401]).response
        print("AUTH-ROUTE /bearer without token -> \(noBearer.response?.statusCode ?? 0); with token -> 200")
        XCTAssertEqual(noBearer.response?.statusCode, 401)
    }

    func testHTTPBinDigestWithSHA512IsNotAnsweredAndEndsWithThe401() async throws {
        let request = session.request(url("/digest-auth/auth/user/passwd/SHA-512")).authenticate(
            username: "user", password: "passwd")
        let response = await request.serializingData(emptyResponseCodes: [401]).response
        print(
            "AUTH-ROUTE /digest-auth/auth/user/passwd/SHA-512 -> \(response.response?.statusCode ?? 0) (not an RFC 7616 algorithm; not answered)"
        )
        XCTAssertEqual(response.response?.statusCode, 401)
        XCTAssertEqual(request.taskMetrics?.transactionMetrics.count, 1)
    }

    func testHTTPBinCredentialsInTheURLAnswerItsChallenge() async throws {
        var components = try XCTUnwrap(URLComponents(string: url("/digest-auth/auth/user/passwd/SHA-256")))
        components.user = "user"
        components.password = "passwd"
        let response = await session.request(try XCTUnwrap(components.url)).serializingData().response
        XCTAssertEqual(response.response?.statusCode, 200)
    }

    // MARK: - Downloads and streams

    func testADownloadOfHTTPBinsBytesIsTheWholeBody() async throws {
        let directory = try TemporaryDirectory()
        let target = directory.url.appendingPathComponent("bytes.bin")
        let fileURL = try await session.download(url("/bytes/4096?seed=7"), to: { _, _ in (target, []) }).validate()
            .serializingDownloadedFileURL().value
        let data = try Data(contentsOf: fileURL)
        XCTAssertEqual(data.count, 4096)
        // httpbin's seeded bytes are the same for the same seed: a second download is identical.
        let againTarget = directory.url.appendingPathComponent("again.bin")
        let again = try await session.download(url("/bytes/4096?seed=7"), to: { _, _ in (againTarget, []) })
            .serializingData().value
        XCTAssertEqual(again, data)
    }

    func testResumingAgainstHTTPBinsRangeAppendsTheRest() async throws {
        // httpbin's `/range` answers `Range` with a 206 and names a strong ETag; a partial file of its first 1000
        // bytes, described in the documented resume format, is continued to the whole body. The partial is where and
        // as the library makes its own: resume data naming any other file is refused.
        let whole = try await session.request(url("/range/5000")).validate().serializingData().value
        let head = await session.request(url("/range/5000"), method: .head).serializingResponse().response
        let etag = try XCTUnwrap(head.response?.value(forHTTPHeaderField: "ETag"))
        let directory = try TemporaryDirectory()
        let partial = FileManager.default.temporaryDirectory.appendingPathComponent(
            "Bluebonnet_\(UUID().uuidString).tmp")
        try whole.prefix(1000).write(to: partial)
        let resumeData = try JSONSerialization.data(
            withJSONObject: [
                "version": 1, "url": url("/range/5000"), "etag": etag, "bytes": 1000, "file": partial.path,
                "method": "GET", "headers": [[String]](),
            ] as [String: Any])
        let target = directory.url.appendingPathComponent("whole")
        let response = await session.download(resumingWith: resumeData, to: { _, _ in (target, []) }).serializingData()
            .response
        XCTAssertEqual(response.response?.statusCode, 206)
        XCTAssertEqual(try response.result.get(), whole)
    }

    func testHTTPBinsStreamDecodesLineByLine() async throws {
        struct Line: Decodable, Sendable { let id: Int }
        var ids: [Int] = []
        for await event in session.streamRequest(url("/stream/7")).validate().streamTask().streamingDecodables(
            Line.self)
        {
            if case let .stream(result) = event.event { ids.append(try result.get().id) }
        }
        XCTAssertEqual(ids, Array(0..<7))
    }

    func testHTTPBinsDripArrivesInPieces() async throws {
        var pieces = 0
        var bytes = 0
        for await event in session.streamRequest(url("/drip?numbytes=5&duration=2.5&delay=0")).streamTask()
            .streamingData()
        {
            if case let .stream(.success(data)) = event.event { pieces += 1; bytes += data.count }
        }
        XCTAssertEqual(bytes, 5)
        XCTAssertGreaterThan(pieces, 1, "a dripped body arrives as it is sent, not at the end")
    }
}
