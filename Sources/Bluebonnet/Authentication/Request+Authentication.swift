import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Request {
    /// The credential that answers this request's HTTP Basic and Digest challenges, set by `authenticate(...)`.
    public var credential: URLCredential? { feature(RequestCredential.self) }

    /// Answers the HTTP Basic or Digest challenge of a 401 from the request's origin with a user and password.
    ///
    /// The challenge is answered once per hop, as URLSession does: wrong credentials end with the 401 response. The
    /// credential is never offered to another origin a redirect leads to.
    ///
    /// - Parameters:
    ///   - username:    The user.
    ///   - password:    The password.
    ///   - persistence: The credential's persistence; `.forSession` by default. The credential is not written to a
    ///                  `URLCredentialStorage`.
    /// - Returns: The instance.
    @discardableResult
    public func authenticate(username: String, password: String, persistence: URLCredential.Persistence = .forSession)
        -> Self
    {
        authenticate(with: URLCredential(user: username, password: password, persistence: persistence))
    }

    /// Answers the HTTP Basic or Digest challenge of a 401 from the request's origin with `credential`.
    ///
    /// - Parameter credential: A credential with a user and password.
    /// - Returns: The instance.
    @discardableResult
    public func authenticate(with credential: URLCredential) -> Self {
        setFeature(RequestCredential.self, to: credential)
        return self
    }
}
