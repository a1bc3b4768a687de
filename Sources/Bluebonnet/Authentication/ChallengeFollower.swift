import Foundation
import Logging
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The credential given by `authenticate(...)`.
enum RequestCredential: FeatureKey {
    typealias Value = URLCredential
}

/// What the current hop answered of 401 challenges.
enum ChallengeNotes: FeatureKey {
    typealias Value = ChallengeResponder.HopState
}

/// Answers a 401's Basic or Digest challenge with the request's, the URL's or the session's credential by sending
/// the same hop again; delivers the 401 when nothing answers it.
struct ChallengeFollower: HopFollowing {
    /// `URLSessionConfiguration.urlCredentialStorage`.
    let storage: URLCredentialStorage?
    let logger: Logger?

    func considers(status: Int) -> Bool { status == 401 }

    func mayFollow(_ facts: HopFacts) -> Bool {
        responder(for: facts).mayAnswer(
            status: facts.head.statusCode, challenge: facts.head.value(for: "WWW-Authenticate"),
            firstURL: facts.credentialOwner)
    }

    func examine(_ facts: HopFacts) -> HopExamination? {
        let responder = responder(for: facts)
        let challenge = facts.head.value(for: "WWW-Authenticate")
        guard
            responder.mayAnswer(status: facts.head.statusCode, challenge: challenge, firstURL: facts.credentialOwner)
        else { return nil }
        let logger = logger
        // Off the event loop: `auth-int` hashes the whole body, and the credential storage takes a lock.
        return .decide { request, completion in
            guard request.canResendBody else {
                request.tellNeedsNewBodyStream()
                return completion(.deliver)
            }
            var hop = facts.notes[ChallengeNotes.self] ?? ChallengeResponder.HopState()
            guard
                let answered = responder.answer(
                    challenge: challenge, to: facts.hopRequest, firstURL: facts.credentialOwner,
                    bodyIsHashable: !request.sendsUploadBody, hop: &hop, logger: logger)
            else {
                return completion(.deliver)
            }
            var notes = facts.notes
            notes[ChallengeNotes.self] = hop
            logger?.debug("answering challenge", metadata: ["bluebonnet-request-id": "\(request.id)"])
            completion(.sameHopAgain(answered, notes: notes))
        }
    }

    /// A 401's Basic or Digest challenge, told to a monitor as URLSession tells Alamofire's delegate, whether or not
    /// a credential answers it.
    func monitorEvent(for facts: HopFacts) -> SessionMonitorEvent? {
        guard facts.head.statusCode == 401, let field = facts.head.value(for: "WWW-Authenticate"),
            let url = facts.hopRequest.url
        else { return nil }
        let failures = facts.notes[ChallengeNotes.self]?.answers ?? 0
        let head = facts.head
        return { monitor, session, task in
            guard
                let challenge = URLAuthenticationChallenge.told(
                    field: field, url: url, previousFailureCount: failures, response: head.httpResponse)
            else { return }
            monitor.urlSession(session, task: task, didReceive: challenge)
        }
    }

    private func responder(for facts: HopFacts) -> ChallengeResponder {
        ChallengeResponder(requestCredential: facts.features[RequestCredential.self], storage: storage)
    }
}

extension URLAuthenticationChallenge {
    /// The challenge URLSession would make of a 401's `WWW-Authenticate` field: its first Basic or Digest challenge,
    /// with the origin and realm as protection space; `nil` when the field has neither, or cannot be parsed.
    ///
    /// Only told: Bluebonnet answers the challenge itself, so its sender ignores what a monitor does with it.
    static func told(field: String, url: URL, previousFailureCount: Int, response: HTTPURLResponse)
        -> URLAuthenticationChallenge?
    {
        guard let host = url.host, let scheme = url.scheme?.lowercased(),
            let challenges = try? AuthenticationChallengeParser().parse(field),
            let (challenge, method) = challenges.lazy.compactMap({ challenge -> (AuthenticationChallenge, String)? in
                if challenge.isScheme("Basic") { return (challenge, NSURLAuthenticationMethodHTTPBasic) }
                if challenge.isScheme("Digest") { return (challenge, NSURLAuthenticationMethodHTTPDigest) }
                return nil
            }).first
        else { return nil }
        let space = URLProtectionSpace(
            host: host, port: Origin.effectivePort(url), protocol: scheme, realm: challenge.realm,
            authenticationMethod: method)
        return URLAuthenticationChallenge(
            protectionSpace: space, proposedCredential: nil, previousFailureCount: previousFailureCount,
            failureResponse: response, error: nil, sender: IgnoredChallengeSender())
    }
}

/// The sender of a challenge a monitor is told of: Bluebonnet answers challenges itself (`ChallengeResponder`), so
/// nothing a monitor sends back changes the request.
private final class IgnoredChallengeSender: NSObject, URLAuthenticationChallengeSender {
    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {}
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {}
    func cancel(_ challenge: URLAuthenticationChallenge) {}
    func performDefaultHandling(for challenge: URLAuthenticationChallenge) {}
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {}
}
