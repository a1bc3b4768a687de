import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Request {
    /// Headers whose values are credentials; `cURLDescription()` hides them unless asked.
    static let secretHeaderNames: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]

    /// The last `URLRequest` as a cURL command, session headers included; credentials (headers, the request's
    /// `credential`, a URL's password) are shown as `***`.
    ///
    /// - Returns: The command, or `"$ curl command could not be created"` before a request is made.
    public func cURLDescription() -> String {
        cURLDescription(revealingSecrets: false)
    }

    /// The last `URLRequest` as a cURL command.
    ///
    /// - Parameter revealingSecrets: Whether `Authorization`, `Proxy-Authorization` and `Cookie` values appear as
    ///   they are.
    /// - Returns: The command, or `"$ curl command could not be created"` before a request is made.
    public func cURLDescription(revealingSecrets: Bool) -> String {
        guard let request = lastRequest, let url = request.url, let method = request.httpMethod else {
            return "$ curl command could not be created"
        }
        var components = ["$ curl -v"]
        components.append("-X \(method)")
        // The credential that answers challenges, never the URL's user info, which would show in the URL.
        if let credential = credential ?? firstRequest?.url?.userInfoCredential,
            let user = credential.user
        {
            let password = revealingSecrets ? credential.password ?? "" : "***"
            components.append("-u \(Self.shellQuoted("\(user):\(password)"))")
        }
        var headers = context.additionalHeaders
        for header in request.headers { headers.update(header) }
        for header in headers.sorted() {
            let value =
                !revealingSecrets && Self.secretHeaderNames.contains(header.name.lowercased()) ? "***" : header.value
            components.append("-H \(Self.shellQuoted("\(header.name): \(value)"))")
        }
        if let body = request.httpBody {
            if let text = String(data: body, encoding: .utf8) {
                components.append("-d \(Self.shellQuoted(text))")
            } else {
                components.append("--data-binary @- # \(body.count) binary bytes")
            }
        }
        components.append(Self.shellQuoted(url.absoluteStringWithoutUserInfo))
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
}
