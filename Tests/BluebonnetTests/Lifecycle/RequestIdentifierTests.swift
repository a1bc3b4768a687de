@testable import Bluebonnet
import BluebonnetTesting
import Foundation
import XCTest

/// A request's `id` is a random (version 4, RFC 9562 variant) UUID, as `UUID()` makes, and no two are alike; it is
/// made from kernel bytes fetched 256 at a time (`RandomBytes`) rather than Foundation's `/dev/urandom` read.
final class RequestIdentifierTests: XCTestCase {
    func testEveryRequestHasItsOwnVersion4UUID() {
        let session = StubTransport().session(startRequestsImmediately: false)
        let ids = (0..<2_000).map { _ in session.request("https://api.example.com/").id }
        XCTAssertEqual(Set(ids).count, ids.count)
        for id in ids {
            let bytes = withUnsafeBytes(of: id.uuid) { Array($0) }
            XCTAssertEqual(bytes[6] >> 4, 4, "version 4: \(id)")
            XCTAssertEqual(bytes[8] >> 6, 0b10, "RFC 9562 variant: \(id)")
        }
        // Random bits everywhere else: across 2,000 ids, every other bit is set in some and clear in others.
        for byte in 0..<16 {
            for bit in 0..<8 where !(byte == 6 && bit >= 4) && !(byte == 8 && bit >= 6) {
                let set = ids.filter { withUnsafeBytes(of: $0.uuid) { $0[byte] } & (1 << bit) != 0 }.count
                XCTAssertTrue(set > 0 && set < ids.count, "byte \(byte) bit \(bit) is constant")
            }
        }
    }

    func testTheRandomPoolNeverHandsOutTheSameBytesTwiceAcrossThreads() {
        // Many refills (16 UUIDs a refill), from 4 threads at once.
        let perThread = 1_000
        let made = Protected([UUID]())
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let mine = (0..<perThread).map { _ in UUID.random() }
            made.write { $0 += mine }
        }
        let all = made.read { $0 }
        XCTAssertEqual(all.count, 4 * perThread)
        XCTAssertEqual(Set(all).count, all.count, "a UUID was made twice")
    }
}
