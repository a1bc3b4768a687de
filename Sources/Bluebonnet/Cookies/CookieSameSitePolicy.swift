/// A cookie's `SameSite` attribute (RFC 6265bis), which FoundationNetworking's `HTTPCookie` cannot hold on Linux.
///
/// An HTTP client has no browsing context, so every request is a same-site, top-level one and the attribute
/// restricts nothing; it is parsed and kept so code that inspects or re-exports cookies sees what the server said.
public enum CookieSameSitePolicy: String, Sendable, Codable {
    /// `SameSite=Strict`.
    case strict = "Strict"
    /// `SameSite=Lax`.
    case lax = "Lax"
    /// `SameSite=None`.
    case none = "None"
}
