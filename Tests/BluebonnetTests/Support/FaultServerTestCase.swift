import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A test case with its own raw-socket `FaultServer` and a `Session` made by `makeSession()`.
class FaultServerTestCase: XCTestCase {
    var faults: FaultServer!
    var session: Session!

    /// The session each test starts with; subclasses may configure their own.
    func makeSession() -> Session { Session() }

    override func setUp() async throws {
        try await super.setUp()
        faults = try await FaultServer.start()
        session = makeSession()
    }

    override func tearDown() async throws {
        session = nil
        await faults?.stop()
        faults = nil
        try await super.tearDown()
    }

    /// A barrier instead of a sleep: returns once the server has received `count` requests for `path` (without its
    /// query), so a test acts while they are on the wire. Its 30 s are a hang guard only.
    func arrival(of path: String, count: Int = 1, file: StaticString = #filePath, line: UInt = #line) async {
        let arrived = await faults.arrivals.wait(forPath: path, count: count, timeout: 30)
        XCTAssertTrue(arrived, "the server never received \(count) request(s) for \(path)", file: file, line: line)
    }
}
