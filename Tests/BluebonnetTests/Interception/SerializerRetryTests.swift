import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A serializer's failure goes to the retrier before the handler delivers it, as in Alamofire: a retry sends the
/// request again and the handler serializes the new response.
final class SerializerRetryTests: ServerTestCase {
    func testARetryPolicyRetriesAResponseItsSerializerRefusesAndTheHandlerGetsTheNextResponse() async throws {
        // `/status/500` has an empty body, which `DataResponseSerializer` refuses; no `validate()`.
        let asked = Recorder<String>()
        let second = URL(string: url("/bytes/8"))
        let attempts = Recorder<String>()
        let interceptor = Interceptor(
            adaptHandler: { request, _, completion in
                attempts.append(request.url?.path ?? "?")
                var next = request
                // The second attempt asks for a body.
                if attempts.values.count > 1 { next.url = second }
                completion(.success(next))
            },
            retryHandler: { request, _, error, completion in
                asked.append((error as? AFError)?.isResponseSerializationError == true ? "serializer" : "\(error)")
                completion(request.retryCount < 1 ? .retry : .doNotRetry)
            })
        let request = session.request(url("/status/500"), interceptor: interceptor)
        let data = try await request.serializingData().value
        XCTAssertEqual(data.count, 8, "the handler serialized the retried response")
        XCTAssertEqual(asked.values, ["serializer"])
        XCTAssertEqual(request.retryCount, 1)
        XCTAssertEqual(attempts.values.count, 2)
    }

    func testARetrierThatDeclinesASerializersFailureLetsItThroughAndItsErrorReplacesIt() async throws {
        struct Refused: Error {}
        let declining = Retrier { _, _, _, completion in completion(.doNotRetry) }
        let plain = await session.request(url("/status/500"), interceptor: declining).serializingData().response
        XCTAssertEqual(plain.error?.isResponseSerializationError, true, "\(String(describing: plain.error))")
        let refusing = Retrier { _, _, _, completion in completion(.doNotRetryWithError(Refused())) }
        let handlers = Recorder<String>()
        let done = expectation(description: "both handlers")
        done.expectedFulfillmentCount = 2
        session.request(url("/status/500"), interceptor: refusing)
            .responseData(queue: .main) { response in
                if case let .requestRetryFailed(retryError, originalError)? = response.error {
                    XCTAssertTrue(retryError is Refused)
                    XCTAssertEqual(originalError.asAFError?.isResponseSerializationError, true)
                    handlers.append("data")
                }
                done.fulfill()
            }
            .response(queue: .main) { _ in
                handlers.append("plain")
                done.fulfill()
            }
        await fulfillment(of: [done], timeout: 30)
        XCTAssertEqual(handlers.values, ["data", "plain"], "in order, the failed one first")
    }

    // Ported from Alamofire's SessionTests (their last lines read `Session.mutableState`; here, `withAllRequests`).

    func testEachFailingSerializerIsShownToTheRetrierAndTheFirstRetriesOnce() async throws {
        // Two decodable handlers over an image: the first's failure retries the request once; on the new response
        // each handler's failure is shown again, and both deliver the decoding error.
        struct Body: Decodable { let value: String }
        let adapts = Recorder<Int>()
        let asked = Recorder<Int>()
        let interceptor = Interceptor(
            adaptHandler: { request, _, completion in
                adapts.append(1)
                completion(.success(request))
            },
            retryHandler: { request, _, _, completion in
                asked.append(request.retryCount)
                completion(request.retryCount < 1 ? .retry : .doNotRetry)
            })
        let done = expectation(description: "both handlers")
        done.expectedFulfillmentCount = 2
        let errors = Recorder<AFError?>()
        let request = session.request(url("/image/jpeg"), interceptor: interceptor).validate()
            .responseDecodable(of: Body.self, queue: .global()) { response in
                errors.append(response.error)
                done.fulfill()
            }
            .responseDecodable(of: Body.self, queue: .global()) { response in
                errors.append(response.error)
                done.fulfill()
            }
        await fulfillment(of: [done], timeout: 30)
        XCTAssertEqual(adapts.values.count, 2)
        XCTAssertEqual(asked.values, [0, 1, 1])
        XCTAssertEqual(request.retryCount, 1)
        XCTAssertEqual(errors.values.count, 2)
        for error in errors.values {
            XCTAssertEqual(error?.isResponseSerializationError, true)
            XCTAssertNotNil(error?.underlyingError as? DecodingError, "\(String(describing: error))")
        }
        let active: Set<Request> = await withCheckedContinuation { continuation in
            session.withAllRequests { continuation.resume(returning: $0) }
        }
        XCTAssertTrue(active.isEmpty, "nothing stays active")
    }

    func testARetrierThatFailsForEachSerializerGivesEachHandlerItsOwnError() async throws {
        struct Body: Decodable { let value: String }
        struct Refused: Error { let handler: Int }
        let asked = Recorder<Int>()
        let retrier = Retrier { _, _, _, completion in
            asked.append(1)
            completion(.doNotRetryWithError(Refused(handler: asked.values.count)))
        }
        let done = expectation(description: "both handlers")
        done.expectedFulfillmentCount = 2
        let errors = Recorder<AFError?>()
        let request = session.request(url("/image/jpeg"), interceptor: retrier).validate()
            .responseDecodable(of: Body.self, queue: .main) { response in
                errors.append(response.error)
                done.fulfill()
            }
            .responseDecodable(of: Body.self, queue: .main) { response in
                errors.append(response.error)
                done.fulfill()
            }
        await fulfillment(of: [done], timeout: 30)
        XCTAssertEqual(asked.values.count, 2)
        XCTAssertEqual(request.retryCount, 0)
        for (index, error) in errors.values.enumerated() {
            guard case let .requestRetryFailed(retryError, originalError)? = error else {
                XCTFail("\(String(describing: error))")
                continue
            }
            XCTAssertEqual((retryError as? Refused)?.handler, index + 1)
            XCTAssertNotNil(originalError.asAFError?.underlyingError as? DecodingError)
        }
    }
}
