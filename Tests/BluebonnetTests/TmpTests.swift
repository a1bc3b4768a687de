import XCTest
final class TmpTests: XCTestCase { func testX() {} }
