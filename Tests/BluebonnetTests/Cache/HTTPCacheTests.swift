import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The session's HTTP cache against the test server's `/cacheable/{id}`, which counts how often the origin answered:
/// every hit, miss and revalidation is asserted exactly.
final class HTTPCacheTests: ServerTestCase {
    var cache: Session.HTTPCache!
    var directory: URL!
    var plain: Session!

    override func setUp() async throws {
        try await super.setUp()
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "bluebonnet-cache-\(UUID().uuidString)")
        cache = Session.HTTPCache(memoryCapacity: 1 << 20, diskCapacity: 8 << 20, directory: directory)
        session = session { $0.urlCache = cache }
        plain = session { $0.urlCache = nil }
    }

    override func tearDown() async throws {
        plain = nil
        cache = nil
        if let directory { try? FileManager.default.removeItem(at: directory) }
        try await super.tearDown()
    }

    /// A fresh resource name, so counts never mix between tests.
    func resource(_ query: String) -> (id: String, url: String) {
        let id = UUID().uuidString
        return (id, url("/cacheable/\(id)?\(query)"))
    }

    func get(
        _ url: String, headers: HTTPHeaders = [], policy: URLRequest.CachePolicy? = nil, on session: Session? = nil
    )
        async -> AFDataResponse<Data>
    {
        await (session ?? self.session).request(
            url, headers: headers,
            requestModifier: { request in
                if let policy { request.cachePolicy = policy }
            }
        ).serializingData().response
    }

    func counts(_ id: String, file: StaticString = #filePath, line: UInt = #line) async throws -> (
        full: Int, notModified: Int
    ) {
        let response = await plain.request(url("/cacheable-hits/\(id)")).serializingData().response
        let object = try json(response.data, file: file, line: line)
        return (object["full"] as? Int ?? -1, object["notModified"] as? Int ?? -1)
    }

    func fetchType(_ response: AFDataResponse<Data>) -> RequestTaskTransactionMetrics.ResourceFetchType? {
        response.taskMetrics?.transactionMetrics.last?.resourceFetchType
    }

    // MARK: - Freshness

    func testAFreshResponseIsServedFromTheCacheWithAnAgeAndWithoutReachingTheOrigin() async throws {
        let (id, url) = resource("cache_control=max-age=60")
        let first = await get(url)
        XCTAssertEqual(first.response?.statusCode, 200)
        XCTAssertEqual(fetchType(first), .networkLoad)
        let second = await get(url)
        XCTAssertEqual(second.response?.statusCode, 200)
        XCTAssertEqual(second.data, first.data)
        XCTAssertEqual(fetchType(second), .localCache)
        XCTAssertNotNil(second.response?.value(forHTTPHeaderField: "Age"))
        let counts = try await counts(id)
        XCTAssertEqual(counts.full, 1)
        XCTAssertEqual(counts.notModified, 0)
    }

    func testHeuristicFreshnessComesFromLastModified() async throws {
        let (id, url) = resource("last_modified=36000")
        _ = await get(url)
        let second = await get(url)
        XCTAssertEqual(fetchType(second), .localCache, "a tenth of 10 hours is an hour of freshness")
        do { let counted = try await counts(id).full; XCTAssertEqual(counted, 1) }
    }

    func testAnAgeBeyondMaxAgeOrAnExpiresInThePastIsStale() async throws {
        let (agedID, aged) = resource("cache_control=max-age=60&age=100")
        _ = await get(aged)
        _ = await get(aged)
        do { let counted = try await counts(agedID).full; XCTAssertEqual(counted, 2) }
        let (expiredID, expired) = resource("expires=-10")
        _ = await get(expired)
        _ = await get(expired)
        do { let counted = try await counts(expiredID).full; XCTAssertEqual(counted, 2) }
        let (zeroID, zero) = resource("expires=0&etag=z")
        _ = await get(zero)
        _ = await get(zero)
        do {
            let counted = try await counts(zeroID).notModified;
            XCTAssertEqual(counted, 1, "Expires: 0 is stale at once, and revalidated")
        }
    }

    // MARK: - Validation

    func testAStaleResponseIsRevalidatedWithItsETagAndA304DeliversTheStored200() async throws {
        let (id, url) = resource("cache_control=max-age=0&etag=v1")
        let first = await get(url)
        let second = await get(url)
        XCTAssertEqual(second.response?.statusCode, 200)
        XCTAssertEqual(second.data, first.data)
        XCTAssertEqual(second.response?.value(forHTTPHeaderField: "ETag"), "\"v1\"")
        XCTAssertEqual(fetchType(second), .networkLoad, "a revalidation went to the network")
        let counts = try await counts(id)
        XCTAssertEqual(counts.full, 1)
        XCTAssertEqual(counts.notModified, 1)
    }

    func testNoCacheRevalidatesWithLastModifiedEveryTime() async throws {
        let (id, url) = resource("cache_control=no-cache&last_modified=3600")
        for _ in 0..<3 {
            let response = await get(url)
            XCTAssertEqual(response.response?.statusCode, 200)
        }
        let counts = try await counts(id)
        XCTAssertEqual(counts.full, 1)
        XCTAssertEqual(counts.notModified, 2)
    }

    func testARequestsNoCacheOrMaxAgeZeroRevalidatesAFreshResponse() async throws {
        let (id, url) = resource("cache_control=max-age=600&etag=e")
        _ = await get(url)
        _ = await get(url, headers: ["Cache-Control": "no-cache"])
        _ = await get(url, headers: ["Cache-Control": "max-age=0"])
        _ = await get(url, headers: ["Pragma": "no-cache"])
        let counts = try await counts(id)
        XCTAssertEqual(counts.full, 1)
        XCTAssertEqual(counts.notModified, 3)
    }

    func testAStaleResponseWithoutAValidatorIsFetchedAgain() async throws {
        let (id, url) = resource("cache_control=max-age=0")
        _ = await get(url)
        _ = await get(url)
        do { let counted = try await counts(id).full; XCTAssertEqual(counted, 2) }
    }

    // MARK: - What is stored

    func testNoStoreAndUncacheableStatusesAreNotStored() async throws {
        let (noStoreID, noStore) = resource("cache_control=no-store,max-age=60")
        _ = await get(noStore)
        _ = await get(noStore)
        do { let counted = try await counts(noStoreID).full; XCTAssertEqual(counted, 2) }
        let (requestNoStoreID, requestNoStore) = resource("cache_control=max-age=60")
        _ = await get(requestNoStore, headers: ["Cache-Control": "no-store"])
        _ = await get(requestNoStore)
        do { let counted = try await counts(requestNoStoreID).full; XCTAssertEqual(counted, 2) }
        let (createdID, created) = resource("cache_control=&last_modified=36000&status=201")
        _ = await get(created)
        _ = await get(created)
        do {
            let counted = try await counts(createdID).full;
            XCTAssertEqual(counted, 2, "201 is not heuristically cacheable")
        }
        let (notFoundID, notFound) = resource("cache_control=max-age=60&status=404")
        _ = await get(notFound)
        let again = await get(notFound)
        XCTAssertEqual(again.response?.statusCode, 404)
        do { let counted = try await counts(notFoundID).full; XCTAssertEqual(counted, 1) }
    }

    func testAResponseToAnAuthorizedRequestIsStoredOnlyWhenItSaysSo() async throws {
        let (privateID, privateURL) = resource("cache_control=max-age=60")
        _ = await get(privateURL, headers: ["Authorization": "Bearer a"])
        _ = await get(privateURL, headers: ["Authorization": "Bearer a"])
        do { let counted = try await counts(privateID).full; XCTAssertEqual(counted, 2) }
        let (publicID, publicURL) = resource("cache_control=public,max-age=60")
        _ = await get(publicURL, headers: ["Authorization": "Bearer a"])
        _ = await get(publicURL, headers: ["Authorization": "Bearer a"])
        do { let counted = try await counts(publicID).full; XCTAssertEqual(counted, 1) }
    }

    func testEachVaryVariantIsStoredApart() async throws {
        let (id, url) = resource("cache_control=max-age=60&vary=Accept-Language")
        let english = await get(url, headers: ["Accept-Language": "en"])
        let french = await get(url, headers: ["Accept-Language": "fr"])
        let englishAgain = await get(url, headers: ["Accept-Language": "en"])
        let frenchAgain = await get(url, headers: ["Accept-Language": "fr"])
        XCTAssertEqual(try json(englishAgain.data)["Accept-Language"] as? String, "en")
        XCTAssertEqual(try json(frenchAgain.data)["Accept-Language"] as? String, "fr")
        XCTAssertEqual(englishAgain.data, english.data)
        XCTAssertEqual(frenchAgain.data, french.data)
        do { let counted = try await counts(id).full; XCTAssertEqual(counted, 2) }
        let (starID, star) = resource("cache_control=max-age=60&vary=*")
        _ = await get(star)
        _ = await get(star)
        do { let counted = try await counts(starID).full; XCTAssertEqual(counted, 2) }
    }

    func testASuccessfulUnsafeMethodInvalidatesTheURL() async throws {
        let (id, url) = resource("cache_control=max-age=60")
        _ = await get(url)
        _ = await get(url)
        _ = await session.request(url, method: .post).serializingData().response
        let after = await get(url)
        XCTAssertEqual(fetchType(after), .networkLoad)
        do { let counted = try await counts(id).full; XCTAssertEqual(counted, 3, "GET, POST, GET") }
    }

    // MARK: - Policies

    func testTheRequestsCachePolicyIsHonoured() async throws {
        let (id, url) = resource("cache_control=max-age=0")
        _ = await get(url)
        let elseLoad = await get(url, policy: .returnCacheDataElseLoad)
        XCTAssertEqual(fetchType(elseLoad), .localCache, "stale, yet served")
        let dontLoad = await get(url, policy: .returnCacheDataDontLoad)
        XCTAssertEqual(fetchType(dontLoad), .localCache)
        _ = await get(url, policy: .reloadIgnoringLocalCacheData)
        do { let counted = try await counts(id).full; XCTAssertEqual(counted, 2) }
        let (missID, miss) = resource("cache_control=max-age=60")
        let failed = await get(miss, policy: .returnCacheDataDontLoad)
        XCTAssertEqual(failed.error?.urlErrorCode, .resourceUnavailable)
        do { let counted = try await counts(missID).full; XCTAssertEqual(counted, 0) }
    }

    func testTheConfigurationsPolicyAppliesToRequestsThatKeepTheDefault() async throws {
        let (id, url) = resource("cache_control=max-age=60")
        let reloading = session {
            $0.urlCache = cache; $0.requestCachePolicy = .reloadIgnoringLocalCacheData
        }
        _ = await get(url, on: reloading)
        _ = await get(url, on: reloading)
        do { let counted = try await counts(id).full; XCTAssertEqual(counted, 2) }
        let cached = await get(url)
        XCTAssertEqual(fetchType(cached), .localCache, "what the reloading session fetched was still stored")
    }

    // MARK: - CachedResponseHandler

    func testResponseCachersDecideWhatIsStoredAndARequestsOwnPrevails() async throws {
        let (id, url) = resource("cache_control=max-age=60")
        let configuration = URLSessionConfiguration.af.default
        configuration.urlCache = cache
        let refusingSession = Session(configuration: configuration, cachedResponseHandler: ResponseCacher.doNotCache)
        _ = await get(url, on: refusingSession)
        _ = await get(url, on: refusingSession)
        do { let counted = try await counts(id).full; XCTAssertEqual(counted, 2) }
        _ = await refusingSession.request(url).cacheResponse(using: ResponseCacher.cache).serializingData().response
        let stored = await get(url, on: refusingSession)
        XCTAssertEqual(fetchType(stored), .localCache)
        do { let counted = try await counts(id).full; XCTAssertEqual(counted, 3) }
    }

    func testAModifyingCacherCanMakeAnUncacheableResponseCacheable() async throws {
        let (id, url) = resource("cache_control=max-age=0")
        let cacher = ResponseCacher(
            behavior: .modify { _, response in
                guard let http = response.response as? HTTPURLResponse, let target = http.url else { return response }
                var fields = http.allHeaderFields as? [String: String] ?? [:]
                fields["Cache-Control"] = "max-age=300"
                guard
                    let changed = HTTPURLResponse(
                        url: target, statusCode: http.statusCode, httpVersion: "HTTP/1.1", headerFields: fields)
                else {
                    return response
                }
                return CachedURLResponse(response: changed, data: response.data)
            })
        _ = await session.request(url).cacheResponse(using: cacher).serializingData().response
        let second = await get(url)
        XCTAssertEqual(fetchType(second), .localCache)
        XCTAssertEqual(second.response?.value(forHTTPHeaderField: "Cache-Control"), "max-age=300")
        do { let counted = try await counts(id).full; XCTAssertEqual(counted, 1) }
    }

    // MARK: - The store

    func testTheDiskStoreOutlivesTheCacheAndSurvivesACrashMidWrite() async throws {
        let (id, url) = resource("cache_control=max-age=600")
        let first = await get(url)
        // What a crash leaves: a temporary file never renamed, and an entry file cut short.
        try Data("partial".utf8).write(to: directory.appendingPathComponent(".tmp-crashed"))
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasSuffix(".entry")
        }
        XCTAssertEqual(files.count, 1)
        let whole = try Data(contentsOf: directory.appendingPathComponent(files[0]))
        try whole.prefix(whole.count - 3).write(to: directory.appendingPathComponent("torn.entry"))
        let reopened = Session.HTTPCache(memoryCapacity: 0, diskCapacity: 8 << 20, directory: directory)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        XCTAssertEqual(names, [files[0]], "the temporary and the torn file are gone")
        let fresh = session { $0.urlCache = reopened }
        let second = await get(url, on: fresh)
        XCTAssertEqual(second.data, first.data)
        XCTAssertEqual(fetchType(second), .localCache)
        do { let counted = try await counts(id).full; XCTAssertEqual(counted, 1) }
        XCTAssertEqual(reopened.currentDiskUsage, first.data?.count)
    }

    /// Issue 24 (7): a URL's password was written into the disk cache's key and stored URL, in files every local
    /// user could read.
    func testAURLsPasswordNeverReachesTheDiskAndEntriesAreOwnerOnly() async throws {
        let (id, plainURL) = resource("cache_control=max-age=600")
        var components = URLComponents(string: plainURL)!
        components.user = "alice"
        components.password = "s3cret-pw"
        let withPassword = components.url!.absoluteString
        let first = await get(withPassword)
        XCTAssertEqual(first.response?.statusCode, 200)
        let names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        XCTAssertEqual(names.filter { $0.hasSuffix(".entry") }.count, 1)
        for name in names {
            let file = directory.appendingPathComponent(name)
            let contents = try Data(contentsOf: file)
            XCTAssertNil(contents.range(of: Data("s3cret-pw".utf8)), "\(name) holds the password")
            XCTAssertNil(contents.range(of: Data("alice".utf8)), "\(name) holds the user")
            let mode = try XCTUnwrap(
                FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? NSNumber
            ).intValue
            XCTAssertEqual(mode & 0o077, 0, "\(name) is readable by others: \(String(mode, radix: 8))")
        }
        let directoryMode = try XCTUnwrap(
            FileManager.default.attributesOfItem(atPath: directory.path)[.posixPermissions] as? NSNumber
        ).intValue
        XCTAssertEqual(directoryMode & 0o077, 0, String(directoryMode, radix: 8))
        // The same resource is found with or without the user info, and from a reopened store.
        let again = await get(withPassword)
        XCTAssertEqual(fetchType(again), .localCache)
        let reopened = Session.HTTPCache(memoryCapacity: 0, diskCapacity: 8 << 20, directory: directory)
        let afterRestart = await get(plainURL, on: session { $0.urlCache = reopened })
        XCTAssertEqual(fetchType(afterRestart), .localCache)
        do { let counted = try await counts(id).full; XCTAssertEqual(counted, 1) }
    }

    func testAnEntryAnOlderVersionWroteWithAPasswordIsRemovedAtStart() throws {
        let store = Session.HTTPCache(memoryCapacity: 0, diskCapacity: 8 << 20, directory: directory)
        let url = URL(string: "http://bob:hunter2@example.com/a")!
        let response = HTTPURLResponse(
            url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: ["Cache-Control": "max-age=600"])!
        store.storeCachedResponse(
            CachedURLResponse(response: response, data: Data("x".utf8)), for: URLRequest(url: url))
        let stored = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter {
            $0.hasSuffix(".entry")
        }
        XCTAssertEqual(stored.count, 1)
        // What an earlier version wrote: the same entry with the password in its key and URL, readable by others.
        let file = directory.appendingPathComponent(stored[0])
        let old = try Data(contentsOf: file)
        let legacy = directory.appendingPathComponent("legacy.entry")
        // The file: 4 bytes of magic, the metadata's length (4 bytes, big-endian), the metadata (JSON), the body.
        let length = old.dropFirst(4).prefix(4).reduce(0) { $0 << 8 | Int($1) }
        let metadata = String(decoding: old.dropFirst(8).prefix(length), as: UTF8.self)
            .replacingOccurrences(of: "http:\\/\\/example.com", with: "http:\\/\\/bob:hunter2@example.com")
            .replacingOccurrences(of: "http://example.com", with: "http://bob:hunter2@example.com")
        XCTAssertTrue(metadata.contains("hunter2"), metadata)
        var rewritten = Data(old.prefix(4))
        withUnsafeBytes(of: UInt32(metadata.utf8.count).bigEndian) { rewritten.append(contentsOf: $0) }
        rewritten.append(Data(metadata.utf8))
        rewritten.append(old.dropFirst(8 + length))
        try rewritten.write(to: legacy)
        XCTAssertNil(old.range(of: Data("hunter2".utf8)))
        chmod(file.path, 0o644)
        _ = Session.HTTPCache(memoryCapacity: 0, diskCapacity: 8 << 20, directory: directory)
        XCTAssertFalse(FileManager.default.fileExists(atPath: legacy.path))
        let mode = try XCTUnwrap(
            FileManager.default.attributesOfItem(atPath: file.path)[.posixPermissions] as? NSNumber
        ).intValue
        XCTAssertEqual(mode & 0o077, 0)
    }

    func testTheStoreEvictsTheLeastRecentlyUsedWithinItsCapacity() async throws {
        let small = Session.HTTPCache(
            memoryCapacity: 0, diskCapacity: 64 * 1024, directory: directory.appendingPathComponent("small"))
        let smallSession = session { $0.urlCache = small }
        // 6 KiB bodies (the most stored is an eighth of 64 KiB): 10 of them overflow the disk.
        var urls: [(String, String)] = []
        for _ in 0..<12 {
            let id = UUID().uuidString
            urls.append((id, url("/cacheable/\(id)?cache_control=max-age=600&pad=6000")))
        }
        for (index, item) in urls.enumerated() {
            _ = await get(item.1, on: smallSession)
            // The first is used again and again, so it is never the least recently used.
            if index > 0 { _ = await get(urls[0].1, on: smallSession) }
        }
        XCTAssertLessThanOrEqual(small.currentDiskUsage, 64 * 1024)
        do { let counted = try await counts(urls[0].0).full; XCTAssertEqual(counted, 1) }
        let oldest = await get(urls[1].1, on: smallSession)
        XCTAssertEqual(fetchType(oldest), .networkLoad, "the least recently used went first")
        let newest = await get(urls[11].1, on: smallSession)
        XCTAssertEqual(fetchType(newest), .localCache)
    }

    func testManyConcurrentRequestsShareTheStoreSafely() async throws {
        let resources = (0..<8).map { _ in resource("cache_control=max-age=600") }
        let results = await withTaskGroup(of: (Int, Data?).self) { group in
            for round in 0..<6 {
                for (index, item) in resources.enumerated() {
                    group.addTask { [session] in
                        let response = await session!.request(item.url).serializingData().response
                        _ = round
                        return (index, response.data)
                    }
                }
            }
            var collected: [(Int, Data?)] = []
            for await result in group { collected.append(result) }
            return collected
        }
        XCTAssertEqual(results.count, 48)
        for (index, data) in results {
            XCTAssertEqual(try json(data)["id"] as? String, resources[index].id)
        }
        for item in resources {
            let full = try await counts(item.id).full
            XCTAssertGreaterThanOrEqual(full, 1)
            XCTAssertLessThanOrEqual(full, 6)
        }
        // Once the first round has been stored, everything is a hit.
        for item in resources {
            let again = await get(item.url)
            XCTAssertEqual(fetchType(again), .localCache)
        }
    }

    func testADownloadIsServedFromTheCacheIntoItsFile() async throws {
        let (id, url) = resource("cache_control=max-age=600&pad=300000")
        let first = await get(url)
        let folder = directory!
        let destination: DownloadRequest.Destination = { _, _ in
            (folder.appendingPathComponent("download-\(UUID().uuidString)"), [.createIntermediateDirectories])
        }
        let download = await session.download(url, to: destination).serializingData().response
        XCTAssertNil(download.error)
        XCTAssertEqual(download.value, first.data)
        do { let counted = try await counts(id).full; XCTAssertEqual(counted, 1) }
    }

    func testAResponseLargerThanAnEighthOfTheCapacityIsNotStored() async throws {
        let tiny = Session.HTTPCache(memoryCapacity: 8 * 1024, diskCapacity: 0)
        let tinySession = session { $0.urlCache = tiny }
        let (id, url) = resource("cache_control=max-age=600&pad=2000")
        _ = await get(url, on: tinySession)
        _ = await get(url, on: tinySession)
        do { let counted = try await counts(id).full; XCTAssertEqual(counted, 2) }
        XCTAssertEqual(tiny.currentMemoryUsage, 0)
    }

    func testTheURLCacheAPIStoresAndReturnsVariants() throws {
        let url = URL(string: "http://example.com/x")!
        let response = try XCTUnwrap(
            HTTPURLResponse(
                url: url, statusCode: 200, httpVersion: "HTTP/1.1",
                headerFields: ["Vary": "Accept", "Cache-Control": "max-age=60"]))
        var json = URLRequest(url: url)
        json.setValue("application/json", forHTTPHeaderField: "Accept")
        var xml = URLRequest(url: url)
        xml.setValue("text/xml", forHTTPHeaderField: "Accept")
        cache.storeCachedResponse(CachedURLResponse(response: response, data: Data("json".utf8)), for: json)
        cache.storeCachedResponse(CachedURLResponse(response: response, data: Data("xml".utf8)), for: xml)
        XCTAssertEqual(cache.cachedResponse(for: json)?.data, Data("json".utf8))
        XCTAssertEqual(cache.cachedResponse(for: xml)?.data, Data("xml".utf8))
        XCTAssertNil(cache.cachedResponse(for: URLRequest(url: url)))
        cache.removeCachedResponse(for: json)
        XCTAssertNil(cache.cachedResponse(for: xml), "removing a URL removes every variant")
        cache.storeCachedResponse(CachedURLResponse(response: response, data: Data("json".utf8)), for: json)
        cache.removeAllCachedResponses()
        XCTAssertEqual(cache.currentMemoryUsage, 0)
        XCTAssertEqual(cache.currentDiskUsage, 0)
    }
}

extension HTTPCacheTests {
    func testAnEventMonitorHearsThatAResponseCameFromTheCache() async throws {
        let (_, url) = resource("cache_control=max-age=60")
        let fetched = Recorder<RequestTaskTransactionMetrics.ResourceFetchType>()
        // A serial queue: the two requests' metrics arrive in the order they were gathered.
        let monitorQueue = DispatchQueue(label: "monitor")
        let monitor = ClosureEventMonitor(queue: monitorQueue)
        monitor.requestDidGatherTaskMetrics = { _, metrics in
            if let type = metrics.transactionMetrics.last?.resourceFetchType { fetched.append(type) }
        }
        let configuration = URLSessionConfiguration.af.default
        configuration.urlCache = cache
        let monitored = Session(configuration: configuration, eventMonitors: [monitor])
        _ = await monitored.request(url).serializingData().response
        _ = await monitored.request(url).serializingData().response
        // Metrics are handed to the monitor's queue before the response handlers run: draining it is the barrier.
        monitorQueue.sync {}
        XCTAssertEqual(fetched.values, [.networkLoad, .localCache])
    }
}

extension HTTPCacheTests {
    func testOnlyIfCachedAnswersFromTheCacheOrFails() async throws {
        let (freshID, fresh) = resource("cache_control=max-age=600")
        let onlyIfCached: HTTPHeaders = ["Cache-Control": "only-if-cached"]
        let miss = await get(fresh, headers: onlyIfCached)
        XCTAssertEqual(miss.error?.urlErrorCode, .resourceUnavailable)
        _ = await get(fresh)
        let hit = await get(fresh, headers: onlyIfCached)
        XCTAssertEqual(fetchType(hit), .localCache)
        do { let counted = try await counts(freshID).full; XCTAssertEqual(counted, 1) }
        let (staleID, stale) = resource("cache_control=max-age=0&etag=s")
        _ = await get(stale)
        let refused = await get(stale, headers: onlyIfCached)
        XCTAssertEqual(refused.error?.urlErrorCode, .resourceUnavailable, "stale, and the network may not be asked")
        do { let counted = try await counts(staleID); XCTAssertEqual(counted.full + counted.notModified, 1) }
    }
}

extension HTTPCacheTests {
    func testAnUnsafeMethodInvalidatesTheSameOriginLocationItNames() async throws {
        let (id, target) = resource("cache_control=max-age=600")
        _ = await get(target)
        let cachedFirst = await get(target)
        XCTAssertEqual(fetchType(cachedFirst), .localCache)
        let foreign = target.replacingOccurrences(of: "127.0.0.1", with: "localhost")
        let escapedForeign = foreign.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        _ = await session.request(url("/response-headers?Location=\(escapedForeign)"), method: .post).serializingData()
            .response
        let stillCached = await get(target)
        XCTAssertEqual(fetchType(stillCached), .localCache, "another origin's Location invalidates nothing")
        let escaped = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        _ = await session.request(url("/response-headers?Content-Location=\(escaped)"), method: .put).serializingData()
            .response
        let invalidated = await get(target)
        XCTAssertEqual(fetchType(invalidated), .networkLoad)
        do { let counted = try await counts(id).full; XCTAssertEqual(counted, 2) }
    }
}
