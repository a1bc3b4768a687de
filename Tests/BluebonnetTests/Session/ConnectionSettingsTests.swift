import Bluebonnet
import BluebonnetTestServer
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The engine's knobs (`ConnectionSettings`) over real sockets: which address a host name reaches, which address a
/// connection comes from, how many requests a connection carries, how long an idle one is kept, how long connecting may
/// take, and Unix-domain sockets.
final class ConnectionSettingsTests: ServerTestCase {
    /// The client's address and port for a request, from the test server's `/peer`.
    private func peer(_ session: Session, _ path: String = "/peer") async throws -> (address: String, port: Int) {
        let response = await session.request(url(path)).serializingData().response
        let object = try json(response.data)
        return (try XCTUnwrap(object["address"] as? String), try XCTUnwrap(object["port"] as? Int))
    }

    func testADNSOverrideConnectsToTheGivenAddressAndKeepsTheHostName() async throws {
        let session = Session(
            connections: Session.ConnectionSettings(dnsOverrides: ["bluebonnet.invalid": "127.0.0.1"]))
        let response = await session.request("http://bluebonnet.invalid:\(server.port)/get").serializingData().response
        XCTAssertNil(response.error)
        let echo = try json(response.data)
        XCTAssertEqual((echo["headers"] as? [String: String])?["Host"], "bluebonnet.invalid:\(server.port)")
        // Without the override the name does not resolve.
        let plain = await Session().request("http://bluebonnet.invalid:\(server.port)/get").serializingData().response
        XCTAssertNotNil(plain.error)
    }

    func testConnectionsComeFromTheLocalAddress() async throws {
        let session = Session(connections: Session.ConnectionSettings(localAddress: "127.0.0.2"))
        let bound = try await peer(session).address
        let unbound = try await peer(Session()).address
        XCTAssertEqual(bound, "127.0.0.2")
        XCTAssertEqual(unbound, "127.0.0.1")
    }

    func testAConnectionCarriesAtMostMaximumUsesRequests() async throws {
        let limited = Session(connections: Session.ConnectionSettings(maximumUsesPerConnection: 2))
        var ports: [Int] = []
        for _ in 0..<3 { ports.append(try await peer(limited).port) }
        XCTAssertEqual(ports[0], ports[1], "the first two requests share a connection")
        XCTAssertNotEqual(ports[1], ports[2], "the third needs a new one")
        let unlimited = Session()
        var reused: [Int] = []
        for _ in 0..<3 { reused.append(try await peer(unlimited).port) }
        XCTAssertEqual(Set(reused).count, 1)
    }

    func testAnIdleConnectionIsClosedAfterTheIdleConnectionTimeout() async throws {
        let session = Session(connections: Session.ConnectionSettings(idleConnectionTimeout: 0.2))
        let first = try await peer(session).port
        // The server sees the client close the idle connection (a barrier; 30 s is a hang guard, and with the default
        // 60 s idle timeout it would expire first).
        let closed = await server.closedConnections.wait(forPath: "/\(first)", timeout: 30)
        XCTAssertTrue(closed, "the idle connection was never closed")
        let second = try await peer(session).port
        XCTAssertNotEqual(second, first)
    }

    func testAConnectTimeoutEndsAConnectionThatNeverCompletes() async throws {
        let listener = try FullBacklogListener()
        defer { listener.close() }
        let configuration = URLSessionConfiguration.af.default
        configuration.timeoutIntervalForRequest = 120
        let session = Session(
            configuration: configuration, connections: Session.ConnectionSettings(connectTimeout: 0.3))
        let response = await session.request("http://127.0.0.1:\(listener.port)/get").serializingData().response
        guard case let .sessionTaskFailed(error)? = response.error else {
            return XCTFail("\(String(describing: response.error))")
        }
        XCTAssertEqual((error as? URLError)?.code, .timedOut, "\(error)")
    }

    func testInvalidSettingsFailEveryRequestWithTheReason() async throws {
        for settings in [
            Session.ConnectionSettings(maximumUsesPerConnection: 0),
            Session.ConnectionSettings(idleConnectionTimeout: -1),
            Session.ConnectionSettings(localAddress: "not-an-address"),
            Session.ConnectionSettings(connectTimeout: 0),
        ] {
            let session = Session(connections: settings)
            let response = await session.request(url("/get")).serializingData().response
            guard case let .sessionInvalidated(error)? = response.error,
                let problem = error as? Session.ConfigurationError
            else { return XCTFail("\(String(describing: response.error))") }
            XCTAssertFalse(problem.problem.isEmpty)
            XCTAssertEqual(server.arrivals.targets.filter { $0 == "/get" }.count, 0, "nothing was sent")
        }
    }

    func testAUnixDomainSocketIsReachedThroughAnHTTPUnixURL() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "bb-\(UUID().uuidString.prefix(8)).sock"
        )
        .path
        let unixServer = try await TestServer.start(unixSocketPath: path)
        defer { try? FileManager.default.removeItem(atPath: path) }
        XCTAssertEqual(unixServer.baseURL.scheme, "http+unix")
        let response = await session.request(unixServer.url("/get?a=1")).serializingData().response
        await unixServer.stop()
        XCTAssertNil(response.error)
        XCTAssertEqual(response.response?.statusCode, 200)
        XCTAssertEqual((try json(response.data)["args"] as? [String: String])?["a"], "1")
    }

    func testARedirectFromTheNetworkToAUnixSocketIsRefused() async throws {
        let target = "http+unix://%2Fvar%2Frun%2Fdocker.sock/containers/json"
        let escaped = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let response = await session.request(url("/redirect-to?url=\(escaped)")).serializingData().response
        guard case .redirectFailed(.unsupportedScheme)? = response.error else {
            return XCTFail("\(String(describing: response.error))")
        }
    }
}

/// A listening socket whose accept queue is full and never drained: the kernel drops further SYNs, so a connection
/// to it never completes.
private final class FullBacklogListener {
    let port: Int
    private let listener: Int32
    private let fillers: [Int32]

    init() throws {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.listener = listener
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(listener, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(listener, 0) == 0 else { throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        // A backlog of 0 holds one connection; a second fills what the kernel rounds it up to.
        var fillers: [Int32] = []
        for _ in 0..<2 {
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_NONBLOCK.rawValue), 0)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            fillers.append(filler)
        }
        self.fillers = fillers
    }

    func close() {
        for filler in fillers { _ = Glibc.close(filler) }
        _ = Glibc.close(listener)
    }
}
