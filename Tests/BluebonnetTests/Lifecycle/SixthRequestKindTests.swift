@_spi(Transport) @testable import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A kind of request the library does not have, made here in the test target and touching nothing in `Request.swift`:
/// it sends a body of its own, a fresh stream for each send, and takes the response's body as it streams, keeping only
/// its chunks' count and bytes. It is a `RequestKind` value and one role conformance (`ResponseBodyConsumer`); the
/// machine counts its body's sends and walks its consumer's sub-states, over a real socket.
final class SixthRequestKindTests: ServerTestCase {
    /// The sixth kind.
    final class TallyingRequest: Request, ResponseBodyConsumer, @unchecked Sendable {
        // @unchecked: the tally is behind `Protected`; the rest is immutable.
        struct Tally {
            var heads = 0
            var chunks = 0
            var body = Data()
            var ends = 0
            var held: [Data?] = []
        }

        let tally = Protected(Tally())

        init(_ urlRequest: URLRequest, body: Data, streamsMade: Protected<Int>, session: Session) {
            let supply = BodySupply.fresh(length: Int64(body.count), isReplayable: true) {
                streamsMade.write { $0 += 1 }
                return InputStream(data: body)
            }
            super.init(
                underlyingQueue: session.rootQueue, serializationQueue: session.serializationQueue,
                eventMonitor: session.eventMonitor, context: session.context, delegate: session,
                kind: RequestKind(body: .supplied(supply), consumer: .streamed), makeURLRequest: { urlRequest })
        }

        func responseBodyWillBegin(_ head: ResponseHead) { tally.write { $0.heads += 1 } }

        func consume(_ chunk: Data, readiness: TransportReadiness) {
            tally.write {
                $0.chunks += 1
                $0.body.append(chunk)
            }
            readiness.ready()
        }

        func responseBodyDidEnd(error: AFError?, completion: @escaping @Sendable (AFError?) -> Void) {
            tally.write { $0.ends += 1 }
            completion(nil)
        }

        func responseBodyWasHeld(_ body: Data?) { tally.write { $0.held.append(body) } }

        /// Waits for the request to finish.
        func completion() async -> Request.Finished {
            await withCheckedContinuation { continuation in
                appendResponseSerializer { [self] in continuation.resume(returning: finished()) }
            }
        }
    }

    private func put(_ path: String) throws -> URLRequest {
        var request = URLRequest(url: try XCTUnwrap(URL(string: url(path))))
        request.httpMethod = "PUT"
        return request
    }

    func testASixthKindSendsItsOwnBodyAndConsumesTheResponseAsItStreams() async throws {
        let payload = Data((0..<200_000).map { UInt8($0 % 251) })
        let streams = Protected(0)
        let request = TallyingRequest(try put(DrainRoute.path), body: payload, streamsMade: streams, session: session)
        let finished = await request.completion()

        XCTAssertNil(finished.error)
        XCTAssertEqual(finished.response?.statusCode, 200)
        XCTAssertNil(finished.data, "the response streamed to the kind's consumer, not into memory")
        XCTAssertTrue(request.sendsUploadBody)
        XCTAssertEqual(streams.read(), 1)
        let tally = request.tally.read()
        XCTAssertEqual(tally.heads, 1)
        XCTAssertEqual(tally.ends, 1)
        XCTAssertGreaterThan(tally.chunks, 0)
        let drained = try json(tally.body)
        XCTAssertEqual(drained["bytes"] as? Int, payload.count)
        XCTAssertEqual(drained["method"] as? String, "PUT")
        XCTAssertEqual(request.uploadProgress.completedUnitCount, Int64(payload.count))
    }

    func testA307ReplaysTheKindsBodyFromAFreshStreamAndOnlyTheFinalResponseStreams() async throws {
        let payload = Data("sent twice".utf8)
        let streams = Protected(0)
        let target = url(DrainRoute.path).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
        let request = TallyingRequest(
            try put("/redirect-to?status_code=307&url=\(target)"), body: payload, streamsMade: streams,
            session: session)
        let finished = await request.completion()

        XCTAssertNil(finished.error)
        XCTAssertEqual(request.redirectCount, 1)
        XCTAssertEqual(streams.read(), 2, "one fresh stream per send")
        let tally = request.tally.read()
        XCTAssertEqual(tally.heads, 1, "the 307's head was followed, not streamed")
        XCTAssertEqual(tally.ends, 1)
        XCTAssertEqual(try json(tally.body)["bytes"] as? Int, payload.count)
    }
}
