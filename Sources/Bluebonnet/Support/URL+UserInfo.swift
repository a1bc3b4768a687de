import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension URL {
    /// The absolute string without the user and password, which descriptions meant for people and logs must not show.
    var absoluteStringWithoutUserInfo: String { withoutUserInfo.absoluteString }

    /// The URL without its user and password, for anything kept beyond the request (a cache key, a stored entry):
    /// a password in a URL must never reach a disk.
    var withoutUserInfo: URL {
        guard user != nil || password != nil, var components = URLComponents(url: self, resolvingAgainstBaseURL: true)
        else { return self }
        components.user = nil
        components.password = nil
        return components.url ?? self
    }

    /// The URL's user and password as a credential that lives for the request only; `nil` without a user.
    var userInfoCredential: URLCredential? {
        guard let components = URLComponents(url: self, resolvingAgainstBaseURL: false),
            let user = components.user, !user.isEmpty
        else { return nil }
        return URLCredential(user: user, password: components.password ?? "", persistence: .none)
    }
}
