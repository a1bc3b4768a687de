import ArgumentParser
import AsyncHTTPClient
import Bluebonnet
import Foundation
import NIOCore
import NIOSSL
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// W6: many small GETs over HTTPS to one host that offers HTTP/2 (`run`'s nginx with TLS and `http2 on`), each client
/// trusting the server's self-signed certificate. Which protocol each client really spoke is read from the server's
/// access log by the driver (`Benchmarks/h2.sh`).
struct H2Command: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "h2", abstract: "Small GETs over HTTPS (HTTP/2 where the client offers it); print a JSON line.")

    @Option(help: "bluebonnet, ahc or urlsession.")
    var client: String

    @Option(help: "The document's https URL.")
    var url: String

    @Option(help: "The PEM certificate to trust (URLSession takes it from URLSessionCertificateAuthorityInfoFile).")
    var ca: String

    @Option(help: "Requests.")
    var count = 10_000

    @Option(help: "Requests in flight at once.")
    var inFlight = 64

    func run() async throws {
        guard let kind = ClientKind(rawValue: client), [.bluebonnet, .ahc, .urlsession].contains(kind),
            let target = URL(string: url)
        else { throw ValidationError("unknown client \(client) or bad URL") }
        let benchClient: any BenchClient
        switch kind {
        case .bluebonnet:
            let roots = CertificateFiles.certificates(in: try Data(contentsOf: URL(fileURLWithPath: ca)))
            benchClient = BluebonnetTLSClient(tls: TLSSettings(trustRoots: .replacing(roots)))
        case .ahc:
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .file(ca)
            benchClient = AHCClient(tls: tls)
        default:
            benchClient = URLSessionClient(connectionLimit: nil)
        }
        let result = try await WorkloadRunner.run(
            client: benchClient, kind: kind, workload: .w2, url: target, count: count, inFlight: inFlight)
        try await benchClient.shutdown()
        try result.printJSONLine()
    }
}

/// Bluebonnet with its default connection settings and the given TLS settings (HTTP/2 offered by default).
final class BluebonnetTLSClient: BenchClient {
    let session: Session

    init(tls: TLSSettings) {
        session = Session(configuration: URLSessionConfiguration.af.default, tls: tls)
    }

    func fetch(_ url: URL) async throws -> Int {
        try await session.request(url).serializingData().value.count
    }

    func fetchCheckingHead(_ url: URL) async throws -> Int {
        try BluebonnetClient.checked(await session.request(url).serializingData().response)
    }

    func fetchRecords(_ url: URL) async throws -> Int {
        try await session.request(url).serializingDecodable([Documents.Record].self).value.count
    }

    func shutdown() async throws {}
}

extension AHCClient {
    /// Raw AsyncHTTPClient with its default connection settings (`httpVersion` `.automatic`: HTTP/2 through ALPN).
    convenience init(tls: TLSConfiguration) {
        var configuration = HTTPClient.Configuration()
        configuration.tlsConfiguration = tls
        self.init(client: HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration))
    }
}
