import Foundation
import NIOCore
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
@_spi(Transport) @testable import Bluebonnet

/// The frame handling on its own, byte by byte: what a server's frames make of the socket, and when it is read.
final class WebSocketFrameTests: XCTestCase {
    typealias Harness = WebSocketFrameHarness

    func testPingsAreAnsweredAndAFloodOfThemIsNotReadWhileThePongsWait() throws {
        let harness = try Harness()
        harness.feed(Harness.frame(0x9, [1, 2, 3]))
        XCTAssertEqual(harness.written().map(\.opcode), [.pong])

        // The server reads none of the pongs: once the socket takes no more, no more is read.
        harness.channel.isWritable = false
        harness.channel.pipeline.fireChannelWritabilityChanged()
        harness.feed((0..<100).flatMap { _ in Harness.frame(0x9, [7]) })
        let before = harness.reads.reads
        harness.channel.read()
        XCTAssertEqual(harness.reads.reads, before, "a read was asked for while the pongs could not be written")
        harness.channel.isWritable = true
        harness.channel.pipeline.fireChannelWritabilityChanged()
        XCTAssertEqual(harness.reads.reads, before + 1, "the held read goes once the socket takes writes again")
    }

    func testReadsWaitForTheSinkToHaveRoom() throws {
        let harness = try Harness()
        harness.sink.holds = true
        harness.feed(Harness.frame(0x1, Array("one".utf8)))
        let before = harness.reads.reads
        harness.channel.read()
        XCTAssertEqual(harness.reads.reads, before)
        harness.sink.held.removeFirst().ready()
        harness.channel.embeddedEventLoop.run()
        XCTAssertEqual(harness.reads.reads, before + 1)
        XCTAssertEqual(harness.sink.messages.count, 1)
    }

    func testAControlFrameBetweenFragmentsIsAnsweredAndTheMessageKeptWhole() throws {
        let harness = try Harness()
        harness.feed(
            Harness.frame(0x1, Array("hel".utf8), fin: false) + Harness.frame(0x9, [9])
                + Harness.frame(0x0, Array("lo".utf8)))
        XCTAssertEqual(harness.sink.messages.map(\.text), ["hello"])
        XCTAssertEqual(harness.written().map(\.opcode), [.pong])
    }

    func testATextMessageSplitInsideACharacterIsValidatedWhole() throws {
        let harness = try Harness()
        let bytes = Array("é".utf8)
        harness.feed(Harness.frame(0x1, [bytes[0]], fin: false) + Harness.frame(0x0, [bytes[1]]))
        XCTAssertEqual(harness.sink.messages.map(\.text), ["é"])
    }

    func testAnEmptyCloseIsEchoedWithoutAStatus() throws {
        let harness = try Harness()
        harness.feed(Harness.frame(0x8, []))
        XCTAssertEqual(harness.sink.closes.map(\.code), [1005])
        let written = harness.written()
        XCTAssertEqual(written.map(\.opcode), [.connectionClose])
        XCTAssertEqual(written.first?.payload, [])
    }

    func testACompressedMessageIsRefusedWhenNothingWasNegotiated() throws {
        let harness = try Harness()
        harness.feed(Harness.frame(0x2, [0x00], rsv1: true))
        XCTAssertTrue(harness.sink.messages.isEmpty)
        guard case let .sessionTaskFailed(error as WebSocketProtocolError)?? = harness.sink.ends.first else {
            return XCTFail("\(harness.sink.ends)")
        }
        XCTAssertEqual(error.closeCode, .protocolError)
    }

    func testAMessageThatDoesNotInflateFailsTheSocket() throws {
        let harness = try Harness(compression: true)
        harness.feed(Harness.frame(0x2, [0xFF, 0xFF, 0xFF, 0xFF], rsv1: true))
        XCTAssertTrue(harness.sink.messages.isEmpty)
        XCTAssertEqual(harness.written().map(\.opcode), [.connectionClose])
    }

    func testAClosedSocketsHandlerIsReleased() throws {
        // Found by the fuzzer's leak check: the handler kept its context, which keeps the handler.
        weak var released: WebSocketFrameHandler?
        do {
            let harness = try Harness(compression: true)
            released = harness.frames
            harness.feed(Harness.frame(0x8, [0x03, 0xE8]))
            harness.finish()
        }
        XCTAssertNil(released, "a closed socket's handler, and its compression streams, stayed in memory")
    }

    func testTheExtensionAnswerIsCheckedParameterByParameter() throws {
        XCTAssertFalse(try PerMessageDeflate.accepts([]))
        XCTAssertTrue(try PerMessageDeflate.accepts(["permessage-deflate"]))
        XCTAssertTrue(try PerMessageDeflate.accepts(["permessage-deflate; server_no_context_takeover"]))
        XCTAssertTrue(try PerMessageDeflate.accepts(["permessage-deflate; server_max_window_bits=10"]))
        for refused in [
            "permessage-deflate; client_max_window_bits=10", "permessage-deflate; server_max_window_bits=16",
            "permessage-deflate; server_no_context_takeover; server_no_context_takeover",
            "permessage-deflate, permessage-deflate", "x-webkit-deflate-frame", "permessage-deflate; mystery",
            "permessage-deflate; server_no_context_takeover=1",
            // Found by the fuzzer: an empty parameter was read past its end.
            "permessage-deflate; ; x", "permessage-deflate; =1", "permessage-deflate; server_max_window_bits=",
        ] {
            XCTAssertThrowsError(try PerMessageDeflate.accepts([refused]), refused)
        }
    }
}
