import Foundation

/// Reads the dates servers send (`Date`, `Expires`, `Last-Modified`, `Retry-After`, a cookie's `Expires`) by RFC 6265
/// §5.1.1's tolerant algorithm: it reads all three forms of RFC 9110's HTTP-date, and the looser forms servers
/// write for cookies, without a `DateFormatter`.
enum HTTPDate {
    /// The date in `value`, or `nil` when the algorithm rejects it.
    ///
    /// - Parameter value: A header or attribute value.
    /// - Returns: The date, in UTC.
    static func parse(_ value: String) -> Date? {
        parse(Substring(value))
    }

    /// The date in `value`, or `nil` when the algorithm rejects it.
    static func parse(_ value: Substring) -> Date? {
        var time: (hour: Int, minute: Int, second: Int)?
        var day: Int?
        var month: Int?
        var year: Int?
        for token in value.utf8.split(whereSeparator: isDelimiter) {
            if time == nil, let parsed = parseTime(token) {
                time = parsed
            } else if day == nil, let parsed = leadingNumber(token, digits: 1...2) {
                day = parsed
            } else if month == nil, let parsed = parseMonth(token) {
                month = parsed
            } else if year == nil, let parsed = leadingNumber(token, digits: 2...4) {
                year = parsed
            }
        }
        guard let time, let day, let month, var year else { return nil }
        if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
        guard year >= 1601, time.hour <= 23, time.minute <= 59, time.second <= 59,
            day >= 1, day <= daysIn(month: month, year: year)
        else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        let seconds = days * 86400 + time.hour * 3600 + time.minute * 60 + time.second
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// `delimiter = %x09 / %x20-2F / %x3B-40 / %x5B-60 / %x7B-7E`.
    private static func isDelimiter(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x09, 0x20...0x2F, 0x3B...0x40, 0x5B...0x60, 0x7B...0x7E: true
        default: false
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) }

    /// `n*mDIGIT ( non-digit *OCTET )`: the leading digits, if there are between `digits` of them.
    private static func leadingNumber(_ token: Substring.UTF8View, digits: ClosedRange<Int>) -> Int? {
        let count = token.prefix(while: isDigit).count
        guard digits.contains(count) else { return nil }
        return token.prefix(count).reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    /// `hms-time ( non-digit *OCTET )` with `hms-time = time-field ":" time-field ":" time-field`, each 1 or 2 digits.
    private static func parseTime(_ token: Substring.UTF8View) -> (Int, Int, Int)? {
        var fields: [Int] = []
        var rest = token
        for index in 0..<3 {
            guard let value = leadingNumber(rest, digits: 1...2) else { return nil }
            fields.append(value)
            rest = rest.drop(while: isDigit)
            if index < 2 {
                guard rest.first == UInt8(ascii: ":") else { return nil }
                rest = rest.dropFirst()
            }
        }
        return (fields[0], fields[1], fields[2])
    }

    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// `month = ( "jan" / ... / "dec" ) *OCTET`, case-insensitively.
    private static func parseMonth(_ token: Substring.UTF8View) -> Int? {
        guard token.count >= 3 else { return nil }
        let prefix = token.prefix(3).map { $0 | 0x20 }
        return months.firstIndex { Array($0.utf8) == prefix }.map { $0 + 1 }
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days from 1970-01-01 to a proleptic Gregorian date, by Howard Hinnant's `days_from_civil` algorithm.
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let shifted = month <= 2 ? year - 1 : year
        let era = (shifted >= 0 ? shifted : shifted - 399) / 400
        let yearOfEra = shifted - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
