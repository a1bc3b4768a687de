import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A monitor written for Alamofire implements the generic parse events with `Value: Sendable`, where Bluebonnet's
/// requirements take any value. Swift matches such a method to the requirement (a `Sendable` constraint does not keep a
/// method from witnessing one), so it is called for every value, JSON's `Any` included, as Alamofire calls it.
final class SendableParseEventTests: ServerTestCase {
    /// A monitor as Alamofire's suite and ported logging monitors write it.
    private final class AlamofireStyleMonitor: EventMonitor {
        let queue = DispatchQueue(label: "parse-events")
        let seen = Recorder<String>()

        func request<Value: Sendable>(_ request: DataRequest, didParseResponse response: DataResponse<Value, AFError>) {
            seen.append("data \(Value.self) \(response.value != nil)")
        }

        func request<Value: Sendable>(
            _ request: DownloadRequest, didParseResponse response: DownloadResponse<Value, AFError>
        ) {
            seen.append("download \(Value.self) \(response.value != nil)")
        }

        func request<Value: Sendable>(_ request: DataStreamRequest, didParseStream result: Result<Value, AFError>) {
            seen.append("stream \(Value.self) \((try? result.get()) != nil)")
        }
    }

    private struct Echo: Decodable, Sendable {
        let url: String
    }

    /// A serializer of the user's whose value is `Sendable`.
    private struct LengthSerializer: ResponseSerializer {
        func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws -> Int
        {
            if let error { throw error }
            return data?.count ?? 0
        }
    }

    func testAnAlamofireMonitorsGenericParseEventsAreCalledForEveryValue() async throws {
        let monitor = AlamofireStyleMonitor()
        let session = Session(eventMonitors: [monitor])
        _ = await session.request(url("/get")).serializingDecodable(Echo.self).response
        _ = await session.request(url("/get")).serializingString().response
        _ = await session.request(url("/get")).serializingResponse(using: LengthSerializer()).response
        let handled = expectation(description: "handler")
        session.request(url("/get")).responseDecodable(of: Echo.self) { _ in handled.fulfill() }
        await fulfillment(of: [handled], timeout: 30)
        _ = await session.download(url("/get")).serializingDecodable(Echo.self).response
        for await _ in session.streamRequest(url("/stream/2")).streamTask().streamingDecodables(Echo.self) {}
        // Not `Sendable`, and told all the same, as Alamofire tells it.
        _ = await session.request(url("/get")).serializingResponse(using: JSONResponseSerializer()).response
        // Every event was posted before its handler ran; one more turn of the monitor's queue delivers them.
        monitor.queue.sync {}
        XCTAssertEqual(
            monitor.seen.values,
            [
                "data Echo true", "data String true", "data Int true", "data Echo true", "download Echo true",
                "stream Echo true", "stream Echo true", "data Any true",
            ])
    }
}
