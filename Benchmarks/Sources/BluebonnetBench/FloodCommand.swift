import ArgumentParser
import AsyncHTTPClient
import Bluebonnet
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// W7: many requests in flight at once to a server that never answers them. Measures the memory each in-flight
/// request holds (peak resident memory over the idle baseline, divided by the count) and how long after its deadline
/// each request ends.
struct FloodCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flood",
        abstract: "Start many requests at once against hang-server; print memory per request and lateness as JSON.")

    @Option(help: "bluebonnet, ahc or urlsession.")
    var client: String

    @Option(help: "The hang server's base URL, e.g. http://127.0.0.1:18100.")
    var baseURL: String

    @Option(help: "How many requests, all started at once.")
    var requests = 10_000

    @Option(help: "Each request's deadline, in seconds.")
    var timeout = 5.0

    func run() async throws {
        guard let kind = FloodClientKind(rawValue: client) else { throw ValidationError("unknown client \(client)") }
        guard let hangURL = URL(string: baseURL + "/hang"), let okURL = URL(string: baseURL + "/ok") else {
            throw ValidationError("bad URL")
        }
        let flood = kind.make(connections: requests, timeout: timeout)
        // One answered request first, so the baseline has the client's code paths and one connection in it.
        guard case .success = await flood.attempt(okURL) else { throw BenchError(description: "/ok failed") }
        try await Task.sleep(for: .milliseconds(200))
        let baseline = ResidentMemory.currentKiB()
        let sampler = ResidentMemory.Sampler()
        let before = ResourceUsage.now()
        let clock = ContinuousClock()
        let start = clock.now
        let ends = await withTaskGroup(of: FloodEnd.self) { group in
            for _ in 0..<requests {
                group.addTask {
                    let begun = clock.now
                    let outcome = await flood.attempt(hangURL)
                    return FloodEnd(began: (begun - start).seconds, took: (clock.now - begun).seconds, outcome: outcome)
                }
            }
            return await group.reduce(into: [FloodEnd]()) { $0.append($1) }
        }
        let wall = (clock.now - start).seconds
        let peak = sampler.stop()
        let after = ResourceUsage.now()
        try await flood.shutdown()
        let held = try await Self.serverPeak(baseURL)
        let lateness = ends.map { $0.took - timeout }.sorted()
        func percentile(_ fraction: Double) -> Double {
            lateness[min(lateness.count - 1, Int(Double(lateness.count) * fraction))]
        }
        var outcomes: [String: Int] = [:]
        for end in ends { outcomes[end.outcome.label, default: 0] += 1 }
        let result = FloodResult(
            client: kind.rawValue, workload: "w7", requests: requests, timeoutSeconds: timeout,
            baselineRSSKiB: baseline, peakRSSKiB: peak, maxRSSKiB: after.maxRSSKiB,
            kibPerRequest: Double(peak - baseline) / Double(requests),
            latenessP50: percentile(0.5), latenessP99: percentile(0.99), latenessMax: lateness.last ?? 0,
            latenessMin: lateness.first ?? 0, lastStartSeconds: ends.map(\.began).max() ?? 0, wallSeconds: wall,
            cpuSeconds: after.userSeconds + after.systemSeconds - before.userSeconds - before.systemSeconds,
            serverPeakHeld: held, outcomes: outcomes)
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        print(String(decoding: try encoder.encode(result), as: UTF8.self))
    }

    /// The most requests the hang server held at once, asked after the run through a client of its own.
    static func serverPeak(_ baseURL: String) async throws -> Int {
        let response = try await HTTPClient.shared.execute(
            HTTPClientRequest(url: baseURL + "/stats"), timeout: .seconds(10))
        let body = try await response.body.collect(upTo: 1 << 16)
        return Int(String(buffer: body).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }
}

/// When one flood request began (after the first) and how long it took, in seconds, and how it ended.
struct FloodEnd: Sendable {
    let began: Double
    let took: Double
    let outcome: FloodOutcome
}

/// How a flood request ended: a response, its deadline, or another error.
enum FloodOutcome: Sendable {
    case success
    case timedOut
    case failed(String)

    var label: String {
        switch self {
        case .success: return "success"
        case .timedOut: return "timedOut"
        case .failed(let description): return description
        }
    }

    static func classify(urlError: URLError) -> FloodOutcome {
        urlError.code == .timedOut ? .timedOut : .failed("URLError \(urlError.code.rawValue)")
    }
}

/// What `flood` prints: one JSON line.
struct FloodResult: Codable {
    let client: String
    let workload: String
    let requests: Int
    let timeoutSeconds: Double
    /// Resident memory after one answered request, before the flood.
    let baselineRSSKiB: Int
    /// The most resident memory sampled (every 10 ms) during the flood.
    let peakRSSKiB: Int
    /// `ru_maxrss` at the end.
    let maxRSSKiB: Int
    let kibPerRequest: Double
    /// How long after its deadline a request ended (its duration less the timeout), in seconds.
    let latenessP50: Double
    let latenessP99: Double
    let latenessMax: Double
    let latenessMin: Double
    /// When the last request began, after the first: how long it took to start them all.
    let lastStartSeconds: Double
    let wallSeconds: Double
    let cpuSeconds: Double
    /// The most requests the server held at once: how many were really in flight together.
    let serverPeakHeld: Int
    let outcomes: [String: Int]
}

/// A client for `flood`: one request with the configured deadline, ending however it ends.
protocol FloodClient: Sendable {
    func attempt(_ url: URL) async -> FloodOutcome
    func shutdown() async throws
}

enum FloodClientKind: String, Sendable {
    case bluebonnet
    case ahc
    case urlsession

    /// A client allowed `connections` HTTP/1.1 connections to the host, so no request waits for a connection.
    func make(connections: Int, timeout: Double) -> any FloodClient {
        switch self {
        case .bluebonnet: return BluebonnetFlood(connections: connections, timeout: timeout)
        case .ahc: return AHCFlood(connections: connections, timeout: timeout)
        case .urlsession: return URLSessionFlood(connections: connections, timeout: timeout)
        }
    }
}

/// Bluebonnet: `timeoutIntervalForRequest` (its idle timeout, the same as a deadline when nothing ever arrives).
final class BluebonnetFlood: FloodClient {
    let session: Session

    init(connections: Int, timeout: Double) {
        let configuration = URLSessionConfiguration.af.default
        configuration.timeoutIntervalForRequest = timeout
        configuration.httpMaximumConnectionsPerHost = connections
        session = Session(configuration: configuration)
    }

    func attempt(_ url: URL) async -> FloodOutcome {
        let response = await session.request(url).serializingData().response
        guard let error = response.error else { return .success }
        if let urlError = error.underlyingError as? URLError { return .classify(urlError: urlError) }
        return .failed(String(String(describing: error).prefix(80)))
    }

    func shutdown() async throws {}
}

/// Raw AsyncHTTPClient: `execute(_:timeout:)`, a deadline over the whole request.
final class AHCFlood: FloodClient {
    let client: HTTPClient
    let timeout: TimeAmount

    init(connections: Int, timeout: Double) {
        var configuration = HTTPClient.Configuration()
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = connections
        client = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        self.timeout = .milliseconds(Int64(timeout * 1000))
    }

    func attempt(_ url: URL) async -> FloodOutcome {
        do {
            let response = try await client.execute(HTTPClientRequest(url: url.absoluteString), timeout: timeout)
            _ = try await response.body.collect(upTo: 1 << 20)
            return .success
        } catch let error as HTTPClientError where error == .deadlineExceeded {
            return .timedOut
        } catch {
            return .failed(String(String(describing: error).prefix(80)))
        }
    }

    func shutdown() async throws {
        try await client.shutdown()
    }
}

/// FoundationNetworking's URLSession: `timeoutIntervalForRequest`.
final class URLSessionFlood: FloodClient {
    let session: URLSession

    init(connections: Int, timeout: Double) {
        let configuration = URLSessionConfiguration.default
        configuration.timeoutIntervalForRequest = timeout
        configuration.httpMaximumConnectionsPerHost = connections
        session = URLSession(configuration: configuration)
    }

    func attempt(_ url: URL) async -> FloodOutcome {
        await withCheckedContinuation { continuation in
            session.dataTask(with: url) { _, _, error in
                guard let error else { return continuation.resume(returning: .success) }
                if let urlError = error as? URLError {
                    return continuation.resume(returning: .classify(urlError: urlError))
                }
                continuation.resume(returning: .failed(String(String(describing: error).prefix(80))))
            }.resume()
        }
    }

    func shutdown() async throws {
        session.invalidateAndCancel()
    }
}

/// This process's resident memory, from `/proc/self/statm`.
enum ResidentMemory {
    static func currentKiB() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
    }

    /// Samples resident memory every 10 ms on a thread of its own (the cooperative pool may be saturated) and keeps
    /// the most.
    final class Sampler: Sendable {
        private let state = Mutex((peak: 0, running: true))
        private let done = DispatchSemaphore(value: 0)

        init() {
            let thread = Thread { [self] in
                while state.withLock({ $0.running }) {
                    let now = ResidentMemory.currentKiB()
                    state.withLock { $0.peak = max($0.peak, now) }
                    usleep(10_000)
                }
                done.signal()
            }
            thread.start()
        }

        /// Stops sampling and returns the peak, in KiB.
        func stop() -> Int {
            state.withLock { $0.running = false }
            done.wait()
            return max(state.withLock { $0.peak }, ResidentMemory.currentKiB())
        }
    }
}

/// `hang-server`: an HTTP/1.1 server that answers `/ok` and `/stats` (the most requests held at once) and holds
/// every other request open without answering, until the client gives up.
struct HangServerCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "hang-server", abstract: "Serve /ok and /stats; hold every other request unanswered.")

    @Option(help: "The port to listen on.")
    var port: Int

    func run() async throws {
        let counter = HeldCounter()
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 4096)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelInitializer { channel in
                channel.pipeline.configureHTTPServerPipeline().flatMap {
                    channel.pipeline.addHandler(HangHandler(counter: counter))
                }
            }
            .bind(host: "127.0.0.1", port: port).get()
        try await channel.closeFuture.get()
    }
}

/// How many requests the hang server holds now, and the most it held.
final class HeldCounter: Sendable {
    private let state = Mutex((now: 0, peak: 0))

    func add(_ delta: Int) {
        state.withLock {
            $0.now += delta
            $0.peak = max($0.peak, $0.now)
        }
    }

    var peak: Int { state.withLock { $0.peak } }
}

/// Answers `/ok` and `/stats`; holds anything else until the connection closes.
final class HangHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    let counter: HeldCounter
    private let holding = Mutex(false)

    init(counter: HeldCounter) {
        self.counter = counter
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        guard case .head(let head) = unwrapInboundIn(data) else { return }
        switch head.uri {
        case "/ok": respond(context: context, "ok\n")
        case "/stats": respond(context: context, "\(counter.peak)\n")
        default:
            holding.withLock { $0 = true }
            counter.add(1)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        if holding.withLock({ $0 }) { counter.add(-1) }
        context.fireChannelInactive()
    }

    private func respond(context: ChannelHandlerContext, _ text: String) {
        var headers = NIOHTTP1.HTTPHeaders()
        headers.add(name: "Content-Length", value: "\(text.utf8.count)")
        headers.add(name: "Content-Type", value: "text/plain")
        context.write(
            wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
        context.write(wrapOutboundOut(.body(.byteBuffer(ByteBuffer(string: text)))), promise: nil)
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
    }
}
