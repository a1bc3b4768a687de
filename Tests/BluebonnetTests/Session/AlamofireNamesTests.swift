import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Names of Alamofire 5.12's public API that a diff of its symbol graph against ours found missing, used as an
/// Alamofire user writes them.
final class AlamofireNamesTests: ServerTestCase {
    func testSessionRequestModifierIsTheModifierType() async throws {
        let modifier: Session.RequestModifier = { $0.headers.add(name: "X-Modified", value: "yes") }
        let echo = try json(try await session.request(url("/get"), requestModifier: modifier).serializingData().value)
        XCTAssertEqual((echo["headers"] as? [String: String])?["X-Modified"], "yes")
    }

    func testTheRequestsOwnRedirectAndCacheHandlersAndProgressHandlersCanBeRead() async throws {
        let request = session.request(url("/get"))
        XCTAssertNil(request.redirectHandler)
        XCTAssertNil(request.cachedResponseHandler)
        XCTAssertNil(request.uploadProgressHandler)
        XCTAssertNil(request.downloadProgressHandler)
        let progressQueue = DispatchQueue(label: "progress")
        request.redirect(using: .doNotFollow).cacheResponse(using: .doNotCache)
            .downloadProgress(queue: progressQueue) { _ in }
        guard case .doNotFollow? = (request.redirectHandler as? Redirector)?.behavior else {
            return XCTFail("\(String(describing: request.redirectHandler))")
        }
        XCTAssertNotNil(request.cachedResponseHandler as? ResponseCacher)
        XCTAssertTrue(request.downloadProgressHandler?.queue === progressQueue)
        XCTAssertNil(request.uploadProgressHandler)
        _ = await request.serializingData().response
    }

    func testFirstAndLastMetricsAreThoseOfTheFirstAndLastAttempts() async throws {
        let session = Session(interceptor: RetryPolicy(retryLimit: 1, exponentialBackoffScale: 0.01))
        let request = session.request(url("/status/503")).validate()
        _ = await request.serializingData().response
        XCTAssertEqual(request.allTaskMetrics.count, 2)
        XCTAssertNotNil(request.firstTaskMetrics)
        XCTAssertEqual(
            request.firstTaskMetrics?.taskInterval.start, request.allTaskMetrics.first?.taskInterval.start)
        XCTAssertEqual(request.lastTaskMetrics?.taskInterval.start, request.allTaskMetrics.last?.taskInterval.start)
        XCTAssertNotEqual(request.firstTaskMetrics?.taskInterval.start, request.lastTaskMetrics?.taskInterval.start)
    }

    func testTheStreamSerializersDecodableMemberTakesADataPreprocessor() async throws {
        struct Item: Decodable, Sendable { let n: Int }
        struct Unwrap: DataPreprocessor {
            func preprocess(_ data: Data) throws -> Data { data.dropFirst(2) }
        }
        let serializer: DecodableStreamSerializer<Item> = .decodable(
            of: Item.self, decoder: JSONDecoder(), dataPreprocessor: Unwrap())
        XCTAssertEqual(try serializer.serialize(Data(">>{\"n\":3}".utf8)).n, 3)
    }
}
