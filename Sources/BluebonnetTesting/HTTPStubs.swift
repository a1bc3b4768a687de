import Bluebonnet
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Stubbed responses for the requests of sessions made with them, and a record of every request those sessions made.
///
/// ```swift
/// let stubs = HTTPStubs()
/// stubs.stub(.get, "https://api.example.com/user", try .json(User(name: "bonnet")))
/// let session = Session(stubs: stubs)
/// let user = try await session.request("https://api.example.com/user").serializingDecodable(User.self).value
/// XCTAssertEqual(stubs.requests.map(\.method), [.get])
/// ```
///
/// Requests reach the stubs through a `URLProtocol` in the session's configuration, so everything downstream
/// (validation, serializers, retry, redirects, downloads, streams, event monitors) runs as it does against a server.
/// Like OHHTTPStubs and Mocker, the stubs are process-wide while they exist: a session made with any `HTTPStubs`
/// reaches the stubs of all of them, newest first. A request no stub matches fails with
/// `URLError(.resourceUnavailable)`, or goes to the network with `unmatchedRequests: .network`.
public final class HTTPStubs: @unchecked Sendable {
    // @unchecked: `routes`, `received` and `missed` are behind `lock`.

    /// What happens to a request no stub matches.
    public enum UnmatchedRequests: Sendable {
        /// It fails with `URLError(.resourceUnavailable)` and is recorded in `unmatched`.
        case fail
        /// It goes to the network.
        case network
    }

    private struct Route {
        let matches: @Sendable (URLRequest) -> Bool
        var responses: [StubResponse]
    }

    private let lock = NSLock()
    private var routes: [Route] = []
    private var received: [RecordedRequest] = []
    private var missed: [RecordedRequest] = []

    /// What happens to a request no stub matches.
    public let unmatchedRequests: UnmatchedRequests

    /// Makes an empty set of stubs, active until it is deinitialised or `deactivate()` is called.
    ///
    /// - Parameter unmatchedRequests: What happens to a request no stub matches. `.fail` by default.
    public init(unmatchedRequests: UnmatchedRequests = .fail) {
        self.unmatchedRequests = unmatchedRequests
        StubRegistry.shared.add(self)
    }

    deinit {
        StubRegistry.shared.remove(self)
    }

    /// Stops answering: requests go on as if these stubs did not exist.
    public func deactivate() {
        StubRegistry.shared.remove(self)
    }

    /// Answers requests to `url` with `method` with `responses` in turn, the last one repeating.
    ///
    /// - Parameters:
    ///   - method:    The method to match.
    ///   - url:       The URL: matched whole when it has a query, else by scheme, host, port and path (any query).
    ///   - responses: The answers, in order.
    /// - Returns: The stubs.
    @discardableResult
    public func stub(_ method: HTTPMethod, _ url: String, _ responses: StubResponse...) -> Self {
        stub(matching: method, url, responses)
    }

    private func stub(matching method: HTTPMethod?, _ url: String, _ responses: [StubResponse]) -> Self {
        let pattern = URLComponents(string: url)
        let methodName = method?.rawValue
        return stub(
            where: { request in
                if let methodName, (request.httpMethod ?? "GET").uppercased() != methodName.uppercased() {
                    return false
                }
                guard let pattern,
                    let target = request.url.flatMap({ URLComponents(url: $0, resolvingAgainstBaseURL: false) })
                else { return false }
                if pattern.query != nil { return pattern.string == target.string }
                return pattern.scheme?.lowercased() == target.scheme?.lowercased()
                    && pattern.host?.lowercased() == target.host?.lowercased() && pattern.port == target.port
                    && (pattern.path.isEmpty ? "/" : pattern.path) == (target.path.isEmpty ? "/" : target.path)
            }, responses)
    }

    /// Answers requests to `url` with any method with `responses` in turn, the last one repeating.
    @discardableResult
    public func stub(_ url: String, _ responses: StubResponse...) -> Self {
        stub(matching: nil, url, responses)
    }

    /// Answers the requests `predicate` accepts with `responses` in turn, the last one repeating.
    @discardableResult
    public func stub(where predicate: @escaping @Sendable (URLRequest) -> Bool, _ responses: StubResponse...) -> Self {
        stub(where: predicate, responses)
    }

    private func stub(where predicate: @escaping @Sendable (URLRequest) -> Bool, _ responses: [StubResponse]) -> Self {
        guard !responses.isEmpty else { return self }
        lock.withLock { routes.append(Route(matches: predicate, responses: responses)) }
        return self
    }

    /// Every request a stub answered, in order.
    public var requests: [RecordedRequest] { lock.withLock { received } }

    /// The requests no stub matched (with `unmatchedRequests: .fail`).
    public var unmatched: [RecordedRequest] { lock.withLock { missed } }

    /// Removes every stub and every record.
    public func reset() {
        lock.withLock {
            routes = []
            received = []
            missed = []
        }
    }

    /// `configuration` (a copy) with the stubs' `URLProtocol` first among its protocol classes.
    public func configuration(
        _ configuration: URLSessionConfiguration = URLSessionConfiguration.af.default
    ) -> URLSessionConfiguration {
        let copy = configuration.copy() as? URLSessionConfiguration ?? configuration
        copy.protocolClasses = [HTTPStubsProtocol.self] + (copy.protocolClasses ?? [])
        return copy
    }

    // MARK: - For the protocol

    /// Whether a route matches `request`.
    func matches(_ request: URLRequest) -> Bool {
        lock.withLock { routes.contains { $0.matches(request) } }
    }

    /// The next answer of the first route matching `request`, recording the request.
    func answer(_ request: RecordedRequest) -> StubResponse? {
        lock.withLock {
            // The newest route first, so a later stub overrides an earlier one.
            guard let index = routes.lastIndex(where: { $0.matches(request.urlRequest) }) else { return nil }
            received.append(request)
            let response = routes[index].responses[0]
            if routes[index].responses.count > 1 { routes[index].responses.removeFirst() }
            return response
        }
    }

    func recordUnmatched(_ request: RecordedRequest) {
        lock.withLock { missed.append(request) }
    }
}

/// The `HTTPStubs` alive now, newest first.
final class StubRegistry: @unchecked Sendable {
    // @unchecked: `entries` is behind `lock`.
    static let shared = StubRegistry()

    private struct Entry {
        weak var stubs: HTTPStubs?
        let id: ObjectIdentifier
    }

    private let lock = NSLock()
    private var entries: [Entry] = []

    func add(_ stubs: HTTPStubs) {
        lock.withLock { entries.insert(Entry(stubs: stubs, id: ObjectIdentifier(stubs)), at: 0) }
    }

    func remove(_ stubs: HTTPStubs) {
        let id = ObjectIdentifier(stubs)
        lock.withLock { entries.removeAll { $0.id == id || $0.stubs == nil } }
    }

    var active: [HTTPStubs] { lock.withLock { entries.compactMap(\.stubs) } }
}
