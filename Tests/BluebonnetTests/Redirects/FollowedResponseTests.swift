import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `onFollowedResponse(on:perform:)`: each response a request followed, with the request that hop sent and its body.
final class FollowedResponseTests: FaultServerTestCase {
    /// A URL of the fault server that answers with `status` and `headers`, and the body `ok`.
    private func answering(_ status: String, headers: [String]) -> URL {
        let line = (["HTTP/1.1 \(status)"] + headers).joined(separator: "\r\n")
        let escaped = line.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? line
        return faults.url("/status-line?line=\(escaped)")
    }

    func testEachFollowedResponseIsHandedOverWithItsRequestAndBodyBeforeTheFinalOne() async throws {
        let final = faults.url("/content-length?value=5")
        let second = answering("307 Temporary Redirect", headers: ["Location: \(final.absoluteString)"])
        let first = answering("302 Found", headers: ["Location: \(second.absoluteString)", "X-Hop: 1"])
        let queue = DispatchQueue(label: "followed")
        let seen = Recorder<String>()
        let request = session.request(first).onFollowedResponse(on: queue) { request, response, data in
            seen.append(
                "\(request.url?.absoluteString ?? "?") \(response.statusCode) "
                    + "\(response.value(forHTTPHeaderField: "X-Hop") ?? "-") \(String(decoding: data ?? Data(), as: UTF8.self))"
            )
        }
        let response = await request.serializingData().response
        queue.sync {}
        XCTAssertEqual(response.response?.statusCode, 200)
        XCTAssertEqual(response.data, Data("hello".utf8))
        XCTAssertEqual(
            seen.values, ["\(first.absoluteString) 302 1 ok", "\(second.absoluteString) 307 - ok"])
    }

    func testARequestThatFollowsNothingHandsNothingOver() async throws {
        let seen = Recorder<Int>()
        let response = await session.request(faults.url("/content-length?value=5"))
            .onFollowedResponse(on: .global()) { _, response, _ in seen.append(response.statusCode) }
            .serializingData().response
        XCTAssertEqual(response.response?.statusCode, 200)
        XCTAssertEqual(seen.values, [])
    }
}
