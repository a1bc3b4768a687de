import Bluebonnet
import BluebonnetTesting
import Foundation
import XCTest

/// A request's `id` is a random (version 4, RFC 9562 variant) UUID, as `UUID()` makes, and no two are alike; it is
/// made from the system generator rather than Foundation's `/dev/urandom` read.
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
}
