import Bluebonnet
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What a stub answers.
public struct StubResponse: Sendable {
    enum Body: Sendable {
        case chunks([Data])
        case file(URL)
    }

    enum Kind: Sendable {
        case respond(status: Int, headers: HTTPHeaders, body: Body)
        case fail(any Error)
        case redirect(to: URL, status: Int)
        case script(@Sendable (StubConnection) async -> Void)
    }

    let kind: Kind
    /// How long the stub waits before it answers.
    var delay: TimeInterval = 0

    /// A response with `data` as its body.
    ///
    /// - Parameters:
    ///   - data:    The body.
    ///   - status:  The status code. 200 by default.
    ///   - headers: The header fields. `Content-Length` is added when absent.
    public static func data(_ data: Data, status: Int = 200, headers: HTTPHeaders = [:]) -> StubResponse {
        chunks([data], status: status, headers: headers)
    }

    /// A response with `text` (UTF-8) as its body, `text/plain` unless `headers` say otherwise.
    public static func string(_ text: String, status: Int = 200, headers: HTTPHeaders = [:]) -> StubResponse {
        var headers = headers
        if headers.value(for: "Content-Type") == nil { headers.add(.contentType("text/plain; charset=utf-8")) }
        return data(Data(text.utf8), status: status, headers: headers)
    }

    /// A response with `value` encoded as JSON, `application/json` unless `headers` say otherwise.
    ///
    /// - Throws: The encoder's error.
    public static func json(
        _ value: some Encodable, status: Int = 200, headers: HTTPHeaders = [:], encoder: JSONEncoder = JSONEncoder()
    ) throws -> StubResponse {
        var headers = headers
        if headers.value(for: "Content-Type") == nil { headers.add(.contentType("application/json")) }
        return data(try encoder.encode(value), status: status, headers: headers)
    }

    /// A response whose body arrives in these chunks, each delivered apart (no `Content-Length` unless given).
    public static func chunks(_ chunks: [Data], status: Int = 200, headers: HTTPHeaders = [:]) -> StubResponse {
        StubResponse(kind: .respond(status: status, headers: headers, body: .chunks(chunks)))
    }

    /// A response whose body is the file at `url`, read in chunks when the stub answers.
    public static func file(_ url: URL, status: Int = 200, headers: HTTPHeaders = [:]) -> StubResponse {
        StubResponse(kind: .respond(status: status, headers: headers, body: .file(url)))
    }

    /// No response: the request fails with `error` (an `AFError.sessionTaskFailed` carrying it).
    public static func error(_ error: any Error) -> StubResponse {
        StubResponse(kind: .fail(error))
    }

    /// A redirect to `url`, which the session follows by its rules.
    public static func redirect(to url: URL, status: Int = 302) -> StubResponse {
        StubResponse(kind: .redirect(to: url, status: status))
    }

    /// The test plays the server by hand: `script` receives the connection and sends the head, the chunks and the
    /// end (or a failure) when it chooses, and can wait for the client to stop loading. For race tests that need
    /// events in an exact order.
    public static func script(_ script: @escaping @Sendable (StubConnection) async -> Void) -> StubResponse {
        StubResponse(kind: .script(script))
    }

    /// The same response after `seconds`.
    public func delayed(by seconds: TimeInterval) -> StubResponse {
        var delayed = self
        delayed.delay = max(0, seconds)
        return delayed
    }
}
