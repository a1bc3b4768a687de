import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URLSessionConfiguration: AlamofireExtended {}

extension AlamofireExtension where ExtendedType: URLSessionConfiguration {
    /// 32 HTTP/1.1 connections per host, where Foundation allows 6 and AsyncHTTPClient 8. Measured with 64 requests in
    /// flight to one nginx (Benchmarks/README.md): 6 connections cost ~100 µs of CPU a request, 16 ~82, 32 ~79, 64 ~72,
    /// because requests waiting for a connection are what costs. 32 takes most of that gain while keeping the sockets
    /// a client opens to one upstream bounded.
    public static var defaultMaximumConnectionsPerHost: Int { 32 }

    /// Bluebonnet's default configuration: `URLSessionConfiguration.default` with `HTTPHeaders.default` as its
    /// additional headers and up to `defaultMaximumConnectionsPerHost` connections per host.
    public static var `default`: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.default
        configuration.headers = .default
        configuration.httpMaximumConnectionsPerHost = defaultMaximumConnectionsPerHost
        return configuration
    }

    /// `.ephemeral` configuration with the default `HTTPHeaders` and connections per host.
    public static var ephemeral: URLSessionConfiguration {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.headers = .default
        configuration.httpMaximumConnectionsPerHost = defaultMaximumConnectionsPerHost
        return configuration
    }
}
