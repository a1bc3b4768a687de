import Bluebonnet
import BluebonnetTestServer
import Foundation
import Logging
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// HTTP Basic and Digest challenges answered over a real socket, once, and only for the origin the credential is for.
final class HTTPAuthenticationTests: ServerTestCase {
    /// The `Authorization` values the request's hops sent, in order.
    private func sentAuthorizations(_ request: Request) -> [String?] {
        (request.taskMetrics?.transactionMetrics ?? []).map { $0.request.value(forHTTPHeaderField: "Authorization") }
    }

    func testBasicChallengeIsAnsweredWithTheRequestCredential() async throws {
        let request = session.request(url("/basic-auth/user/passwd")).authenticate(username: "user", password: "passwd")
        let response = await request.serializingData().response
        XCTAssertEqual(response.response?.statusCode, 200)
        XCTAssertEqual(try json(response.data)["authenticated"] as? Bool, true)
        XCTAssertEqual(sentAuthorizations(request), [nil, "Basic dXNlcjpwYXNzd2Q="])
        XCTAssertEqual(request.credential?.user, "user")
        XCTAssertEqual(request.redirectCount, 0)
        XCTAssertEqual(request.taskMetrics?.redirectCount, 0, "answering a challenge is not a redirect")
    }

    func testWrongCredentialIsTriedOnceThenThe401IsDelivered() async throws {
        let request = session.request(url("/basic-auth/user/passwd")).authenticate(username: "user", password: "wrong")
        let response = await request.serializingData().response
        XCTAssertEqual(response.response?.statusCode, 401)
        XCTAssertTrue(
            response.error?.isResponseSerializationError ?? true,
            "the 401 itself, empty: \(String(describing: response.error))")
        XCTAssertEqual(request.taskMetrics?.transactionMetrics.count, 2, "one answer, no loop")
    }

    func testWithoutACredentialThe401IsDeliveredAtOnce() async throws {
        let request = session.request(url("/basic-auth/user/passwd"))
        let response = await request.serializingData().response
        XCTAssertEqual(response.response?.statusCode, 401)
        XCTAssertEqual(request.taskMetrics?.transactionMetrics.count, 1)
    }

    func testHiddenBasicAuthNeedsThePreemptiveHeader() async throws {
        let challenged = await session.request(url("/hidden-basic-auth/user/passwd"))
            .authenticate(username: "user", password: "passwd").serializingData().response
        XCTAssertEqual(challenged.response?.statusCode, 404, "no challenge, nothing to answer")
        let preemptive = await session.request(
            url("/hidden-basic-auth/user/passwd"),
            headers: [.authorization(username: "user", password: "passwd")]
        ).serializingData().response
        XCTAssertEqual(preemptive.response?.statusCode, 200)
    }

    func testDigestIsAnsweredForEveryAlgorithmAndQop() async throws {
        for algorithm in ["MD5", "MD5-sess", "SHA-256", "SHA-256-sess"] {
            // A `-sess` hash needs the `cnonce` that only a `qop` answer carries.
            for qop in ["auth", "auth-int", "none"] where !(qop == "none" && algorithm.hasSuffix("-sess")) {
                let request = session.request(url("/digest-auth/\(qop)/user/passwd/\(algorithm)?x=1"))
                    .authenticate(username: "user", password: "passwd")
                let response = await request.serializingData().response
                XCTAssertEqual(response.response?.statusCode, 200, "\(algorithm) \(qop)")
                XCTAssertEqual(request.taskMetrics?.transactionMetrics.count, 2, "\(algorithm) \(qop)")
            }
        }
    }

    func testASessionDigestWithoutQopIsNotAnswered() async throws {
        let request = session.request(url("/digest-auth/none/user/passwd/SHA-256-sess")).authenticate(
            username: "user", password: "passwd")
        let response = await request.serializingData(emptyResponseCodes: [401]).response
        XCTAssertEqual(response.response?.statusCode, 401)
        XCTAssertEqual(request.taskMetrics?.transactionMetrics.count, 1)
    }

    func testDigestAuthIntCoversAPostBody() async throws {
        let request = session.request(
            url("/digest-auth/auth-int/user/passwd/SHA-256"), method: .post,
            parameters: ["a": [1, 2]], encoding: JSONEncoding.default
        )
        .authenticate(username: "user", password: "passwd")
        let response = await request.serializingData().response
        XCTAssertEqual(response.response?.statusCode, 200)
        XCTAssertTrue(sentAuthorizations(request).last??.contains("qop=auth-int") == true)
    }

    func testWrongDigestPasswordEndsWithThe401AfterOneAnswer() async throws {
        let request = session.request(url("/digest-auth/auth/user/passwd/SHA-256")).authenticate(
            username: "user", password: "nope")
        let response = await request.serializingData().response
        XCTAssertEqual(response.response?.statusCode, 401)
        XCTAssertEqual(request.taskMetrics?.transactionMetrics.count, 2)
    }

    func testStaleNonceIsAnsweredAgainWithTheNewNonce() async throws {
        let request = session.request(url("/digest-auth/auth/user/passwd/MD5?stale_first=true"))
            .authenticate(username: "user", password: "passwd")
        let response = await request.serializingData().response
        XCTAssertEqual(response.response?.statusCode, 200)
        let sent = sentAuthorizations(request)
        XCTAssertEqual(sent.count, 3)
        let nonces = sent.compactMap { $0?.components(separatedBy: "nonce=\"").dropFirst().first?.prefix(16) }
        XCTAssertEqual(nonces.count, 2)
        XCTAssertNotEqual(nonces.first, nonces.last, "the second answer uses the new nonce")
    }

    func testAServerThatCallsEveryNonceStaleCannotLoopTheRequest() async throws {
        let request = session.request(url("/digest-auth/auth/user/passwd/MD5/0")).authenticate(
            username: "user", password: "passwd")
        let response = await request.serializingData().response
        XCTAssertEqual(response.response?.statusCode, 401)
        XCTAssertEqual(request.taskMetrics?.transactionMetrics.count, 4, "the first answer and two stale answers")
    }

    func testUserhashIsAnswered() async throws {
        let request = session.request(url("/digest-auth/auth/user/passwd/SHA-256?userhash=true"))
            .authenticate(username: "user", password: "passwd")
        let response = await request.serializingData().response
        XCTAssertEqual(response.response?.statusCode, 200)
        XCTAssertFalse(sentAuthorizations(request).last??.contains("username=\"user\"") ?? true)
    }

    func testTheStrongestOfferedChallengeIsChosen() async throws {
        // Basic, Digest MD5 and Digest SHA-256 offered, the last two on their own header lines.
        let request = session.request(url("/digest-auth/auth/user/passwd/MD5,SHA-256?basic=true"))
            .authenticate(username: "user", password: "passwd")
        let response = await request.serializingData().response
        XCTAssertEqual(response.response?.statusCode, 200)
        let answer = try XCTUnwrap(sentAuthorizations(request).last ?? nil)
        XCTAssertTrue(answer.hasPrefix("Digest "), answer)
        XCTAssertTrue(answer.contains("algorithm=SHA-256"), answer)
    }

    func testCredentialsInTheURLAnswerThatOriginAndStayOutOfCURL() async throws {
        let request = session.request("http://user:p%40ss@127.0.0.1:\(server.port)/digest-auth/auth/user/p@ss/SHA-256")
        let response = await request.serializingData().response
        XCTAssertEqual(response.response?.statusCode, 200)
        let curl = request.cURLDescription()
        XCTAssertFalse(curl.contains("p%40ss"), curl)
        XCTAssertFalse(curl.contains("p@ss@"), curl)
        XCTAssertTrue(curl.contains("-u \"user:***\""), curl)
        XCTAssertTrue(request.cURLDescription(revealingSecrets: true).contains("-u \"user:p@ss\""))
        for description in [request.description, response.debugDescription, "\(request)"] {
            XCTAssertFalse(description.contains("p%40ss"), description)
            XCTAssertFalse(description.contains("user:"), description)
        }
    }

    func testRequestCredentialAppearsInCURLOnlyWhenSecretsAreRevealed() async throws {
        let request = session.request(url("/basic-auth/user/passwd")).authenticate(username: "user", password: "passwd")
        _ = await request.serializingData().response
        XCTAssertFalse(request.cURLDescription().contains("user:passwd"), request.cURLDescription())
        XCTAssertTrue(request.cURLDescription().contains("-u \"user:***\""), request.cURLDescription())
        XCTAssertTrue(request.cURLDescription(revealingSecrets: true).contains("-u \"user:passwd\""))
    }

    /// A session whose credential storage holds user:passwd for this server's Basic challenges of `realm`.
    func session(storingCredentialForRealm realm: String) -> Session {
        let storage = URLCredentialStorage()
        let space = URLProtectionSpace(
            host: "127.0.0.1", port: server.port, protocol: "http", realm: realm,
            authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        storage.setDefaultCredential(
            URLCredential(user: "user", password: "passwd", persistence: .forSession), for: space)
        return session { $0.urlCredentialStorage = storage }
    }

    func testSessionCredentialStorageAnswersByProtectionSpace() async throws {
        let stored = session(storingCredentialForRealm: "Fake Realm")
        let response = await stored.request(url("/basic-auth/user/passwd")).serializingData().response
        XCTAssertEqual(response.response?.statusCode, 200)
        let otherRealm = await stored.request(url("/digest-auth/auth/user/passwd")).serializingData().response
        XCTAssertEqual(otherRealm.response?.statusCode, 401, "a credential for another protection space is not used")
        withExtendedLifetime(stored) {}
    }

    func testAStoredCredentialAnswersARealmlessBasicChallengeUnderTheHostAsRealm() async throws {
        // Alamofire's tests store it so: on Darwin, URLSession names such a protection space's realm after the host.
        let stored = session(storingCredentialForRealm: "127.0.0.1")
        let response = await stored.request(url("/basic-auth/user/passwd?realm=none")).serializingData().response
        XCTAssertEqual(response.response?.statusCode, 200)
        let realmed = await stored.request(url("/basic-auth/user/passwd")).serializingData().response
        XCTAssertEqual(realmed.response?.statusCode, 401, "a challenge that names its realm gets only that realm's")
        withExtendedLifetime(stored) {}
    }

    func testACredentialIsNotOfferedToTheOriginARedirectLeadsTo() async throws {
        let other = try await TestServer.start()
        let target = other.url("/basic-auth/user/passwd").absoluteString
        let request = session.request(
            url("/redirect-to?url=\(target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!)"),
            headers: [.authorization(username: "user", password: "passwd")]
        )
        .authenticate(username: "user", password: "passwd")
        let response = await request.serializingData().response
        await other.stop()
        XCTAssertEqual(response.response?.statusCode, 401, "the other origin's challenge is not answered")
        XCTAssertEqual(
            sentAuthorizations(request), ["Basic dXNlcjpwYXNzd2Q=", nil], "Authorization dropped at the new origin")
    }

    func testAChallengeAfterASameOriginRedirectIsAnswered() async throws {
        let request = session.request(url("/redirect-to?url=%2Fbasic-auth%2Fuser%2Fpasswd")).authenticate(
            username: "user", password: "passwd")
        let response = await request.serializingData().response
        XCTAssertEqual(response.response?.statusCode, 200)
        XCTAssertEqual(request.redirectCount, 1)
        XCTAssertEqual(request.taskMetrics?.redirectCount, 1)
        XCTAssertEqual(request.taskMetrics?.transactionMetrics.count, 3)
    }

    func testAStreamedUploadIsNotSentTwiceToAnswerAChallenge() async throws {
        let stream = InputStream(data: Data("payload".utf8))
        let request = session.upload(stream, to: url("/basic-auth/user/passwd"), method: .post)
            .authenticate(username: "user", password: "passwd")
        let response = await request.serializingData().response
        XCTAssertTrue(
            response.error?.isResponseSerializationError ?? true,
            "the 401 itself, empty: \(String(describing: response.error))")
        XCTAssertEqual(response.response?.statusCode, 401, "the 401 is delivered rather than an exhausted stream")
    }

    func testAReplayableUploadIsSentAgainWithTheAnswer() async throws {
        let request = session.upload(
            Data("payload".utf8), to: url("/digest-auth/auth/user/passwd/SHA-256"), method: .post
        )
        .authenticate(username: "user", password: "passwd")
        let response = await request.serializingData().response
        XCTAssertEqual(response.response?.statusCode, 200)
        XCTAssertEqual(request.taskMetrics?.transactionMetrics.last?.countOfRequestBodyBytesSent, 7)
    }

    func testAnUnparseableChallengeDeliversThe401() async throws {
        let request = session.request(url("/digest-auth/auth/user/passwd?malformed=true")).authenticate(
            username: "user", password: "passwd")
        let response = await request.serializingData().response
        XCTAssertTrue(
            response.error?.isResponseSerializationError ?? true,
            "the 401 itself, empty: \(String(describing: response.error))")
        XCTAssertEqual(response.response?.statusCode, 401)
        XCTAssertEqual(request.taskMetrics?.transactionMetrics.count, 1)
    }

    func testWrongCredentialDeliversThe401WithNoDataAndNoErrorToAPlainResponseHandler() async throws {
        let response = await withCheckedContinuation { continuation in
            session.request(url("/basic-auth/user/passwd")).authenticate(username: "invalid", password: "credentials")
                .response { continuation.resume(returning: $0) }
        }
        XCTAssertNotNil(response.request)
        XCTAssertEqual(response.response?.statusCode, 401)
        XCTAssertNil(response.data, "an empty 401 body is no data, as in Alamofire")
        XCTAssertNil(response.error)
    }

    func testTheSharedCredentialStorageAnswersForAPlainSession() async throws {
        let space = URLProtectionSpace(
            host: "127.0.0.1", port: server.port, protocol: "http", realm: "Fake Realm",
            authenticationMethod: NSURLAuthenticationMethodHTTPBasic)
        let credential = URLCredential(user: "user2", password: "password", persistence: .forSession)
        URLCredentialStorage.shared.setDefaultCredential(credential, for: space)
        defer { URLCredentialStorage.shared.remove(credential, for: space) }
        let plain = Session()
        let response = await plain.request(url("/basic-auth/user2/password")).serializingData().response
        XCTAssertEqual(response.response?.statusCode, 200)
        withExtendedLifetime(plain) {}
    }

    func testAnsweredChallengesLeaveNoCredentialInTheLogs() async throws {
        let lines = Recorder<String>()
        var logger = Logger(label: "test") { _ in CapturingLogHandler(lines: lines) }
        logger.logLevel = .trace
        let logged = Session(logger: logger)
        let basic = await logged.request(url("/basic-auth/user/s3cret-pw")).authenticate(
            username: "user", password: "s3cret-pw"
        )
        .serializingData().response
        let digest = await logged.request(
            "http://user:s3cret-pw@127.0.0.1:\(server.port)/digest-auth/auth/user/s3cret-pw/SHA-256"
        )
        .serializingData().response
        XCTAssertEqual([basic.response?.statusCode, digest.response?.statusCode], [200, 200])
        let text = lines.values.joined(separator: "\n")
        XCTAssertTrue(text.contains("answering challenge"), text)
        let basicValue = HTTPHeader.authorization(username: "user", password: "s3cret-pw").value
        for secret in ["user:s3cret-pw", basicValue, "response=", "cnonce"] {
            XCTAssertFalse(text.contains(secret), "\(secret) leaked into the log")
        }
        withExtendedLifetime(logged) {}
    }

    func testAnInvalidURLErrorDoesNotShowThePasswordWrittenInIt() async throws {
        let response = await session.request("http://user:s3cret@127.0.0.1:65536/").serializingData().response
        let message = try XCTUnwrap(response.error?.localizedDescription)
        XCTAssertTrue(message.contains("URL is not valid"), message)
        XCTAssertFalse(message.contains("s3cret"), message)
    }
}

/// Issue 45: Alamofire's `urlSession(_:task:didReceive:)` compiled on a monitor and was never called. URLSession tells
/// Alamofire's delegate of every 401 it can answer (Basic, Digest), whether or not a credential does.
final class ChallengeEventTests: ServerTestCase {
    private final class ChallengeMonitor: EventMonitor {
        let queue = DispatchQueue(label: "challenges")
        let seen = Recorder<String>()

        func urlSession(_ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge) {
            let space = challenge.protectionSpace
            let status = (challenge.failureResponse as? HTTPURLResponse)?.statusCode ?? 0
            seen.append(
                "\(space.authenticationMethod) \(space.realm ?? "-") \(space.host):\(space.port) "
                    + "\(challenge.previousFailureCount) \(status) \(task.originalRequest?.url?.path ?? "")")
        }
    }

    func testEachChallengeIsToldWithItsRealmAndHowOftenItFailed() async throws {
        let monitor = ChallengeMonitor()
        let session = Session(eventMonitors: [monitor])
        let host = "127.0.0.1:\(server.port)"
        let right = await session.request(url("/basic-auth/user/passwd")).authenticate(
            username: "user", password: "passwd"
        )
        .serializingData().response
        XCTAssertEqual(right.response?.statusCode, 200)
        let wrong = await session.request(url("/basic-auth/user/passwd")).authenticate(username: "user", password: "no")
            .serializingData().response
        XCTAssertEqual(wrong.response?.statusCode, 401)
        let none = await session.request(url("/basic-auth/user/passwd?realm=none")).serializingData().response
        XCTAssertEqual(none.response?.statusCode, 401)
        let digest = await session.request(url("/digest-auth/auth/user/passwd")).serializingData().response
        XCTAssertEqual(digest.response?.statusCode, 401)
        // A 403 is not a challenge, nor is a 401's Bearer challenge, which URLSession does not answer.
        _ = await session.request(url("/status/403")).serializingData().response
        let bearer = await session.request(url("/token/challenge-events/protected")).serializingData().response
        XCTAssertEqual(bearer.response?.statusCode, 401)
        _ = await session.request(url("/status/401")).serializingData().response
        monitor.queue.sync {}
        let basic = NSURLAuthenticationMethodHTTPBasic
        XCTAssertEqual(
            monitor.seen.values,
            [
                "\(basic) Fake Realm \(host) 0 401 /basic-auth/user/passwd",
                "\(basic) Fake Realm \(host) 0 401 /basic-auth/user/passwd",
                "\(basic) Fake Realm \(host) 1 401 /basic-auth/user/passwd",
                "\(basic) - \(host) 0 401 /basic-auth/user/passwd",
                "\(NSURLAuthenticationMethodHTTPDigest) me@kennethreitz.com \(host) 0 401 /digest-auth/auth/user/passwd",
                "\(basic) Fake Realm \(host) 0 401 /status/401",
            ])
    }
}
