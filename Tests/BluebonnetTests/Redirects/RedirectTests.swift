import Bluebonnet
import Foundation
import NIOCore
import NIOPosix
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class RedirectTests: ServerTestCase {
    func redirectTo(_ target: String, status: Int) -> String {
        let escaped = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? target
        return url("/redirect-to?url=\(escaped)&status_code=\(status)")
    }

    func testARedirectHandlerAnsweringFromAnEventLoopDoesNotBringValidatorsOrTheRetrierOntoIt() async throws {
        // A handler that refuses from an event loop (after asking some NIO service, say) used to run the request's
        // validators and its retrier right there, on the thread that called the completion.
        struct RefuseOnALoop: RedirectHandler {
            func request(
                _ request: Request, willBeRedirectedTo newRequest: URLRequest, for response: HTTPURLResponse,
                completion: @escaping @Sendable (URLRequest?) -> Void
            ) {
                MultiThreadedEventLoopGroup.singleton.any().execute { completion(nil) }
            }
        }
        let onLoop = Recorder<String>()
        let retrier = Retrier { _, _, _, completion in
            if MultiThreadedEventLoopGroup.currentEventLoop != nil { onLoop.append("retrier") }
            completion(.doNotRetry)
        }
        let session = Session(interceptor: retrier, redirectHandler: RefuseOnALoop())
        let response = await session.request(url("/redirect/1"))
            .validate { _, _, _ in
                if MultiThreadedEventLoopGroup.currentEventLoop != nil { onLoop.append("validator") }
                return .failure(AFError.explicitlyCancelled)
            }
            .serializingData().response
        XCTAssertEqual(response.response?.statusCode, 302)
        XCTAssertNotNil(response.error, "the validator's failure reached the response through the retrier")
        XCTAssertEqual(onLoop.values, [])
    }

    func testADownloadWhoseRedirectIsRefusedFromAnEventLoopWritesItsFileOffTheLoop() async throws {
        // The refused redirect's body is the download's: it is written and moved to the destination, file I/O that
        // used to run on the thread that called the completion.
        struct RefuseOnALoop: RedirectHandler {
            func request(
                _ request: Request, willBeRedirectedTo newRequest: URLRequest, for response: HTTPURLResponse,
                completion: @escaping @Sendable (URLRequest?) -> Void
            ) {
                MultiThreadedEventLoopGroup.singleton.any().execute { completion(nil) }
            }
        }
        let onLoop = Recorder<Bool>()
        let target = FileManager.default.temporaryDirectory.appendingPathComponent("refused-\(UUID().uuidString).html")
        defer { try? FileManager.default.removeItem(at: target) }
        let session = Session(redirectHandler: RefuseOnALoop())
        let destination: DownloadRequest.Destination = { _, _ in
            onLoop.append(MultiThreadedEventLoopGroup.currentEventLoop != nil)
            return (target, [.removePreviousFile])
        }
        let response = await session.download(url("/redirect/1"), to: destination).serializingDownloadedFileURL()
            .response
        XCTAssertEqual(response.response?.statusCode, 302)
        XCTAssertEqual(response.fileURL, target, "\(String(describing: response.error))")
        XCTAssertEqual(onLoop.values, [false])
        withExtendedLifetime(session) {}
    }

    func testAnUnfollowedRedirectThatFailsValidationReachesTheRetrier() async throws {
        // It used to complete without asking the retrier, so a redirect the handler refused was never retried.
        let asked = Recorder<Int>()
        let retrier = Retrier { request, _, _, completion in
            asked.append(request.retryCount)
            completion(request.retryCount < 1 ? .retry : .doNotRetry)
        }
        let request = session.request(redirectTo("/get", status: 302), interceptor: retrier)
            .redirect(using: Redirector.doNotFollow).validate()
        let response = await request.serializingData(emptyResponseCodes: [302]).response
        XCTAssertEqual(response.response?.statusCode, 302)
        XCTAssertEqual(response.error?.responseCode, 302)
        // The serializer shows the second attempt's failure to the retrier once more, as in Alamofire.
        XCTAssertEqual(asked.values, [0, 1, 1])
        XCTAssertEqual(request.retryCount, 1)
    }

    func testEveryRedirectCodeIsFollowedForGET() async throws {
        for status in [301, 302, 303, 307, 308] {
            let response = await session.request(redirectTo("/anything/landed", status: status)).serializingData()
                .response
            XCTAssertEqual(response.response?.statusCode, 200, "\(status)")
            let echo = try json(response.data)
            XCTAssertEqual(echo["method"] as? String, "GET", "\(status)")
            XCTAssertEqual(echo["url"] as? String, url("/anything/landed"), "\(status)")
        }
    }

    func testPOSTBecomesGETWithoutBodyOn301302And303() async throws {
        for status in [301, 302, 303] {
            let response = await session.request(
                redirectTo("/anything", status: status), method: .post,
                parameters: ["k": "v"], encoding: JSONEncoding.default
            )
            .serializingData().response
            let echo = try json(response.data)
            XCTAssertEqual(echo["method"] as? String, "GET", "\(status)")
            XCTAssertEqual(echo["data"] as? String, "", "\(status)")
            XCTAssertNil((echo["headers"] as? [String: String])?["Content-Type"], "\(status)")
        }
    }

    func testPOSTKeepsMethodAndBodyOn307And308() async throws {
        for status in [307, 308] {
            let response = await session.request(
                redirectTo("/anything", status: status), method: .post,
                parameters: ["k": "v"], encoding: JSONEncoding.default
            )
            .serializingData().response
            let echo = try json(response.data)
            XCTAssertEqual(echo["method"] as? String, "POST", "\(status)")
            XCTAssertEqual(echo["json"] as? [String: String], ["k": "v"], "\(status)")
        }
    }

    func testSixteenRedirectsAreFollowedAndTheSeventeenthFails() async {
        let ok = await session.request(url("/redirect/16")).serializingData().response
        XCTAssertEqual(ok.response?.statusCode, 200)
        let tooMany = await session.request(url("/redirect/17")).serializingData().response
        guard case .redirectFailed(.tooManyRedirects(limit: 16)) = tooMany.error else {
            return XCTFail("\(String(describing: tooMany.error))")
        }
    }

    func testARedirectorLimitIsHonoured() async {
        let request = session.request(url("/redirect/3")).redirect(
            using: Redirector(behavior: .follow, maximumRedirects: 2))
        let response = await request.serializingData().response
        guard case .redirectFailed(.tooManyRedirects(limit: 2)) = response.error else {
            return XCTFail("\(String(describing: response.error))")
        }
        XCTAssertEqual(request.redirectCount, 2)
    }

    func testDoNotFollowDeliversTheRedirectResponse() async {
        let response = await session.request(url("/redirect/1")).redirect(using: .doNotFollow).serializingData(
            emptyResponseCodes: [302]).response
        XCTAssertEqual(response.response?.statusCode, 302)
        XCTAssertEqual(response.response?.value(forHTTPHeaderField: "Location"), "/get")
    }

    func testARedirectNotFollowedHasNoDataAsInAlamofire() async {
        for session in [session!, Session(redirectHandler: Redirector.doNotFollow)] {
            let request = session.request(url("/redirect-to?url=%2Fget")).redirect(using: .doNotFollow)
            let response = await request.serializingResponse().response
            XCTAssertEqual(response.response?.statusCode, 302)
            XCTAssertNil(response.data)
            XCTAssertNil(response.error)
            XCTAssertNil(request.data)
        }
    }

    func testSessionWideRedirectHandlerApplies() async {
        let session = Session(redirectHandler: Redirector.doNotFollow)
        let response = await session.request(url("/redirect/1")).serializingResponse().response
        XCTAssertEqual(response.response?.statusCode, 302)
    }

    func testModifyingRedirectorCanChangeTheNextRequest() async throws {
        let modifier = Redirector.modify { _, request, _ in
            var request = request
            request.setValue("added", forHTTPHeaderField: "X-Hop")
            return request
        }
        let data = try await session.request(redirectTo("/headers", status: 302)).redirect(using: modifier)
            .serializingData().value
        XCTAssertEqual((try json(data)["headers"] as? [String: String])?["X-Hop"], "added")
    }

    func testCredentialsAreDroppedWhenTheRedirectLeavesTheOrigin() async throws {
        let otherOrigin = "http://localhost:\(server.port)/headers"
        let data = try await session.request(
            redirectTo(otherOrigin, status: 302),
            headers: [.authorization(bearerToken: "secret"), HTTPHeader(name: "Cookie", value: "a=b")]
        )
        .serializingData().value
        let headers = try XCTUnwrap(try json(data)["headers"] as? [String: String])
        XCTAssertNil(headers["Authorization"])
        XCTAssertNil(headers["Cookie"])
        XCTAssertEqual(headers["Host"], "localhost:\(server.port)")
    }

    func testCredentialsAreKeptOnASameOriginRedirect() async throws {
        let data = try await session.request(
            redirectTo("/headers", status: 302), headers: [.authorization(bearerToken: "secret")]
        )
        .serializingData().value
        XCTAssertEqual((try json(data)["headers"] as? [String: String])?["Authorization"], "Bearer secret")
    }

    func testRedirectToANonHTTPSchemeIsRefused() async {
        let response = await session.request(redirectTo("file:///etc/passwd", status: 302)).serializingData().response
        guard case .redirectFailed(.unsupportedScheme) = response.error else {
            return XCTFail("\(String(describing: response.error))")
        }
    }

    func testAbsoluteAndRelativeChainsBothArrive() async {
        for path in ["/absolute-redirect/3", "/relative-redirect/3", "/redirect/3?absolute=true"] {
            let request = session.request(url(path))
            let response = await request.serializingData().response
            XCTAssertEqual(response.response?.statusCode, 200, path)
            XCTAssertEqual(request.requests.count, 4, path)
            XCTAssertEqual(request.firstRequest?.url?.absoluteString, url(path))
            XCTAssertEqual(response.request?.url?.path, "/get", path)
        }
    }
}

/// Credentials set for the whole session stay with the origin the request started on, whatever hop follows.
final class SessionCredentialRedirectTests: ServerTestCase {
    /// Kept for the test's length: a released session ends its requests.
    var credentialed: Session?

    func credentialedSession() -> Session {
        if let credentialed { return credentialed }
        credentialed = session {
            $0.headers.add(.authorization(bearerToken: "session-secret"))
            $0.headers.add(name: "Cookie", value: "session=1")
            $0.headers.add(name: "Proxy-Authorization", value: "Basic cHJveHk6c2VjcmV0")
            $0.headers.add(name: "X-Trace", value: "kept")
        }
        return credentialed!
    }

    func redirect(to target: String, status: Int = 302) -> String {
        url(
            "/redirect-to?url=\(target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)&status_code=\(status)"
        )
    }

    func echoedHeaders(_ request: DataRequest) async throws -> [String: String] {
        let data = try await request.serializingData().value
        return try XCTUnwrap(try json(data)["headers"] as? [String: String])
    }

    func testSessionCredentialsDoNotFollowARedirectToAnotherOrigin() async throws {
        for status in [301, 302, 303, 307, 308] {
            let headers = try await echoedHeaders(
                credentialedSession().request(redirect(to: "http://localhost:\(server.port)/headers", status: status)))
            XCTAssertEqual(headers["Host"], "localhost:\(server.port)", "\(status)")
            XCTAssertNil(headers["Authorization"], "\(status)")
            XCTAssertNil(headers["Cookie"], "\(status)")
            XCTAssertNil(headers["Proxy-Authorization"], "\(status)")
            XCTAssertEqual(headers["X-Trace"], "kept", "other session headers still go, \(status)")
        }
    }

    func testSessionCredentialsStayOnASameOriginRedirect() async throws {
        let headers = try await echoedHeaders(credentialedSession().request(redirect(to: "/headers")))
        XCTAssertEqual(headers["Authorization"], "Bearer session-secret")
        XCTAssertEqual(headers["Cookie"], "session=1")
    }

    func testSessionCredentialsReachTheFirstOriginWhateverItsName() async throws {
        let headers = try await echoedHeaders(credentialedSession().request("http://localhost:\(server.port)/headers"))
        XCTAssertEqual(headers["Authorization"], "Bearer session-secret")
    }

    func testRequestAndSessionCredentialsAreBothDroppedAcrossOrigins() async throws {
        let request = credentialedSession().request(
            redirect(to: "http://localhost:\(server.port)/headers"),
            headers: [.authorization(username: "user", password: "pass"), HTTPHeader(name: "cookie", value: "own=1")])
        let headers = try await echoedHeaders(request)
        XCTAssertNil(headers["Authorization"])
        XCTAssertNil(headers["Cookie"])
    }

    func testACrossOriginChainDropsCredentialsOnEveryForeignHop() async throws {
        // 127.0.0.1 → localhost → localhost: two hops away from the first origin.
        let second = "http://localhost:\(server.port)/redirect-to?url=%2Fheaders"
        let headers = try await echoedHeaders(credentialedSession().request(redirect(to: second)))
        XCTAssertEqual(headers["Host"], "localhost:\(server.port)")
        XCTAssertNil(headers["Authorization"])
        XCTAssertNil(headers["Cookie"])
    }

    func testARedirectHandlerMayDeliberatelyAddCredentialsForTheNewOrigin() async throws {
        let modifier = Redirector.modify { _, request, _ in
            var request = request
            request.setValue("Bearer chosen-for-target", forHTTPHeaderField: "Authorization")
            return request
        }
        let request = credentialedSession().request(redirect(to: "http://localhost:\(server.port)/headers")).redirect(
            using: modifier)
        let headers = try await echoedHeaders(request)
        XCTAssertEqual(headers["Authorization"], "Bearer chosen-for-target")
        XCTAssertNil(headers["Cookie"])
    }

    func testRedirectsToOutOfRangePortsFailWithTheReason() async {
        for target in ["http://127.0.0.1:99999/x", "http://localhost:65536/"] {
            let response = await session.request(redirect(to: target)).serializingData().response
            guard case let .redirectFailed(.invalidPort(url))? = response.error else {
                XCTFail("\(target): \(String(describing: response.error))")
                continue
            }
            XCTAssertEqual(url.absoluteString, target)
            XCTAssertTrue(response.error?.localizedDescription.contains("outside 0...65535") == true)
            XCTAssertEqual(response.error?.url?.absoluteString, target)
        }
    }

    func testARedirectHandlerThatPicksABadPortFailsBeforeSending() async {
        let modifier = Redirector.modify { _, request, _ in
            var request = request
            request.url = URL(string: "http://127.0.0.1:70000/")
            return request
        }
        let response = await session.request(redirect(to: "/get")).redirect(using: modifier).serializingData().response
        XCTAssertEqual(response.error?.isInvalidURLError, true, "\(String(describing: response.error))")
    }
}
