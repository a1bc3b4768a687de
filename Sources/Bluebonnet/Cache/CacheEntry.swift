import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One stored response (one variant of a URL): its head, what the request said for the fields its `Vary` names,
/// and when it was requested and received, from which its age is reckoned (RFC 9111 §4.2.3). The body is kept apart.
struct CacheEntry: Codable, Equatable, Sendable {
    /// The cache key: the method and the URL without its fragment, user or password.
    var key: String
    /// The response's URL without its user or password.
    var url: URL
    var statusCode: Int
    /// Every header field, in order, as `[name, value]`.
    var headers: [[String]]
    var protocolName: String
    /// For each field `Vary` names (lower-cased), the request's value, `nil` when the request had none.
    var varyValues: [String: String?]
    /// Seconds since 1970.
    var requestTime: Double
    var responseTime: Double
    var bodyLength: Int
    /// A `CachedURLResponse`'s `userInfo`, as a property list, when it had one that is.
    var userInfo: Data?

    /// `userInfo` as a dictionary again.
    var decodedUserInfo: [AnyHashable: Any]? {
        guard let userInfo,
            let object = try? PropertyListSerialization.propertyList(from: userInfo, format: nil) as? [String: Any]
        else {
            return nil
        }
        return Dictionary(uniqueKeysWithValues: object.map { (AnyHashable($0.key), $0.value) })
    }

    /// The value of a field; repeated fields joined by commas.
    func field(_ name: String) -> String? {
        let values = headers.filter { $0.count == 2 && $0[0].equalsIgnoringCase(name) }.map {
            $0[1]
        }
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// The response's head, its fields in their stored order, with `Age` set to `age` when given.
    func head(age: Int? = nil) -> ResponseHead {
        var fields = headers.filter {
            $0.count == 2 && !(age != nil && $0[0].equalsIgnoringCase("Age"))
        }
        .map { (name: $0[0], value: $0[1]) }
        if let age { fields.append((name: "Age", value: String(age))) }
        return ResponseHead(url: url, statusCode: statusCode, httpVersion: "HTTP/1.1", fields: fields)
    }

    /// The response as `HTTPURLResponse`, its fields in their stored order, with `Age` set to `age` when given.
    func httpResponse(age: Int? = nil) -> HTTPURLResponse {
        head(age: age).httpResponse
    }

    /// A response's fields as stored: in the order they arrived when Bluebonnet received it.
    static func fields(of response: HTTPURLResponse) -> [[String]] {
        if let ordered = response as? OrderedHTTPURLResponse, !ordered.orderedFields.isEmpty {
            return ordered.orderedFields.map { [$0.name, $0.value] }
        }
        return response.allHeaderFields.compactMap { name, value -> [String]? in
            guard let name = name as? String, let value = value as? String else { return nil }
            return [name, value]
        }
    }

    /// The key of a request: only `GET` responses are stored, so the method is part of it for clarity only.
    static func key(for url: URL) -> String? {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else { return nil }
        components.fragment = nil
        // Keys are written to disk: a URL's password never is, and the user is not part of the resource.
        components.user = nil
        components.password = nil
        return components.string.map { "GET " + $0 }
    }

    /// The fields `Vary` names, lower-cased; `["*"]` for `Vary: *`.
    static func varyNames(_ vary: String?) -> [String] {
        guard let vary else { return [] }
        return vary.split(separator: ",").map { $0.trimmingWhitespace().lowercased() }.filter { !$0.isEmpty }
    }

    /// The request's values for `names`, from the fields as sent.
    static func varyValues(_ names: [String], in headers: [(name: String, value: String)]) -> [String: String?] {
        var values: [String: String?] = [:]
        for name in names {
            let matching = headers.filter { $0.name.lowercased() == name }.map(\.value)
            values[name] = matching.isEmpty ? String?.none : matching.joined(separator: ", ")
        }
        return values
    }

    /// Whether a request with these fields may be answered by this variant (§4.1): each field `Vary` names has the
    /// same value, whitespace around commas aside.
    func matches(_ headers: [(name: String, value: String)]) -> Bool {
        let requested = Self.varyValues(Array(varyValues.keys), in: headers)
        return varyValues.allSatisfy { name, stored in
            Self.normalized(stored) == Self.normalized(requested[name] ?? nil)
        }
    }

    /// A variant's identity among the variants of its key.
    var variantID: String {
        varyValues.keys.sorted().map { "\($0)=\(Self.normalized(varyValues[$0] ?? nil) ?? "\u{0}")" }.joined(
            separator: "\n")
    }

    private static func normalized(_ value: String?) -> String? {
        value.map { $0.split(separator: ",").map { $0.trimmingWhitespace() }.joined(separator: ",") }
    }
}

extension CacheEntry {
    /// The entry for a `CachedURLResponse`: its head, and the request's values of the fields its `Vary` names.
    /// `nil` for a response that is not HTTP, may not be stored, or says `Vary: *`.
    init?(
        cached: CachedURLResponse, key: String, requestHeaders: [String: String], requestTime: Date = Date(),
        responseTime: Date = Date(), protocolName: String = "http/1.1"
    ) {
        guard cached.storagePolicy != .notAllowed, let response = cached.response as? HTTPURLResponse,
            let url = response.url
        else {
            return nil
        }
        let fields = Self.fields(of: response)
        self.init(
            key: key, url: url.withoutUserInfo, statusCode: response.statusCode, headers: fields,
            protocolName: protocolName,
            varyValues: [:], requestTime: requestTime.timeIntervalSince1970,
            responseTime: responseTime.timeIntervalSince1970,
            bodyLength: cached.data.count)
        let names = Self.varyNames(field("Vary"))
        guard !names.contains("*") else { return nil }
        varyValues = Self.varyValues(names, in: requestHeaders.map { (name: $0.key, value: $0.value) })
        if let info = cached.userInfo, !info.isEmpty {
            let plist = Dictionary(
                info.compactMap { key, value in (key as? String).map { ($0, value) } }, uniquingKeysWith: { $1 }
            )
            .filter { $0.key != FoundationResponseStore.metadataKey }
            userInfo = try? PropertyListSerialization.data(fromPropertyList: plist, format: .binary, options: 0)
        }
    }
}
