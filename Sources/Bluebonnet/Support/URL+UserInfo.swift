import Foundation

extension URL {
    /// The absolute string without the user and password, which descriptions meant for people and logs must not show.
    var absoluteStringWithoutUserInfo: String { withoutUserInfo.absoluteString }

    /// The URL without its user and password, for anything kept beyond the request (a cache key, a stored entry):
    /// a password in a URL must never reach a disk.
    var withoutUserInfo: URL {
        guard user != nil || password != nil, var components = URLComponents(url: self, resolvingAgainstBaseURL: true) else { return self }
        components.user = nil
        components.password = nil
        return components.url ?? self
    }
}
