/// Namespace for informational values, as in Alamofire.
public enum AFInfo {
    /// The version of Alamofire's API this library implements (code written for it compiles against this one).
    ///
    /// Bluebonnet's own version is `bluebonnetVersion`, and it is what the default `User-Agent` names: requests say
    /// which client sent them, so that header has `Bluebonnet/<version>` where Alamofire's has `Alamofire/<version>`.
    public static let version = "5.12.0"
}
