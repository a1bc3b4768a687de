import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Request {
    /// Headers whose values are credentials; `cURLDescription()` hides them unless asked.
    static let secretHeaderNames: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]

    /// How `cURLDescription` quotes the values of the command.
    public enum CURLQuoting: Sendable {
        /// Alamofire's format: double quotes, with `"` escaped as `\"` (and a body's `\"` as `\\\"`), which tools and
        /// tests written for Alamofire parse. A shell still expands `$` and backquotes inside double quotes.
        case alamofire
        /// Single quotes, so a POSIX shell interprets no byte of any value: safe to paste.
        case shellSafe
    }

    /// The last `URLRequest` as a cURL command in Alamofire's format (`-u`, `-b` with the cookies the session would
    /// send, `-H` for the session's and the request's headers, `-d`, the URL), with one difference: credentials (the
    /// `Authorization`, `Proxy-Authorization` and `Cookie` values, the request's `credential`, a URL's user and
    /// password) are shown as `***`.
    ///
    /// - Returns: The command, or `"$ curl command could not be created"` before a request is made.
    public func cURLDescription() -> String {
        cURLDescription(revealingSecrets: false, quoting: .alamofire)
    }

    /// The last `URLRequest` as a cURL command in Alamofire's format.
    ///
    /// - Parameter revealingSecrets: Whether credentials appear as they are.
    /// - Returns: The command, or `"$ curl command could not be created"` before a request is made.
    public func cURLDescription(revealingSecrets: Bool) -> String {
        cURLDescription(revealingSecrets: revealingSecrets, quoting: .alamofire)
    }

    /// The last `URLRequest` as a cURL command.
    ///
    /// - Parameters:
    ///   - revealingSecrets: Whether credentials appear as they are. `false` by default.
    ///   - quoting:          How values are quoted: Alamofire's double quotes, or single quotes a shell leaves alone.
    /// - Returns: The command, or `"$ curl command could not be created"` before a request is made.
    public func cURLDescription(revealingSecrets: Bool = false, quoting: CURLQuoting) -> String {
        guard let request = lastRequest, let url = request.url, let method = request.httpMethod else {
            return "$ curl command could not be created"
        }
        let quote: (String) -> String
        switch quoting {
        case .alamofire: quote = { Self.doubleQuoted($0) }
        case .shellSafe: quote = { Self.shellQuoted($0) }
        }
        var components = ["$ curl -v", "-X \(method)"]
        // The credential that answers challenges, never the URL's user info, which would show in the URL.
        if let credential = credential ?? firstRequest?.url?.userInfoCredential, let user = credential.user {
            let password = revealingSecrets ? credential.password ?? "" : "***"
            components.append("-u \(quote("\(user):\(password)"))")
        }
        // What the hop would send: the session's headers merged in (not its credentials on another origin), the jar's
        // cookies added.
        let (features, hop) = mutableState.read { ($0.features, $0.machine.redirectCount) }
        let sendsCredentials = sendsSessionCredentials(to: url, firstURL: firstRequest?.url, hop: hop)
        let headers =
            (try? context.transportRequest(
                for: request, deadline: nil, sendsSessionCredentials: sendsCredentials, maximumBodySize: nil,
                of: self, features: features
            ).headers) ?? request.headers.map { ($0.name, $0.value) }
        let mask: (String, String) -> String = { name, value in
            !revealingSecrets && Self.secretHeaderNames.contains(name.lowercased()) ? "***" : value
        }
        let cookies = headers.filter { $0.name.equalsIgnoringCase("Cookie") }.flatMap { field in
            field.value.split(separator: ";").map { pair -> String in
                let pair = pair.trimmingCharacters(in: .whitespaces)
                guard !revealingSecrets, let equals = pair.firstIndex(of: "=") else { return pair }
                return String(pair[..<equals]) + "=***"
            }
        }
        if !cookies.isEmpty { components.append("-b \(quote(cookies.joined(separator: "; ")))") }
        let sorted = headers.filter { !$0.name.equalsIgnoringCase("Cookie") }.sorted { $0.name < $1.name }
        for (name, value) in sorted {
            components.append("-H \(quote("\(name): \(mask(name, value))"))")
        }
        if let body = request.httpBody {
            if let text = String(data: body, encoding: .utf8) {
                // Alamofire escapes a body's `\"` first, so it survives the second pass.
                let body = quoting == .alamofire ? text.replacingOccurrences(of: "\\\"", with: "\\\\\"") : text
                components.append("-d \(quote(body))")
            } else {
                components.append("--data-binary @- # \(body.count) binary bytes")
            }
        }
        components.append(quote(url.absoluteStringWithoutUserInfo))
        return components.joined(separator: " \\\n\t")
    }

    /// Calls `handler` with the cURL command once the `URLRequest` exists (at once if it already does).
    ///
    /// - Parameters:
    ///   - queue:   The queue the handler runs on.
    ///   - handler: The closure.
    /// - Returns: The instance.
    @discardableResult
    public func cURLDescription(on queue: DispatchQueue, calling handler: @escaping @Sendable (String) -> Void) -> Self
    {
        let (ready, create) = mutableState.write { state -> (Bool, Bool) in
            guard state.requests.isEmpty else { return (true, false) }
            state.cURLHandlers.append((queue, handler))
            return (false, state.machine.awaitsCreation)
        }
        if ready {
            let description = cURLDescription()
            queue.async { handler(description) }
        }
        if create { createURLRequestOnRequestQueue() }
        return self
    }

    /// Calls `handler` on `underlyingQueue` with the cURL command once the `URLRequest` exists.
    ///
    /// - Parameter handler: The closure.
    /// - Returns: The instance.
    @discardableResult
    public func cURLDescription(calling handler: @escaping @Sendable (String) -> Void) -> Self {
        cURLDescription(on: underlyingQueue, calling: handler)
    }

    /// Single-quotes for a POSIX shell, so no byte of the value is interpreted.
    static func shellQuoted(_ value: String) -> String {
        "'" + value.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// Double-quotes as Alamofire does, `"` escaped as `\"`.
    static func doubleQuoted(_ value: String) -> String {
        "\"" + value.replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
