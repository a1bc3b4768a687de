@_spi(Transport) @testable import Bluebonnet
import BluebonnetTestServer
import Foundation
import NIOCore
import NIOPosix
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request's delegate runs on the loop of the connection a finished request just freed (`LoopAffinity`), so a
/// client making one request after another on one connection never crosses loops; a caller on an event loop keeps
/// its own loop.
final class LoopAffinityTests: ServerTestCase {
    /// The engine under test: the session's, without the session, so a test sees the loop each attempt ends on.
    private lazy var transport = AsyncHTTPClientTransport(
        configuration: TransportConfiguration(requestTimeout: 30, maximumConnectionsPerHost: 8))

    override func tearDown() async throws {
        transport.shutdown()
        try await super.tearDown()
    }

    private func send(_ path: String) -> CompletionSink {
        Self.send(server.url(path), on: transport)
    }

    private static func send(_ url: URL, on transport: AsyncHTTPClientTransport) -> CompletionSink {
        CompletionSink.start(url, on: transport).0
    }

    func testSequentialRequestsStayOnTheLoopOfTheirConnection() async throws {
        // With the group's loops taken in turn, every other request would run on the loop without the connection.
        try XCTSkipIf(Array(MultiThreadedEventLoopGroup.singleton.makeIterator()).count < 2, "one loop only")
        var loops: [ObjectIdentifier] = []
        for _ in 0..<8 {
            let sink = send("/get")
            let error = await sink.completion()
            XCTAssertNil(error)
            loops.append(ObjectIdentifier(try XCTUnwrap(sink.completionLoop)))
        }
        XCTAssertEqual(Set(loops).count, 1, "the requests' delegates ran on \(Set(loops).count) loops")
    }

    func testACallerOnAnEventLoopKeepsItsOwnLoop() async throws {
        _ = await send("/get").completion()
        // A request finished, so a loop waits in the table; a caller on a loop still hears on its own.
        let (url, transport) = (server.url("/get"), transport)
        for loop in MultiThreadedEventLoopGroup.singleton.makeIterator() {
            let sink = try await loop.submit { Self.send(url, on: transport) }.get()
            _ = await sink.completion()
            XCTAssertTrue(sink.completionLoop === loop, "a request made on a loop was heard on another")
        }
    }
}
