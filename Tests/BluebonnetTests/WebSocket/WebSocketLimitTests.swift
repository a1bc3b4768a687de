@testable import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A hostile WebSocket server: messages past the limit refused as they are read (not buffered), fragments
/// reassembled within it, every breach of RFC 6455 closing the socket with the code the RFC gives, and a handler that
/// falls behind stopping the reads.
final class WebSocketLimitTests: WebSocketTestCase {
    private func limitError(_ completion: WebSocketRequest.Completion?) -> Int? {
        guard case let .responseLimitExceeded(.webSocketMessageTooLarge(limit))? = completion?.error else { return nil }
        return limit
    }

    func testAMessageLargerThanTheLimitIsRefused() async throws {
        let request = session.webSocketRequest(
            to: server.url("/big?size=2000"), configuration: .maximumMessageSize(1000))
        let events = await events(of: request)

        XCTAssertEqual(names(events), ["connected", "completed"])
        XCTAssertEqual(limitError(completion(events)), 1000)
        await eventually("the server heard 1009") { server.closeCodesReceived == [1009] }
    }

    func testFragmentsAreReassembledWithinTheLimit() async throws {
        let request = session.webSocketRequest(
            to: server.url("/big?size=900000&fragments=9"), configuration: .maximumMessageSize(1_000_000))
        let events = await events(of: request) { event in
            if event.message != nil { event.close(sending: .normalClosure) }
        }

        let message = try XCTUnwrap(messages(events).first?.bytes)
        XCTAssertEqual(message.count, 900_000)
        // Each fragment's bytes are the offset it began at, truncated: the order survived.
        XCTAssertEqual(message[0], 0)
        XCTAssertEqual(message[100_000], UInt8(truncatingIfNeeded: 100_000))
        XCTAssertEqual(message[899_999], UInt8(truncatingIfNeeded: 800_000))
        XCTAssertNil(completion(events)?.error)
    }

    func testReassemblingManySmallFragmentsMovesBytesInProportionToTheMessage() async throws {
        // 4,096 fragments of 256 bytes: copying the message so far for each fragment moved about 2 GiB for this 1 MiB.
        let size = 4096 * 256
        let request = session.webSocketRequest(
            to: server.url("/big?size=\(size)&fragments=4096"), configuration: .maximumMessageSize(2 * size))
        let events = await events(of: request) { event in
            if event.message != nil { event.close(sending: .normalClosure) }
        }

        let message = try XCTUnwrap(messages(events).first?.bytes)
        XCTAssertEqual(message.count, size)
        XCTAssertNil(completion(events)?.error)
        let transport = try XCTUnwrap(session.webSocketTransport as? NIOWebSocketTransport)
        let moved = transport.reassemblyCopies.read()
        XCTAssertGreaterThanOrEqual(moved, size - 256, "every continuation's bytes are counted")
        XCTAssertLessThan(moved, 3 * size, "bytes moved to reassemble a message of \(size): \(moved)")
    }

    func testFragmentsThatTogetherPassTheLimitAreRefused() async throws {
        let request = session.webSocketRequest(
            to: server.url("/big?size=1500000&fragments=10"), configuration: .maximumMessageSize(1_000_000))
        let events = await events(of: request)

        XCTAssertEqual(names(events), ["connected", "completed"])
        XCTAssertEqual(limitError(completion(events)), 1_000_000)
    }

    func testAGigabyteFrameIsRefusedAtItsHeaderNotBuffered() async throws {
        // The server announces 1 GiB and sends three bytes: waiting for the rest would hang; refusing reads nothing.
        let request = session.webSocketRequest(to: server.url("/fault?kind=hugeframe"))
        let events = await events(of: request)

        XCTAssertEqual(limitError(completion(events)), 1_048_576)
    }

    func testCompressedMessagesAreInflated() async throws {
        let request = session.webSocketRequest(to: server.url("/deflate?text=h%C3%A9llo&size=100000"))
        let events = await events(of: request)

        XCTAssertEqual(messages(events).first?.text, "héllo")
        XCTAssertEqual(messages(events).last?.bytes, Data(count: 100_000))
        XCTAssertNil(completion(events)?.error)
    }

    func testACompressionBombStopsAtTheLimit() async throws {
        // 50 MB of zeros deflate to about 50 KB: inflated whole, they would pass the limit 50 times over.
        let request = session.webSocketRequest(
            to: server.url("/deflate?size=50000000"), configuration: .maximumMessageSize(1_000_000))
        let events = await events(of: request)

        XCTAssertEqual(names(events), ["connected", "completed"])
        XCTAssertEqual(limitError(completion(events)), 1_000_000)
        await eventually("the server heard 1009") { server.closeCodesReceived == [1009] }
    }

    func testTheDefaultLimitIsAlamofiresMegabyte() {
        XCTAssertEqual(WebSocketRequest.Configuration.default.maximumMessageSize, 1_048_576)
        XCTAssertNil(WebSocketRequest.Configuration.default.protocol)
        XCTAssertNil(WebSocketRequest.Configuration.default.pingInterval)
    }

    func testEachBreachOfTheProtocolClosesWithItsCode() async throws {
        let cases: [(String, URLSessionWebSocketTask.CloseCode)] = [
            ("masked", .protocolError), ("reserved", .protocolError), ("badutf8", .invalidFramePayloadData),
            ("continuation", .protocolError), ("reservedclose", .protocolError), ("bigcontrol", .protocolError),
        ]
        for (kind, code) in cases {
            let request = session.webSocketRequest(to: server.url("/fault?kind=\(kind)"))
            let events = await events(of: request)
            XCTAssertEqual(names(events), ["connected", "completed"], kind)
            XCTAssertEqual(protocolError(completion(events))?.closeCode, code, kind)
        }
        await eventually("the server heard every close") { server.closeCodesReceived.count == cases.count }
        XCTAssertEqual(server.closeCodesReceived.sorted(), cases.map { UInt16($0.1.rawValue) }.sorted())
    }

    func testAFrameCutShortFailsAsALostConnection() async throws {
        let request = session.webSocketRequest(to: server.url("/fault?kind=truncated"))
        let events = await events(of: request)

        XCTAssertEqual(completion(events)?.error?.urlErrorCode, .networkConnectionLost)
    }

    func testAWrongAcceptKeyFailsTheUpgrade() async throws {
        let request = session.webSocketRequest(to: server.url("/fault?kind=badaccept"))
        let events = await events(of: request)

        XCTAssertEqual(names(events), ["completed"])
        XCTAssertEqual(completion(events)?.error?.urlErrorCode, .badServerResponse)
    }

    func testAFloodOfClosesIsOneClose() async throws {
        let request = session.webSocketRequest(to: server.url("/fault?kind=closeflood"))
        let events = await events(of: request)

        XCTAssertEqual(names(events), ["connected", "disconnected", "completed"])
        XCTAssertNil(completion(events)?.error)
    }

    func testAHandlerThatFallsBehindStopsTheReads() async throws {
        // 400 messages of 256 KiB (100 MiB): were the socket read regardless, the server would write them all.
        let count = 400
        let request = session.webSocketRequest(
            to: server.url("/flood?count=\(count)&size=262144"), configuration: .maximumMessageSize(1 << 20))
        let gate = DispatchSemaphore(value: 0)
        let received = Recorder<Int>()
        let done = expectation(description: "completed")
        request.streamMessageEvents(on: DispatchQueue(label: "slow")) { event in
            if let message = event.message {
                if received.values.isEmpty { gate.wait() }
                received.append(message.bytes?.count ?? 0)
            }
            if case .completed = event.kind { done.fulfill() }
        }
        await eventually("the server waits for the client to read") {
            server.floodIsWaiting && server.floodWritten > 0
        }
        let writtenWhileBlocked = server.floodWritten
        XCTAssertLessThan(writtenWhileBlocked, count / 2, "the server could write \(writtenWhileBlocked) messages")
        gate.signal()
        await fulfillment(of: [done], timeout: 60)
        XCTAssertEqual(received.values.count, count)
        XCTAssertEqual(Set(received.values), [262_144])
    }
}

extension WebSocketLimitTests {
    func testAnUpgradeNobodyAnswersTimesOut() async throws {
        let faults = try await FaultServer.start()
        let configuration = URLSessionConfiguration.af.default
        configuration.timeoutIntervalForRequest = 0.5
        let session = Session(configuration: configuration)
        let started = Date()
        let events = await events(of: session.webSocketRequest(to: "ws://127.0.0.1:\(faults.port)/silent"))
        XCTAssertEqual(completion(events)?.error?.urlErrorCode, .timedOut)
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(started), 0.45)
        await faults.stop()
    }

    func testTheRequestsOwnTighterTimeoutApplies() async throws {
        let faults = try await FaultServer.start()
        var request = URLRequest(url: URL(string: "ws://127.0.0.1:\(faults.port)/silent")!)
        request.timeoutInterval = 0.5
        let started = Date()
        let events = await events(of: session.webSocketRequest(performing: request))
        XCTAssertEqual(completion(events)?.error?.urlErrorCode, .timedOut)
        XCTAssertLessThan(Date().timeIntervalSince(started), 30, "the session's 60 s, not the request's 0.5 s")
        await faults.stop()
    }
}
