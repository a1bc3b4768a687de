import Foundation

/// A type which can serialize incoming chunks of a `DataStreamRequest`'s body.
public protocol DataStreamSerializer: Sendable {
    /// Type produced from the serialized `Data`.
    associatedtype SerializedObject

    /// Serializes one incoming chunk.
    ///
    /// - Parameter data: The chunk.
    /// - Returns: The value.
    /// - Throws: Any error; it reaches the handler as `AFError.responseSerializationFailed`.
    func serialize(_ data: Data) throws -> SerializedObject
}

/// `DataStreamSerializer` which uses the provided `DataPreprocessor` and `DataDecoder` to serialize each chunk.
public struct DecodableStreamSerializer<T: Decodable>: DataStreamSerializer {
    /// `DataDecoder` used to decode incoming `Data`.
    public let decoder: any DataDecoder
    /// `DataPreprocessor` incoming `Data` is passed through before being passed to the `DataDecoder`.
    public let dataPreprocessor: any DataPreprocessor

    /// Creates an instance with the provided `DataDecoder` and `DataPreprocessor`.
    ///
    /// - Parameters:
    ///   - decoder:          `DataDecoder` used to decode incoming `Data`. `JSONDecoder()` by default.
    ///   - dataPreprocessor: `DataPreprocessor` used to process incoming `Data` before it's passed through the
    ///                       `decoder`. `PassthroughPreprocessor()` by default.
    public init(
        decoder: any DataDecoder = JSONDecoder(), dataPreprocessor: any DataPreprocessor = PassthroughPreprocessor()
    ) {
        self.decoder = decoder
        self.dataPreprocessor = dataPreprocessor
    }

    /// Preprocesses and decodes `data`.
    public func serialize(_ data: Data) throws -> T {
        let processedData = try dataPreprocessor.preprocess(data)
        do {
            return try decoder.decode(T.self, from: processedData)
        } catch {
            throw AFError.responseSerializationFailed(reason: .decodingFailed(error: error))
        }
    }
}

/// `DataStreamSerializer` which performs no serialization on incoming `Data`.
public struct PassthroughStreamSerializer: DataStreamSerializer {
    /// Creates an instance.
    public init() {}

    /// Returns `data` unchanged.
    public func serialize(_ data: Data) throws -> Data { data }
}

/// `DataStreamSerializer` which serializes each chunk into a UTF-8 `String` on its own (invalid bytes replaced).
/// `responseStreamString` keeps a character split across chunks whole; this serializer, used alone, cannot.
public struct StringStreamSerializer: DataStreamSerializer {
    /// Creates an instance.
    public init() {}

    /// Decodes `data` as UTF-8.
    public func serialize(_ data: Data) throws -> String {
        String(decoding: data, as: UTF8.self)
    }
}

extension DataStreamSerializer {
    /// Creates a `DecodableStreamSerializer` instance with the provided `DataDecoder` and `DataPreprocessor`.
    ///
    /// - Parameters:
    ///   - type:         `Decodable` type to decode from stream data.
    ///   - decoder:      `DataDecoder` used to decode incoming `Data`. `JSONDecoder()` by default.
    ///   - dataPreprocessor: `DataPreprocessor` used to process incoming `Data`. `PassthroughPreprocessor()` by
    ///                       default.
    /// - Returns: The serializer.
    public static func decodable<T: Decodable>(
        of type: T.Type, decoder: any DataDecoder = JSONDecoder(),
        dataPreprocessor: any DataPreprocessor = PassthroughPreprocessor()
    ) -> Self
    where Self == DecodableStreamSerializer<T> {
        DecodableStreamSerializer<T>(decoder: decoder, dataPreprocessor: dataPreprocessor)
    }
}

extension DataStreamSerializer where Self == PassthroughStreamSerializer {
    /// Provides a `PassthroughStreamSerializer` instance.
    public static var passthrough: PassthroughStreamSerializer { PassthroughStreamSerializer() }
}

extension DataStreamSerializer where Self == StringStreamSerializer {
    /// Provides a `StringStreamSerializer` instance.
    public static var string: StringStreamSerializer { StringStreamSerializer() }
}

/// Turns chunks into UTF-8 text without splitting a character that straddles two chunks: an incomplete sequence at a
/// chunk's end waits for the next.
struct UTF8ChunkDecoder {
    private var pending = Data()

    /// The text of `chunk` after what was held back, minus an incomplete sequence at its end.
    mutating func decode(_ chunk: Data) -> String {
        var bytes = pending
        bytes.append(chunk)
        let keep = Self.incompleteSuffixLength(bytes)
        pending = bytes.suffix(keep)
        return String(decoding: bytes.dropLast(keep), as: UTF8.self)
    }

    /// What is held back, decoded (with replacement characters) at the end of the stream.
    mutating func flush() -> String? {
        defer { pending = Data() }
        return pending.isEmpty ? nil : String(decoding: pending, as: UTF8.self)
    }

    /// How many bytes at the end start a sequence that needs more bytes than follow it (at most 3).
    static func incompleteSuffixLength(_ bytes: Data) -> Int {
        var index = bytes.endIndex
        var count = 0
        while index > bytes.startIndex, count < 4 {
            index -= 1
            count += 1
            let byte = bytes[index]
            if byte & 0xC0 == 0x80 { continue }
            let needed = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
            return needed > count ? count : 0
        }
        return 0
    }
}

/// Cuts a byte stream into JSON values: newline-delimited (JSON Lines) values split across chunks are joined, and a
/// chunk holding one whole value without a newline (as Alamofire's per-chunk decoding expects) stands alone. A
/// value longer than `maximumLength` without a newline fails rather than growing memory.
struct JSONValueFramer {
    /// The longest value held while waiting for its end.
    static let maximumLength = 16 * 1024 * 1024

    private var buffer = Data()
    /// How many bytes at the start of `buffer` are known to hold no newline: each chunk is scanned once, so a value
    /// that never ends costs linear time until it reaches `maximumLength`.
    private var scanned = 0
    /// Bytes searched for a newline so far, counted as the searches go: each byte once, for tests that prove the cost
    /// linear by counting it rather than timing it.
    private(set) var bytesSearched = 0

    /// The complete values `chunk` finishes, in order.
    mutating func frames(_ chunk: Data, isComplete: (Data) -> Bool) throws -> [Data] {
        // A value held from earlier chunks waits for its newline (or the end): parsing it again on every chunk would
        // cost a server's whole value per chunk, quadratic in its length.
        var remainderIsNew = buffer.isEmpty
        buffer.append(chunk)
        var frames: [Data] = []
        var start = buffer.startIndex
        var searchFrom = buffer.startIndex + scanned
        while let newline = buffer[searchFrom...].firstIndex(of: UInt8(ascii: "\n")) {
            bytesSearched += newline - searchFrom + 1
            let line = buffer[start..<newline]
            if !Self.isBlank(line) { frames.append(Data(line)) }
            start = buffer.index(after: newline)
            searchFrom = start
            remainderIsNew = true
        }
        // The last search went from `searchFrom` to the end without finding one.
        bytesSearched += buffer.endIndex - searchFrom
        // One copy of what is left, not one per line.
        if start != buffer.startIndex { buffer = Data(buffer[start...]) }
        scanned = buffer.count
        if remainderIsNew, !buffer.isEmpty, !Self.isBlank(buffer), isComplete(buffer) {
            frames.append(buffer)
            buffer = Data()
            scanned = 0
        }
        if buffer.count > Self.maximumLength {
            buffer = Data()
            scanned = 0
            throw AFError.responseLimitExceeded(reason: .maximumResponseSizeExceeded(limit: Int64(Self.maximumLength)))
        }
        return frames
    }

    /// What is left at the end of the stream, if it is not blank.
    mutating func flush() -> Data? {
        defer {
            buffer = Data()
            scanned = 0
        }
        return Self.isBlank(buffer) ? nil : buffer
    }

    private static func isBlank(_ bytes: Data) -> Bool {
        bytes.allSatisfy { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D || $0 == 0x0A }
    }
}
