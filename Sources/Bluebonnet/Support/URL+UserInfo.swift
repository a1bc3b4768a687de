import Foundation

extension URL {
    /// The absolute string without the user and password, which descriptions meant for people and logs must not show.
    var absoluteStringWithoutUserInfo: String {
        guard user != nil, var components = URLComponents(url: self, resolvingAgainstBaseURL: false) else { return absoluteString }
        components.user = nil
        components.password = nil
        return components.string ?? absoluteString
    }
}
