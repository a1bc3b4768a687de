import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOHTTPCompression
import NIOPosix
import NIOSSL
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Turns engine errors into what Alamofire users see: `AFError.sessionTaskFailed(error: URLError(...))`, with the
/// engine's own error kept under `NSUnderlyingErrorKey`.
enum TransportErrorMapper {
    static func afError(from error: any Error) -> AFError {
        if let afError = error as? AFError { return afError }
        if error is URLError { return .sessionTaskFailed(error: error) }
        if let decompression = error as? NIOHTTPDecompression.DecompressionError, decompression == .limit {
            return .responseLimitExceeded(
                reason: .decompressionRatioExceeded(
                    ratio: AsyncHTTPClientTransport.decompressionRatioLimit, error: error))
        }
        return .sessionTaskFailed(error: URLError(code(for: error), userInfo: [NSUnderlyingErrorKey: error]))
    }

    /// The error for a proxy that could not be reached, or would not open a tunnel to `target`, naming the proxy
    /// (a refused proxy is not "the server"). A secure target goes through a `CONNECT` tunnel, and a proxy that
    /// allows `CONNECT` to some ports only (squid's default is 443) answers with an error status that
    /// AsyncHTTPClient does not pass on. `nil` for any other error.
    static func proxyRefusal(_ error: any Error, proxy: HTTPClient.Configuration.Proxy?, target: URL) -> AFError? {
        guard let proxy else { return nil }
        // The engine connects to the proxy, never to the target: a connection that could not be made is the proxy's.
        if code(for: error) == .cannotConnectToHost, (error as? HTTPClientError) != .invalidProxyResponse {
            return .sessionTaskFailed(
                error: URLError(
                    .cannotConnectToHost,
                    userInfo: [
                        NSLocalizedDescriptionKey: "Could not connect to the proxy \(proxy.host):\(proxy.port)",
                        NSUnderlyingErrorKey: error, NSURLErrorFailingURLErrorKey: target.withoutUserInfo,
                    ]))
        }
        guard let clientError = error as? HTTPClientError, clientError == .invalidProxyResponse else { return nil }
        let destination = "\(target.host ?? "?"):\(target.port ?? (target.scheme?.lowercased() == "https" ? 443 : 80))"
        let description =
            "The proxy \(proxy.host):\(proxy.port) refused to open a tunnel (CONNECT) to \(destination): it answered "
            + "with an error status. Many proxies allow CONNECT to port 443 only."
        return .sessionTaskFailed(
            error: URLError(
                .cannotConnectToHost,
                userInfo: [
                    NSLocalizedDescriptionKey: description, NSUnderlyingErrorKey: error,
                    NSURLErrorFailingURLErrorKey: target.withoutUserInfo,
                ]))
    }

    static func code(for error: any Error) -> URLError.Code {
        if let clientError = error as? HTTPClientError {
            return code(for: clientError)
        }
        if let connectionError = error as? NIOConnectionError {
            // No address at all means the name did not resolve; addresses that all refused mean the host is down.
            if connectionError.connectionErrors.isEmpty,
                connectionError.dnsAError != nil || connectionError.dnsAAAAError != nil
            {
                return .cannotFindHost
            }
            // Every address failed because the kernel has no route to its network: offline, as URLSession says it.
            if !connectionError.connectionErrors.isEmpty,
                connectionError.connectionErrors.allSatisfy({ ($0.error as? IOError)?.errnoCode == ENETUNREACH })
            {
                return .notConnectedToInternet
            }
            return .cannotConnectToHost
        }
        if error is SocketAddressError { return .cannotFindHost }
        if let channelError = error as? ChannelError {
            switch channelError {
            case .connectTimeout: return .timedOut
            case .ioOnClosedChannel, .alreadyClosed, .eof, .outputClosed, .inputClosed: return .networkConnectionLost
            default: return .unknown
            }
        }
        if let ioError = error as? IOError {
            switch ioError.errnoCode {
            case ECONNREFUSED: return .cannotConnectToHost
            case ECONNRESET, EPIPE: return .networkConnectionLost
            case ETIMEDOUT: return .timedOut
            // No route to the network at all is being offline; no route to one host is that host's trouble.
            case ENETUNREACH: return .notConnectedToInternet
            case EHOSTUNREACH: return .cannotConnectToHost
            default: return .unknown
            }
        }
        if error is NIOHTTPDecompression.DecompressionError || error is NIOHTTPDecompression.ExtraDecompressionError {
            return .cannotDecodeContentData
        }
        if let parserError = error as? HTTPParserError {
            // The peer closed before the declared end of the body: a download cut short, not a bad response.
            return parserError == .invalidEOFState ? .networkConnectionLost : .cannotParseResponse
        }
        // TLS failures by their types, as swift-nio-ssl declares them.
        switch error {
        case is NIOSSLError, is BoringSSLError, is NIOSSLExtraError, is NIOSSLCloseTimedOutError,
            is NIOTLSUnwrappingError:
            return .secureConnectionFailed
        default:
            return .unknown
        }
    }

    static func code(for error: HTTPClientError) -> URLError.Code {
        switch error {
        case .readTimeout, .writeTimeout, .connectTimeout, .deadlineExceeded, .tlsHandshakeTimeout,
            .getConnectionFromPoolTimeout, .socksHandshakeTimeout, .httpProxyHandshakeTimeout:
            return .timedOut
        case .remoteConnectionClosed, .uncleanShutdown:
            return .networkConnectionLost
        case .invalidURL, .emptyHost, .emptyScheme:
            return .badURL
        case .cancelled:
            return .cancelled
        case .alreadyShutdown:
            return .cancelled
        case .bodyLengthMismatch:
            return .networkConnectionLost
        case .proxyAuthenticationRequired:
            // The proxy answered `CONNECT` with 407: its credentials are missing or wrong.
            return .userAuthenticationRequired
        case .invalidProxyResponse:
            return .cannotConnectToHost
        default:
            return .unknown
        }
    }
}
