import Bluebonnet
import Foundation
import NIOPosix
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A request resumed on an event loop (as a server's handler does) makes and adapts its `URLRequest` on
/// `requestQueue`: the user's convertible and adapter never run on the loop.
final class CreationOffEventLoopTests: ServerTestCase {
    private struct RecordingConvertible: URLRequestConvertible {
        let url: URL
        let onEventLoop: Recorder<Bool>

        func asURLRequest() throws -> URLRequest {
            onEventLoop.append(MultiThreadedEventLoopGroup.currentEventLoop != nil)
            return URLRequest(url: url)
        }
    }

    func testARequestResumedOnAnEventLoopMakesAndAdaptsItsURLRequestOffIt() async throws {
        let converted = Recorder<Bool>()
        let adapted = Recorder<Bool>()
        let adapter = Adapter { urlRequest, _, completion in
            adapted.append(MultiThreadedEventLoopGroup.currentEventLoop != nil)
            completion(.success(urlRequest))
        }
        let session = try XCTUnwrap(session)
        let convertible = RecordingConvertible(url: server.url("/get"), onEventLoop: converted)
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let made = try await loop.submit {
            let request = session.request(convertible, interceptor: adapter)
            request.resume()
            return request
        }.get()
        let response = await made.serializingData().response
        XCTAssertEqual(response.response?.statusCode, 200)
        XCTAssertEqual(converted.values, [false], "the convertible ran on an event loop")
        XCTAssertEqual(adapted.values, [false], "the adapter ran on an event loop")
    }

    func testARequestResumedOffAnEventLoopMakesItsURLRequestInline() async throws {
        let converted = Recorder<Bool>()
        let convertible = RecordingConvertible(url: server.url("/get"), onEventLoop: converted)
        let request = session.request(convertible)
        request.resume()
        // Inline: made before `resume()` returned, with no hop.
        XCTAssertEqual(converted.values, [false])
        _ = await request.serializingData().response
    }
}
