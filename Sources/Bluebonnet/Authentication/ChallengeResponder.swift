import Foundation
import Logging
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Answers a 401's HTTP Basic or Digest challenge with the credential that belongs to the challenging origin, the
/// way URLSession does: once per hop, so wrong credentials end with the 401 rather than a loop.
///
/// Where a credential may come from, in order: the request's own (`authenticate(...)`) and the user and password
/// of its URL, both only for the origin the request started on; then the session's `urlCredentialStorage`, whose
/// protection spaces name their origin themselves. A redirect elsewhere therefore never carries the first origin's
/// credential to the next one.
struct ChallengeResponder: Sendable {
    /// How many `stale=true` Digest challenges one hop answers again: a server that calls every nonce stale cannot
    /// keep a request going.
    static let maximumStaleAnswers = 2

    /// What a hop has answered so far; reset by each redirect followed and each retry.
    struct HopState: Sendable {
        var answers = 0
        var staleAnswers = 0
        var lastWasDigest = false
    }

    /// The request's own credential.
    var requestCredential: URLCredential?
    /// The session's store, looked up by protection space.
    var storage: URLCredentialStorage?

    /// Whether a 401 might be answered at all, cheaply, on the thread that completed the hop.
    func mayAnswer(_ response: HTTPURLResponse, firstURL: URL?) -> Bool {
        mayAnswer(
            status: response.statusCode, challenge: response.value(forHTTPHeaderField: "WWW-Authenticate"),
            firstURL: firstURL)
    }

    /// Whether a response of `status` with the `WWW-Authenticate` field `challenge` is one to answer.
    func mayAnswer(status: Int, challenge: String?, firstURL: URL?) -> Bool {
        guard status == 401, challenge != nil else { return false }
        return requestCredential != nil || storage != nil || firstURL?.user != nil
    }

    /// The request that answers `response`'s challenge, or `nil` to deliver the 401.
    ///
    /// - Parameters:
    ///   - response: The 401.
    ///   - request:  The hop that got it.
    ///   - firstURL: The URL the request started on: its origin owns the request's credentials.
    ///   - bodyIsHashable: Whether `request.httpBody` is the whole body (not a streamed upload), for `auth-int`.
    ///   - hop:      What this hop has answered; updated.
    ///   - logger:   For a challenge that cannot be parsed.
    func answer(
        _ response: HTTPURLResponse, to request: URLRequest, firstURL: URL?, bodyIsHashable: Bool,
        hop: inout HopState, logger: Logger?
    ) -> URLRequest? {
        answer(
            challenge: response.value(forHTTPHeaderField: "WWW-Authenticate"), to: request, firstURL: firstURL,
            bodyIsHashable: bodyIsHashable, hop: &hop, logger: logger)
    }

    /// The request that answers the `WWW-Authenticate` field `challenge`, or `nil` to deliver the 401; as
    /// `answer(_:to:firstURL:bodyIsHashable:hop:logger:)`, from the field itself.
    func answer(
        challenge field: String?, to request: URLRequest, firstURL: URL?, bodyIsHashable: Bool,
        hop: inout HopState, logger: Logger?
    ) -> URLRequest? {
        guard let url = request.url, let field else { return nil }
        let challenges: [AuthenticationChallenge]
        do {
            challenges = try AuthenticationChallengeParser().parse(field)
        } catch {
            logger?.debug("unparseable WWW-Authenticate", metadata: ["failure": "\(error)"])
            return nil
        }
        for candidate in Self.answerable(challenges, bodyIsHashable: bodyIsHashable) {
            guard
                let credential = credential(
                    for: url, realm: candidate.realm, method: candidate.method, firstURL: firstURL),
                let user = credential.user, let password = credential.password
            else { continue }
            switch candidate {
            case let .digest(digest):
                // A second answer only re-sends the same credential with the new nonce the server asked for.
                if hop.answers > 0 {
                    guard digest.isStale, hop.lastWasDigest, hop.staleAnswers < Self.maximumStaleAnswers else {
                        return nil
                    }
                    hop.staleAnswers += 1
                }
                let value = digest.authorization(
                    username: user, password: password, method: request.httpMethod ?? "GET",
                    uri: Self.requestTarget(of: url), body: request.httpBody,
                    cnonce: DigestChallenge.makeClientNonce(), nonceCount: 1)
                hop.answers += 1
                hop.lastWasDigest = true
                return Self.request(request, authorizedWith: value)
            case .basic:
                guard hop.answers == 0, !user.contains(":") else { return nil }
                hop.answers += 1
                hop.lastWasDigest = false
                return Self.request(
                    request, authorizedWith: HTTPHeader.authorization(username: user, password: password).value)
            }
        }
        return nil
    }

    /// A challenge this client can answer.
    private enum Answerable {
        case digest(DigestChallenge)
        case basic(realm: String?)

        var realm: String? {
            switch self {
            case let .digest(digest): digest.realm
            case let .basic(realm): realm
            }
        }

        var method: String {
            switch self {
            case .digest: NSURLAuthenticationMethodHTTPDigest
            case .basic: NSURLAuthenticationMethodHTTPBasic
            }
        }

        var strength: Int {
            switch self {
            case let .digest(digest): 10 + digest.algorithm.strength
            case .basic: 1
            }
        }
    }

    /// The answerable challenges, strongest first (Digest with SHA-256, Digest with MD5, Basic); ties keep the
    /// server's order.
    private static func answerable(_ challenges: [AuthenticationChallenge], bodyIsHashable: Bool) -> [Answerable] {
        let candidates = challenges.compactMap { challenge -> Answerable? in
            if challenge.isScheme("Basic") { return .basic(realm: challenge.realm) }
            return DigestChallenge(challenge, bodyIsHashable: bodyIsHashable).map(Answerable.digest)
        }
        return candidates.enumerated().sorted { lhs, rhs in
            lhs.element.strength != rhs.element.strength
                ? lhs.element.strength > rhs.element.strength : lhs.offset < rhs.offset
        }.map(\.element)
    }

    /// The credential for a challenge from `url`'s origin.
    private func credential(for url: URL, realm: String?, method: String, firstURL: URL?) -> URLCredential? {
        if let firstURL, Origin.same(firstURL, url) {
            if let requestCredential { return requestCredential }
            if let credential = firstURL.userInfoCredential { return credential }
        }
        guard let storage, let scheme = url.scheme?.lowercased(), let host = url.host else { return nil }
        let port = Origin.effectivePort(url)
        // A challenge without a realm is looked up as itself, then with the host as its realm, as URLSession
        // describes such a protection space on Darwin.
        let realms: [String?] = realm == nil ? [nil, host] : [realm]
        for realm in realms {
            for method in [method, NSURLAuthenticationMethodDefault] {
                let space = URLProtectionSpace(
                    host: host, port: port, protocol: scheme, realm: realm, authenticationMethod: method)
                if let credential = storage.defaultCredential(for: space) { return credential }
            }
        }
        // FoundationNetworking's lookup by an equal space built elsewhere can miss; match the stored spaces by their
        // fields, and only when one credential is stored for them, since there is no default to choose.
        for realm in realms {
            let matching = storage.allCredentials.filter { space, _ in
                space.host.caseInsensitiveCompare(host) == .orderedSame && space.port == port
                    && space.protocol?.lowercased() == scheme && space.realm == realm && !space.isProxy()
                    && (space.authenticationMethod == method
                        || space.authenticationMethod == NSURLAuthenticationMethodDefault)
            }.flatMap(\.value.values)
            if matching.count == 1 { return matching.first }
        }
        return nil
    }

    /// The request-target of `url` as it goes on the wire (RFC 7616's `uri`): the path, `/` when empty, and query.
    static func requestTarget(of url: URL) -> String {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "/" }
        let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        return components.percentEncodedQuery.map { "\(path)?\($0)" } ?? path
    }

    private static func request(_ request: URLRequest, authorizedWith value: String) -> URLRequest {
        var answered = request
        answered.setValue(value, forHTTPHeaderField: "Authorization")
        return answered
    }
}
