import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Where work runs: the fast path (no hop for cheap handlers) must never move parsing, user validators or
/// user-chosen queues off the queues Alamofire users rely on.
final class RequestThreadingTests: ServerTestCase {
    let key = DispatchSpecificKey<String>()

    func queue(_ name: String) -> DispatchQueue {
        let queue = DispatchQueue(label: name)
        queue.setSpecific(key: key, value: name)
        return queue
    }

    /// Records which labelled queue each call ran on.
    struct RecordingSerializer: DataResponseSerializerProtocol {
        let key: DispatchSpecificKey<String>
        let seen: Recorder<String>
        func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws -> Int
        {
            seen.append(DispatchQueue.getSpecific(key: key) ?? "other")
            return data?.count ?? 0
        }
    }

    func testParsingHandlersRunOnTheSerializationQueueAfterInlineOnes() async {
        let serialization = queue("serialization")
        let session = Session(serializationQueue: serialization)
        let seen = Recorder<String>()
        let request = session.request(url("/get")).validate()
        let task = request.serializingData()
        let handled: Int? = await withCheckedContinuation { continuation in
            request.response(queue: queue("completion"), responseSerializer: RecordingSerializer(key: key, seen: seen))
            {
                continuation.resume(returning: $0.value)
            }
        }
        XCTAssertNotNil(handled)
        XCTAssertEqual(seen.values, ["serialization"])
        let asyncValue = await task.response.value
        XCTAssertNotNil(asyncValue)
    }

    func testCustomValidatorsRunOnTheSerializationQueue() async {
        let serialization = queue("serialization")
        let session = Session(serializationQueue: serialization)
        let seen = Recorder<String>()
        let key = self.key
        let response = await session.request(url("/get"))
            .validate { _, _, _ in
                seen.append(DispatchQueue.getSpecific(key: key) ?? "other"); return .success(())
            }
            .serializingData().response
        XCTAssertNil(response.error)
        XCTAssertEqual(seen.values, ["serialization"])
    }

    func testAGivenRequestQueueMakesTheURLRequest() async {
        struct Recording: URLRequestConvertible {
            let url: URL
            let key: DispatchSpecificKey<String>
            let seen: Recorder<String>
            func asURLRequest() throws -> URLRequest {
                seen.append(DispatchQueue.getSpecific(key: key) ?? "other")
                return URLRequest(url: url)
            }
        }
        let seen = Recorder<String>()
        let session = Session(requestQueue: queue("requests"))
        _ = await session.request(Recording(url: server.url("/get"), key: key, seen: seen)).serializingData().response
        XCTAssertEqual(seen.values, ["requests"])
    }

    func testADataTaskAwaitedTwiceSerializesOnceAndAgrees() async {
        let seen = Recorder<String>()
        let task = session.request(url("/bytes/32?seed=4")).serializingResponse(
            using: RecordingSerializer(key: key, seen: seen))
        async let first = task.value
        async let second = task.value
        let values = try? await [first, second]
        XCTAssertEqual(values, [32, 32])
        XCTAssertEqual(seen.values.count, 1)
    }

    struct SlowCountingSerializer: DataResponseSerializerProtocol {
        let seen: Recorder<String>
        func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws -> Int
        {
            seen.append("serialized")
            Thread.sleep(forTimeInterval: 0.005)
            return data?.count ?? 0
        }
    }

    func testADataTaskAwaitedByManyTasksSerializesOnce() async {
        // Pins a race found in CI: awaiters woken together each made the value.
        for _ in 0..<10 {
            let seen = Recorder<String>()
            let task = session.request(url("/bytes/16?seed=2")).serializingResponse(
                using: SlowCountingSerializer(seen: seen))
            let values = await withTaskGroup(of: Int?.self) { group -> [Int?] in
                for _ in 0..<8 { group.addTask { try? await task.value } }
                return await group.reduce(into: []) { $0.append($1) }
            }
            XCTAssertEqual(values, Array(repeating: 16, count: 8))
            XCTAssertEqual(seen.values.count, 1)
        }
    }

    func testCompletionHandlersStillArriveOnTheirQueue() async {
        let completion = queue("completion")
        let key = self.key
        let where_: String = await withCheckedContinuation { continuation in
            session.request(url("/get")).responseData(queue: completion) { _ in
                continuation.resume(returning: DispatchQueue.getSpecific(key: key) ?? "other")
            }
        }
        XCTAssertEqual(where_, "completion")
    }
}
