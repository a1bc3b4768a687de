import Foundation

/// Encodes any `Encodable` value into `application/x-www-form-urlencoded` text, with Alamofire's options for arrays,
/// booleans, data, dates, keys, key paths, `nil` and spaces.
public final class URLEncodedFormEncoder: Sendable {
    /// How array keys are written.
    public enum ArrayEncoding: Sendable {
        /// `key[]=value`.
        case brackets
        /// `key=value`.
        case noBrackets
        /// `key[0]=value`.
        case indexInBrackets
        /// The closure's key for each index.
        case custom(@Sendable (_ key: String, _ index: Int) -> String)

        /// The key for the element at `index`.
        ///
        /// - Parameters:
        ///   - key:   The array's key.
        ///   - index: The element's index.
        /// - Returns: The element's key.
        func encode(_ key: String, atIndex index: Int) -> String {
            switch self {
            case .brackets: return "\(key)[]"
            case .noBrackets: return key
            case .indexInBrackets: return "\(key)[\(index)]"
            case let .custom(encoding): return encoding(key, index)
            }
        }
    }

    /// How booleans are written.
    public enum BoolEncoding: Sendable {
        /// `1` and `0`.
        case numeric
        /// `true` and `false`.
        case literal

        func encode(_ value: Bool) -> String {
            switch self {
            case .numeric: return value ? "1" : "0"
            case .literal: return value ? "true" : "false"
            }
        }
    }

    /// How `Data` is written.
    public enum DataEncoding: Sendable {
        /// `Data`'s own `Encodable` representation (an array of bytes).
        case deferredToData
        /// Base64.
        case base64
        /// The closure's string.
        case custom(@Sendable (Data) throws -> String)
    }

    /// How `Date` is written.
    public enum DateEncoding: @unchecked Sendable {
        // @unchecked: a `DateFormatter` is not `Sendable`, but the encoder only reads it (`string(from:)` is safe
        // from several threads) and never changes its settings.
        /// `Date`'s own `Encodable` representation (seconds since 2001).
        case deferredToDate
        /// Seconds since 1970.
        case secondsSince1970
        /// Milliseconds since 1970.
        case millisecondsSince1970
        /// ISO 8601 with the internet date-time format.
        case iso8601
        /// The formatter's string. The formatter must not be changed once handed over.
        case formatted(DateFormatter)
        /// The closure's string.
        case custom(@Sendable (Date) throws -> String)
    }

    /// How keys are written.
    public enum KeyEncoding: Sendable {
        /// As they are.
        case useDefaultKeys
        /// `camelCase` → `camel_case`.
        case convertToSnakeCase
        /// `camelCase` → `camel-case`.
        case convertToKebabCase
        /// First letter uppercased.
        case capitalized
        /// All uppercased.
        case uppercased
        /// All lowercased.
        case lowercased
        /// The closure's key.
        case custom(@Sendable (String) -> String)

        /// The key as written.
        ///
        /// - Parameter key: The coding key's string.
        /// - Returns: The encoded key.
        func encode(_ key: String) -> String {
            switch self {
            case .useDefaultKeys: return key
            case .convertToSnakeCase: return Self.separated(key, by: "_")
            case .convertToKebabCase: return Self.separated(key, by: "-")
            case .capitalized: return key.prefix(1).uppercased() + key.dropFirst()
            case .uppercased: return key.uppercased()
            case .lowercased: return key.lowercased()
            case let .custom(encoding): return encoding(key)
            }
        }

        /// Splits camel case into lowercased words: `myURLValue` → `my_url_value`.
        static func separated(_ key: String, by separator: Character) -> String {
            let characters = Array(key)
            guard !characters.isEmpty else { return key }
            var result = ""
            for (index, character) in characters.enumerated() {
                if character.isUppercase, index > 0 {
                    let previous = characters[index - 1]
                    let next = index + 1 < characters.count ? characters[index + 1] : nil
                    // A boundary before an uppercase letter after a lowercase one or a digit, and before the last
                    // capital of an acronym that a lowercase word follows ("URLValue" → "url_value").
                    if previous.isLowercase || previous.isNumber || (previous.isUppercase && next?.isLowercase == true)
                    {
                        result.append(separator)
                    }
                }
                result += character.lowercased()
            }
            return result
        }
    }

    /// How nested keys are joined to their parent.
    public struct KeyPathEncoding: Sendable {
        /// `parent[child]`.
        public static let brackets = KeyPathEncoding { "[\($0)]" }
        /// `parent.child`.
        public static let dots = KeyPathEncoding { ".\($0)" }

        private let encoding: @Sendable (String) -> String

        /// Creates an encoding from a closure that writes the child part.
        ///
        /// - Parameter encoding: Turns a subkey into what follows the parent key.
        public init(encoding: @escaping @Sendable (_ subkey: String) -> String) {
            self.encoding = encoding
        }

        func encodeKeyPath(_ subkey: String) -> String { encoding(subkey) }
    }

    /// How `nil` is written.
    public struct NilEncoding: Sendable {
        /// Leaves the key out.
        public static let dropKey = NilEncoding { nil }
        /// Writes the key with an empty value: `key=`.
        public static let dropValue = NilEncoding { "" }
        /// Writes `key=null`.
        public static let null = NilEncoding { "null" }

        private let encoding: @Sendable () -> String?

        /// Creates an encoding from a closure; returning `nil` leaves the key out.
        ///
        /// - Parameter encoding: The value written for `nil`.
        public init(encoding: @escaping @Sendable () -> String?) {
            self.encoding = encoding
        }

        func encodeNil() -> String? { encoding() }
    }

    /// How spaces are written.
    public enum SpaceEncoding: Sendable {
        /// `%20`.
        case percentEscaped
        /// `+`.
        case plusReplaced

        func encode(_ string: String) -> String {
            switch self {
            case .percentEscaped: return string.replacingOccurrences(of: " ", with: "%20")
            case .plusReplaced: return string.replacingOccurrences(of: " ", with: "+")
            }
        }
    }

    /// Errors of the encoder.
    public enum Error: Swift.Error {
        /// The top-level value is not keyed (a struct or dictionary), so it has no names to write.
        case invalidRootObject(String)
    }

    /// Whether key-value pairs are sorted alphabetically.
    public let alphabetizeKeyValuePairs: Bool
    /// How array keys are written.
    public let arrayEncoding: ArrayEncoding
    /// How booleans are written.
    public let boolEncoding: BoolEncoding
    /// How `Data` is written.
    public let dataEncoding: DataEncoding
    /// How `Date` is written.
    public let dateEncoding: DateEncoding
    /// How keys are written.
    public let keyEncoding: KeyEncoding
    /// How nested keys are joined.
    public let keyPathEncoding: KeyPathEncoding
    /// How `nil` is written.
    public let nilEncoding: NilEncoding
    /// How spaces are written.
    public let spaceEncoding: SpaceEncoding
    /// The characters left unescaped.
    public let allowedCharacters: CharacterSet

    /// Creates an encoder; the defaults are Alamofire's.
    ///
    /// - Parameters:
    ///   - alphabetizeKeyValuePairs: Sort pairs. `true` by default.
    ///   - arrayEncoding:            `.brackets` by default.
    ///   - boolEncoding:             `.numeric` by default.
    ///   - dataEncoding:             `.base64` by default.
    ///   - dateEncoding:             `.deferredToDate` by default.
    ///   - keyEncoding:              `.useDefaultKeys` by default.
    ///   - keyPathEncoding:          `.brackets` by default.
    ///   - nilEncoding:              `.dropKey` by default.
    ///   - spaceEncoding:            `.percentEscaped` by default.
    ///   - allowedCharacters:        `.afURLQueryAllowed` by default.
    public init(
        alphabetizeKeyValuePairs: Bool = true,
        arrayEncoding: ArrayEncoding = .brackets,
        boolEncoding: BoolEncoding = .numeric,
        dataEncoding: DataEncoding = .base64,
        dateEncoding: DateEncoding = .deferredToDate,
        keyEncoding: KeyEncoding = .useDefaultKeys,
        keyPathEncoding: KeyPathEncoding = .brackets,
        nilEncoding: NilEncoding = .dropKey,
        spaceEncoding: SpaceEncoding = .percentEscaped,
        allowedCharacters: CharacterSet = .afURLQueryAllowed
    ) {
        self.alphabetizeKeyValuePairs = alphabetizeKeyValuePairs
        self.arrayEncoding = arrayEncoding
        self.boolEncoding = boolEncoding
        self.dataEncoding = dataEncoding
        self.dateEncoding = dateEncoding
        self.keyEncoding = keyEncoding
        self.keyPathEncoding = keyPathEncoding
        self.nilEncoding = nilEncoding
        self.spaceEncoding = spaceEncoding
        self.allowedCharacters = allowedCharacters
    }

    /// Encodes `value` as form text.
    ///
    /// - Parameter value: A keyed `Encodable` (a struct or dictionary).
    /// - Returns: The form, e.g. `a=1&b%5B%5D=2`.
    /// - Throws: `URLEncodedFormEncoder.Error.invalidRootObject` for a value that is not keyed, or what encoding throws.
    public func encode(_ value: any Encodable) throws -> String {
        let root = FormNode()
        try FormValueEncoder(node: root, options: self, codingPath: []).box(value)
        switch root.value {
        case let .object(pairs): return FormSerializer(options: self).serialize(pairs)
        // An empty dictionary, or a type that writes nothing: an empty form, as in Alamofire (whose root starts as an
        // empty object).
        case .empty: return ""
        case .string, .array: throw Error.invalidRootObject("\(root.value)")
        }
    }

    /// Encodes `value` as UTF-8 form data.
    ///
    /// - Parameter value: A keyed `Encodable`.
    /// - Returns: The form as data.
    /// - Throws: As `encode(_:) -> String`.
    public func encode(_ value: any Encodable) throws -> Data {
        let string: String = try encode(value)
        return Data(string.utf8)
    }
}
