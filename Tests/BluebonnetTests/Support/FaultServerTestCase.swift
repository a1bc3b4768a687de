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
}
