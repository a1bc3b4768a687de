import Foundation
import XCTest

/// `--sorted` (the default) and `--unsorted`, in httpie's spelling: headers and JSON keys as the server sent them.
extension BonnetCommandTests {
    func testHeadersAreSortedByDefaultAndInTheServersOrderWhenUnsorted() async throws {
        let target = url("/response-headers?Zeta=1&Alpha=2")
        let sorted = try await bonnet(["--pretty=format", "-h", target])
        let unsorted = try await bonnet(["--pretty=format", "-h", "--unsorted", target])
        func position(_ name: String, in text: String) -> String.Index? { text.range(of: "\n\(name): ")?.lowerBound }
        XCTAssertLessThan(
            try XCTUnwrap(position("Alpha", in: sorted.output)), try XCTUnwrap(position("Zeta", in: sorted.output)))
        XCTAssertLessThan(
            try XCTUnwrap(position("Zeta", in: unsorted.output)), try XCTUnwrap(position("Alpha", in: unsorted.output)))
    }

    func testUnsortedJSONKeepsTheServersKeyOrderAndIsStillIndented() async throws {
        let body = Data(#"{"z":1, "a":{"y":[1,{},[ ]],"b":"x:,{\"}"}}"#.utf8)
        let run = try await bonnet(
            ["--pretty=format", "--unsorted", "POST", url("/echo?content_type=application/json")], stdin: body)
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertEqual(
            run.output,
            """
            {
              "z" : 1,
              "a" : {
                "y" : [
                  1,
                  {},
                  []
                ],
                "b" : "x:,{\\"}"
              }
            }

            """)
        let sorted = try await bonnet(
            ["--pretty=format", "POST", url("/echo?content_type=application/json")], stdin: body)
        XCTAssertLessThan(
            try XCTUnwrap(sorted.output.range(of: "\"a\"")).lowerBound,
            try XCTUnwrap(sorted.output.range(of: "\"z\"")).lowerBound)
        let both = try await bonnet(["--sorted", "--unsorted", url("/get")])
        XCTAssertNotEqual(both.status, 0)
    }
}
