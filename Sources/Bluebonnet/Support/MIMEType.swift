import Foundation

/// A media type or range, compared case-insensitively without parameters.
struct MIMEType: Equatable {
    let type: String
    let subtype: String

    var isWildcard: Bool { type == "*" && subtype == "*" }

    init?(_ string: String) {
        let essence = string.split(separator: ";", maxSplits: 1).first.map(String.init) ?? string
        let parts = essence.trimmingCharacters(in: .whitespacesAndNewlines).lowercased().split(
            separator: "/", maxSplits: 1)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty else { return nil }
        type = String(parts[0])
        subtype = String(parts[1])
    }

    func matches(_ mime: MIMEType) -> Bool {
        (type == "*" || type == mime.type) && (subtype == "*" || subtype == mime.subtype)
    }
}
