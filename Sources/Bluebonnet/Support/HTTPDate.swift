import Foundation

/// Reads the date formats HTTP allows (RFC 9110 §5.6.7): the preferred IMF-fixdate and the obsolete RFC 850 and
/// asctime forms a recipient must still accept.
enum HTTPDate {
    private static let formats = [
        "EEE, dd MMM yyyy HH:mm:ss 'GMT'", // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
        "EEEE, dd-MMM-yy HH:mm:ss 'GMT'", // RFC 850:     Sunday, 06-Nov-94 08:49:37 GMT
        "EEE MMM d HH:mm:ss yyyy", // asctime:     Sun Nov  6 08:49:37 1994
    ]

    /// The date `value` names, or `nil` when it is in none of the three forms.
    ///
    /// - Parameter value: A header value such as `Retry-After`'s or `Expires`'s.
    /// - Returns: The date.
    static func parse(_ value: String) -> Date? {
        // Rare (a retry after a 429 or 503), so a formatter per call costs nothing that matters and shares no state.
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        let collapsed = value.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
        for format in formats {
            formatter.dateFormat = format
            if let date = formatter.date(from: collapsed) { return date }
        }
        return nil
    }
}
