import Crypto
import Foundation
import HTTPTypes
import Hummingbird
import NIOConcurrencyHelpers

/// Routes that need memory between requests: Digest nonces (httpbin's `/digest-auth`, with `stale_after`) and a
/// bearer-token service that accepts only the latest token and counts refreshes (`/token/{space}/...`).
///
/// The Digest check here is written apart from the client's, from RFC 7616, so one cannot hide the other's mistake.
final class AuthRoutes: Sendable {
    private struct State {
        /// Uses left before a nonce is called stale; `nil` for never.
        var nonces: [String: Int?] = [:]
        var spaces: [String: TokenSpace] = [:]
    }

    /// One independent token service, so tests running at once do not share counts.
    private struct TokenSpace {
        var generation = 0
        var refreshes = 0
        var accepted = 0
        var rejected = 0
        var token: String { "token-\(generation)" }
    }

    /// The most nonces, and token spaces, remembered at once.
    static let maximumEntries = 10_000

    private let state = NIOLockedValueBox(State())
    private let opaque = UUID().uuidString

    // MARK: - Digest

    /// `/digest-auth/{qop}/{user}/{passwd}[/{algorithm}[/{stale_after}]]`, as httpbin spells it. `qop` is `auth`,
    /// `auth-int`, `auth,auth-int` or `none` (an RFC 2069 challenge); `algorithm` may list several, comma-separated,
    /// each offered as its own challenge on its own header line. `?userhash=true` asks for a hashed user name;
    /// `?basic=true` also offers Basic, first; `?stale_first=true` calls the first nonce stale once it is used;
    /// `?malformed=true` sends a challenge with an unterminated quoted string.
    func digest(_ call: HTTPBinCall, segments: [String]) -> Response {
        guard segments.count >= 3, segments.count <= 5 else { return HTTPBinResponses.notFound() }
        let (qop, user, password) = (segments[0], segments[1], segments[2])
        let algorithms = (segments.count > 3 ? segments[3] : "MD5").split(separator: ",").map(String.init)
        guard !algorithms.isEmpty, algorithms.allSatisfy({ Self.hash($0, "") != nil }) else {
            return HTTPBinResponses.badRequest("Unsupported algorithm")
        }
        let staleAfter: Int? = segments.count > 4 ? Int(segments[4]) : nil
        let realm = "me@kennethreitz.com"
        let userhash = call.queryValue("userhash") == "true"

        var stale = false
        if let header = call.header("Authorization"), let fields = Self.digestFields(header) {
            switch verify(
                fields, call: call, qop: qop, user: user, password: password, realm: realm, algorithms: algorithms,
                userhash: userhash)
            {
            case .accepted: return HTTPBinResponses.json(["authenticated": true, "user": user])
            case .stale: stale = true
            case .rejected: break
            }
        }
        let nonce = Self.hexDigest(SHA256.hash(data: Data(UUID().uuidString.utf8)))
        // `?stale_first=true`: the first nonce is stale at its first use, the one sent with `stale=true` never is.
        let uses = call.queryValue("stale_first") == "true" ? (stale ? nil : 0) : staleAfter
        state.withLockedValue { state in
            // `bonnet serve` may run for long: nonces never answered are forgotten rather than kept forever.
            if state.nonces.count >= Self.maximumEntries { state.nonces.removeAll() }
            state.nonces[nonce] = .some(uses)
        }
        var headers: [(String, String)] = []
        if call.queryValue("malformed") == "true" {
            return HTTPBinResponses.empty(
                status: .unauthorized, headers: [("WWW-Authenticate", "Digest realm=\"unterminated")])
        }
        if call.queryValue("basic") == "true" { headers.append(("WWW-Authenticate", "Basic realm=\"\(realm)\"")) }
        for algorithm in algorithms {
            var parameters = [
                "realm=\"\(realm)\"", "nonce=\"\(nonce)\"", "opaque=\"\(opaque)\"", "algorithm=\(algorithm)",
            ]
            if qop != "none" { parameters.insert("qop=\"\(qop)\"", at: 1) }
            if stale { parameters.append("stale=TRUE") }
            if userhash { parameters.append("userhash=true") }
            headers.append(("WWW-Authenticate", "Digest " + parameters.joined(separator: ", ")))
        }
        return HTTPBinResponses.json(["authenticated": false], status: .unauthorized, headers: headers)
    }

    private enum Verdict { case accepted, stale, rejected }

    private func verify(
        _ fields: [String: String], call: HTTPBinCall, qop: String, user: String, password: String, realm: String,
        algorithms: [String], userhash: Bool
    ) -> Verdict {
        guard let nonce = fields["nonce"], let uri = fields["uri"], let response = fields["response"],
            fields["realm"] == realm, fields["opaque"] == opaque
        else { return .rejected }
        let algorithm = fields["algorithm"] ?? "MD5"
        guard algorithms.contains(algorithm), Self.hash(algorithm, "") != nil else { return .rejected }
        let h = { (text: String) in Self.hash(algorithm, text) ?? "" }
        let expectedUser = userhash ? h("\(user):\(realm)") : user
        guard fields["username"] == expectedUser, (fields["userhash"] == "true") == userhash else { return .rejected }
        guard uri == call.target else { return .rejected }
        var a1 = h("\(user):\(realm):\(password)")
        if algorithm.hasSuffix("-sess") { a1 = h("\(a1):\(nonce):\(fields["cnonce"] ?? "")") }
        let offered = qop == "none" ? [] : qop.split(separator: ",").map(String.init)
        let expected: String
        if let chosen = fields["qop"] {
            guard offered.contains(chosen), let nc = fields["nc"], let cnonce = fields["cnonce"] else {
                return .rejected
            }
            let a2 =
                chosen == "auth-int"
                ? h("\(call.method):\(uri):\(Self.hash(algorithm, call.body) ?? "")") : h("\(call.method):\(uri)")
            expected = h("\(a1):\(nonce):\(nc):\(cnonce):\(chosen):\(a2)")
        } else {
            guard offered.isEmpty else { return .rejected }
            expected = h("\(a1):\(nonce):\(h("\(call.method):\(uri)"))")
        }
        guard response == expected else { return .rejected }
        return state.withLockedValue { state -> Verdict in
            guard let remaining = state.nonces[nonce] else { return .rejected }
            guard let left = remaining else { return .accepted }
            guard left > 0 else {
                state.nonces[nonce] = nil
                return .stale
            }
            state.nonces[nonce] = .some(left - 1)
            return .accepted
        }
    }

    /// The parameters of a `Digest` credentials field; `nil` for another scheme or a malformed field.
    static func digestFields(_ header: String) -> [String: String]? {
        guard header.lowercased().hasPrefix("digest ") else { return nil }
        var fields: [String: String] = [:]
        var rest = Substring(header.dropFirst(7))
        while true {
            rest = rest.drop { $0 == " " || $0 == "," }
            guard let equals = rest.firstIndex(of: "=") else { break }
            let name = rest[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            rest = rest[rest.index(after: equals)...].drop { $0 == " " }
            var value = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                var escaped = false
                var closed = false
                while let character = rest.first {
                    rest = rest.dropFirst()
                    if escaped { value.append(character); escaped = false; continue }
                    if character == "\\" { escaped = true; continue }
                    if character == "\"" { closed = true; break }
                    value.append(character)
                }
                guard closed else { return nil }
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                value = rest[..<end].trimmingCharacters(in: .whitespaces)
                rest = rest[end...]
            }
            guard fields[name] == nil else { return nil }
            fields[name] = value
        }
        return fields
    }

    static func hash(_ algorithm: String, _ text: String) -> String? {
        hash(algorithm, Data(text.utf8))
    }

    static func hash(_ algorithm: String, _ data: Data) -> String? {
        switch algorithm {
        case "MD5", "MD5-sess": hexDigest(Insecure.MD5.hash(data: data))
        case "SHA-256", "SHA-256-sess": hexDigest(SHA256.hash(data: data))
        default: nil
        }
    }

    static func hexDigest<D: Digest>(_ digest: D) -> String {
        digest.map { String(format: "%02x", $0) }.joined()
    }

    // MARK: - Bearer tokens

    /// `POST /token/{space}/refresh[?delay_ms=&fail=true]` issues the next token (the old one stops working);
    /// `GET /token/{space}/protected` accepts only the latest; `GET /token/{space}/stats` reports the counts.
    func token(_ call: HTTPBinCall, segments: [String]) async throws -> Response {
        guard segments.count == 2 else { return HTTPBinResponses.notFound() }
        let space = segments[0]
        state.withLockedValue { state in
            if state.spaces[space] == nil, state.spaces.count >= Self.maximumEntries { state.spaces.removeAll() }
        }
        switch (segments[1], call.method) {
        case ("refresh", "POST"):
            if let delay = call.queryValue("delay_ms").flatMap(Int.init), delay > 0 {
                try await Task.sleep(for: .milliseconds(min(delay, 10_000)))
            }
            if call.queryValue("fail") == "true" {
                state.withLockedValue { $0.spaces[space, default: TokenSpace()].refreshes += 1 }
                return HTTPBinResponses.json(["error": "refresh refused"], status: .internalServerError)
            }
            let token = state.withLockedValue { state -> String in
                state.spaces[space, default: TokenSpace()].refreshes += 1
                state.spaces[space, default: TokenSpace()].generation += 1
                return state.spaces[space, default: TokenSpace()].token
            }
            return HTTPBinResponses.json(["token": token])
        case ("protected", _):
            let presented = call.header("Authorization")
            let accepted = state.withLockedValue { state -> Bool in
                let current = state.spaces[space, default: TokenSpace()]
                let ok = presented == "Bearer \(current.token)"
                if ok {
                    state.spaces[space, default: TokenSpace()].accepted += 1
                } else {
                    state.spaces[space, default: TokenSpace()].rejected += 1
                }
                return ok
            }
            guard accepted else {
                return HTTPBinResponses.json(
                    ["error": "invalid_token"], status: .unauthorized,
                    headers: [("WWW-Authenticate", "Bearer realm=\"token\", error=\"invalid_token\"")])
            }
            return HTTPBinResponses.json(["authenticated": true, "token": String(presented?.dropFirst(7) ?? "")])
        case ("stats", _):
            let current = state.withLockedValue { $0.spaces[space, default: TokenSpace()] }
            return HTTPBinResponses.json([
                "refreshes": current.refreshes, "accepted": current.accepted,
                "rejected": current.rejected, "token": current.token,
            ])
        default:
            return HTTPBinResponses.notFound()
        }
    }
}
