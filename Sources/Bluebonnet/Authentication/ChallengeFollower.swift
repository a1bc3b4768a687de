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

    private func responder(for facts: HopFacts) -> ChallengeResponder {
        ChallengeResponder(requestCredential: facts.features[RequestCredential.self], storage: storage)
    }
}
