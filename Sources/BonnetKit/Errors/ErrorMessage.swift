import Bluebonnet
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What went wrong, in the terms of a person at a terminal: no library framing ("URLSessionTask failed with error"),
/// no engine type names or source paths, the file or host involved named.
enum ErrorMessage {
    /// A connection the server closed before it answered: NIO's "I/O on closed channel" in a person's words.
    static let closedBeforeAnswering = "the server closed the connection before it answered"

    static func describe(_ error: any Error) -> String {
        guard let error = error.asAFError else { return error.localizedDescription }
        switch error {
        case let .sessionTaskFailed(underlying):
            guard let urlError = underlying as? URLError else { return cleaned("\(underlying.localizedDescription)") }
            // The library's own words for what went wrong (a proxy that refused a tunnel) say it best.
            if let own = urlError.userInfo[NSLocalizedDescriptionKey] as? String, !own.isEmpty {
                return own.prefix(1).lowercased() + own.dropFirst()
            }
            if urlError.code == .networkConnectionLost,
                urlError.userInfo[NSUnderlyingErrorKey].map({ "\($0)" }) == "I/O on closed channel"
            {
                return closedBeforeAnswering
            }
            let phrase: String =
                switch urlError.code {
                case .timedOut: "the request timed out"
                case .cannotConnectToHost: "could not connect to the server"
                case .cannotFindHost: "no server of that name could be found"
                case .networkConnectionLost: "the connection was lost before the response ended"
                case .cannotParseResponse: "the server's response could not be parsed"
                case .badURL: "the URL is not valid"
                case .secureConnectionFailed: "the TLS handshake failed"
                case .userAuthenticationRequired: "the proxy asks for credentials (407)"
                case .cannotWriteToFile, .cannotCreateFile: "the file could not be written"
                case .cancelled: "the request was cancelled"
                default: "the request failed (URLError \(urlError.code.rawValue))"
                }
            // A timeout says all there is; other causes add the engine's or the system's words.
            guard urlError.code != .timedOut,
                let cause = urlError.userInfo[NSUnderlyingErrorKey].map({ cleaned("\($0)") }),
                !cause.isEmpty
            else { return phrase }
            return "\(phrase): \(cause)"
        case let .urlRequestValidationFailed(reason: .unsupportedURLScheme(scheme)):
            return "bonnet speaks http and https, not \(scheme.map { "\($0)://" } ?? "a URL without a scheme")"
        case let .multipartEncodingFailed(reason: .bodyPartFileNotReachableWithError(url, underlying)):
            return "cannot read \(url.path): \(underlying.localizedDescription)"
        case let .multipartEncodingFailed(reason: .bodyPartFileNotReachable(url)):
            return "cannot read \(url.path)"
        case let .multipartEncodingFailed(reason: .bodyPartFileIsDirectory(url)):
            return "\(url.path) is a directory"
        default:
            return error.localizedDescription
        }
    }

    /// An engine's error text without its type names, source paths and packed codes: BoringSSL's
    /// `error:100000f7:SSL routines:OPENSSL_internal:WRONG_VERSION_NUMBER at /…/tls_record.cc:127` is
    /// `WRONG_VERSION_NUMBER`.
    static func cleaned(_ text: String) -> String {
        if let range = text.range(of: #"OPENSSL_internal:([A-Z0-9_]+)"#, options: .regularExpression) {
            let reason = text[range].dropFirst("OPENSSL_internal:".count)
            let hint =
                switch reason {
                case "WRONG_VERSION_NUMBER": " (does the server speak TLS on that port?)"
                case "CERTIFICATE_VERIFY_FAILED": " (the certificate is not trusted: --verify FILE or --verify=no)"
                case "TLSV1_ALERT_CERTIFICATE_REQUIRED":
                    " (the server requires a client certificate: give one with --cert)"
                default: ""
                }
            return reason.replacingOccurrences(of: "_", with: " ").lowercased() + hint
        }
        // NIO's `connection reset (error set): Connection refused) (errno: 111)`: the system's words.
        if text.contains("(errno: "), let message = text.range(of: #"\): [^()]+"#, options: .regularExpression) {
            return String(text[message].dropFirst(3)).lowercased()
        }
        // NIO's `DNS error: SocketAddressError.UnknownHost: Name or service not known (error -2) for host H, port P`:
        // the host and the resolver's words.
        if text.contains("SocketAddressError.UnknownHost"),
            let reason = text.range(of: #"UnknownHost: [^(]+"#, options: .regularExpression),
            let host = text.range(of: #"for host [^,]+"#, options: .regularExpression)
        {
            let words = text[reason].dropFirst("UnknownHost: ".count).trimmingCharacters(in: .whitespaces)
            return "\(text[host].dropFirst("for host ".count)) (\(words.lowercased()))"
        }
        var result = text
        while let path = result.range(of: #" at /[^ \])]+"#, options: .regularExpression) {
            result.removeSubrange(path)
        }
        return result
    }
}
