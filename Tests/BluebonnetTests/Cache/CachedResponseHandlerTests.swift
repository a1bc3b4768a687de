import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Alamofire's `CachedResponseHandlerTests`, ported: per request, per session, a request's handler over the
/// session's, `userInfo` kept, and the static members; for FoundationNetworking's `URLCache` and for `HTTPCache`.
final class CachedResponseHandlerTests: ServerTestCase {
    func session(using handler: (any CachedResponseHandler)?, cache: URLCache) -> Session {
        let configuration = URLSessionConfiguration.af.default
        configuration.urlCache = cache
        return Session(configuration: configuration, cachedResponseHandler: handler)
    }

    func caches() -> [URLCache] {
        [
            URLCache(memoryCapacity: 100_000_000, diskCapacity: 0, diskPath: nil),
            Session.HTTPCache(memoryCapacity: 100_000_000, diskCapacity: 0),
        ]
    }

    /// Completes `request` and says whether the cache holds its response afterwards.
    func cached(_ request: DataRequest, in cache: URLCache) async throws -> CachedURLResponse? {
        let response = await request.serializingData().response
        XCTAssertEqual(response.response?.statusCode, 200)
        return cache.cachedResponse(for: try XCTUnwrap(request.request))
    }

    func testARequestsHandlerCachesOrDoesNot() async throws {
        for cache in caches() {
            let session = session(using: nil, cache: cache)
            let stored = try await cached(
                session.request(url("/cacheable/a?cache_control=max-age=60")).cacheResponse(
                    using: ResponseCacher.cache), in: cache)
            XCTAssertNotNil(stored, "\(type(of: cache))")
            let refused = try await cached(
                session.request(url("/cacheable/b?cache_control=max-age=60")).cacheResponse(
                    using: ResponseCacher.doNotCache), in: cache)
            XCTAssertNil(refused, "\(type(of: cache))")
        }
    }

    /// A stream's response is proposed to the cache as a data request's is (Alamofire's
    /// `testThatDataStreamCallsCachedResponseHandler`), with the whole body the stream delivered.
    func testAStreamsResponseIsProposedToTheHandlerAndStored() async throws {
        for cache in caches() {
            let proposed = Recorder<Int>()
            let cacher = ResponseCacher(
                behavior: .modify { _, response in
                    proposed.append(response.data.count)
                    return response
                })
            let session = session(using: nil, cache: cache)
            let request = session.streamRequest(url("/bytes/3000?seed=4")).cacheResponse(using: cacher)
            var received = Data()
            for await chunk in request.streamTask().streamingData() {
                if case let .success(data) = chunk.result { received.append(data) }
            }
            XCTAssertEqual(received.count, 3000, "\(type(of: cache))")
            XCTAssertEqual(proposed.values, [3000], "\(type(of: cache))")
            let stored = cache.cachedResponse(for: try XCTUnwrap(request.request))
            XCTAssertEqual(stored?.data, received, "\(type(of: cache))")
        }
    }

    func testAModifyingHandlerKeepsItsUserInfo() async throws {
        for cache in caches() {
            let cacher = ResponseCacher(
                behavior: .modify { _, response in
                    CachedURLResponse(
                        response: response.response, data: response.data, userInfo: ["key": "value"],
                        storagePolicy: .allowed)
                })
            let perRequest = session(using: nil, cache: cache)
            let stored = try await cached(
                perRequest.request(url("/cacheable/c?cache_control=max-age=60")).cacheResponse(using: cacher), in: cache
            )
            XCTAssertEqual(stored?.userInfo?["key"] as? String, "value", "\(type(of: cache))")
            let perSession = session(using: cacher, cache: cache)
            let again = try await cached(perSession.request(url("/cacheable/d?cache_control=max-age=60")), in: cache)
            XCTAssertEqual(again?.userInfo?["key"] as? String, "value", "\(type(of: cache))")
        }
    }

    func testARequestsHandlerPrevailsOverTheSessions() async throws {
        for cache in caches() {
            let session = session(using: ResponseCacher.cache, cache: cache)
            let refused = try await cached(
                session.request(url("/cacheable/e?cache_control=max-age=60")).cacheResponse(
                    using: ResponseCacher.doNotCache), in: cache)
            XCTAssertNil(refused, "\(type(of: cache))")
            let stored = try await cached(session.request(url("/cacheable/f?cache_control=max-age=60")), in: cache)
            XCTAssertNotNil(stored, "\(type(of: cache))")
        }
    }

    func testAFoundationCacheServesAFreshResponseButNeverTheWrongVariant() async throws {
        let cache = URLCache(memoryCapacity: 10_000_000, diskCapacity: 0, diskPath: nil)
        let session = session(using: nil, cache: cache)
        let id = UUID().uuidString
        let target = url("/cacheable/\(id)?cache_control=max-age=60&vary=Accept-Language")
        _ = await session.request(target, headers: ["Accept-Language": "en"]).serializingData().response
        let hit = await session.request(target, headers: ["Accept-Language": "en"]).serializingData().response
        XCTAssertEqual(hit.taskMetrics?.transactionMetrics.last?.resourceFetchType, .localCache)
        let other = await session.request(target, headers: ["Accept-Language": "fr"]).serializingData().response
        XCTAssertEqual(
            try json(other.data)["Accept-Language"] as? String, "fr",
            "FoundationNetworking keeps one variant; the other is a miss")
        XCTAssertEqual(other.taskMetrics?.transactionMetrics.last?.resourceFetchType, .networkLoad)
    }

    func testAFoundationCacheKeepsTheResponsesOfEachQueryOfAPath() async throws {
        // FoundationNetworking keys by host, port and path: unhelped, `?n=2` would replace `?n=1`.
        let cache = URLCache(memoryCapacity: 10_000_000, diskCapacity: 0, diskPath: nil)
        let session = session(using: nil, cache: cache)
        let id = UUID().uuidString
        let targets = ["1", "2", "a%20b", "x%3Fy", "%2F"].map {
            url("/cacheable/\(id)?cache_control=max-age=60&n=\($0)")
        }
        for target in targets {
            let response = await session.request(target).serializingData().response
            XCTAssertEqual(response.taskMetrics?.transactionMetrics.last?.resourceFetchType, .networkLoad, target)
        }
        for (index, target) in targets.enumerated() {
            let hit = await session.request(target).serializingData().response
            XCTAssertEqual(hit.taskMetrics?.transactionMetrics.last?.resourceFetchType, .localCache, target)
            XCTAssertEqual(try json(hit.data)["answer"] as? Int, index + 1, "each query's own response: \(target)")
        }
        // The cache's owner still finds the latest response under the URL itself.
        XCTAssertNotNil(cache.cachedResponse(for: URLRequest(url: try XCTUnwrap(URL(string: targets[4])))))
    }

    func testTheDefaultSharedURLCacheIsNotUsed() async throws {
        let id = UUID().uuidString
        let target = url("/cacheable/\(id)?cache_control=max-age=60")
        _ = await session.request(target).serializingData().response
        let second = await session.request(target).serializingData().response
        XCTAssertEqual(second.taskMetrics?.transactionMetrics.last?.resourceFetchType, .networkLoad)
    }

    func testTheCachersCanBeNamedFromTheProtocol() {
        func take(_ handler: any CachedResponseHandler) -> Bool { true }
        XCTAssertTrue(take(.cache))
        XCTAssertTrue(take(.doNotCache))
        XCTAssertTrue(take(.modify { _, _ in nil }))
    }
}
