import Foundation

/// Reads a body source in chunks with blocking calls; a reader is used by one thread at a time and then closed.
protocol BodyChunkReader: AnyObject {
    /// The next bytes, at most `maxLength`; empty once the source is exhausted.
    func read(upTo maxLength: Int) throws -> Data
    /// Releases the file descriptor or stream; reading afterwards returns nothing.
    func close()
}

/// A source that ended before the length it announced, or ran past it.
public struct BodyLengthMismatchError: LocalizedError, Sendable, CustomStringConvertible {
    /// The number of bytes the source was said to hold.
    public let expected: UInt64
    /// The number of bytes it actually yielded (capped at `expected + 1` when it ran long).
    public let actual: UInt64

    /// Explains which side was short.
    public var description: String {
        actual < expected
            ? "The body source ended after \(actual) of its \(expected) bytes."
            : "The body source holds more than its announced \(expected) bytes."
    }

    /// The same as `description`, for `localizedDescription`.
    public var errorDescription: String? { description }
}

/// Reads a file through `FileHandle`, so a large file never sits in memory.
final class FileChunkReader: BodyChunkReader {
    private var handle: FileHandle?

    init(url: URL) throws {
        handle = try FileHandle(forReadingFrom: url)
    }

    func read(upTo maxLength: Int) throws -> Data {
        guard let handle else { return Data() }
        return try handle.read(upToCount: maxLength) ?? Data()
    }

    func close() {
        try? handle?.close()
        handle = nil
    }

    deinit { close() }
}

/// Reads an `InputStream`, opening it on first use. A stream can be read only once.
final class InputStreamChunkReader: BodyChunkReader {
    private let stream: InputStream
    private var opened = false
    private var finished = false

    init(stream: InputStream) {
        self.stream = stream
    }

    func read(upTo maxLength: Int) throws -> Data {
        guard !finished else { return Data() }
        if !opened {
            opened = true
            if stream.streamStatus == .notOpen { stream.open() }
        }
        // corelibs' `streamError` traps when there is none, so it is read only in the `.error` state.
        if stream.streamStatus == .error { throw streamFailure() }
        var chunk = Data(count: maxLength)
        let count = chunk.withUnsafeMutableBytes { buffer in
            stream.read(buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), maxLength: maxLength)
        }
        if count < 0 { throw streamFailure() }
        if count == 0 {
            finished = true
            return Data()
        }
        chunk.count = count
        return chunk
    }

    private func streamFailure() -> any Error {
        stream.streamStatus == .error
            ? (stream.streamError ?? CocoaError(.fileReadUnknown)) : CocoaError(.fileReadUnknown)
    }

    func close() {
        finished = true
        if opened { stream.close() }
    }
}

/// Hands out slices of bytes already in memory.
final class DataChunkReader: BodyChunkReader {
    private let data: Data
    private var offset: Int

    init(data: Data) {
        self.data = data
        offset = data.startIndex
    }

    func read(upTo maxLength: Int) throws -> Data {
        let end = min(offset + maxLength, data.endIndex)
        defer { offset = end }
        return data[offset..<end]
    }

    func close() {
        offset = data.endIndex
    }
}

extension BodyChunkReader {
    /// Reads exactly `length` bytes in chunks of at most `chunkSize`, handing each to `sink`. A source shorter than
    /// `length` throws `BodyLengthMismatchError`; so does a longer one, unless `truncatesLongerSource`, when the rest
    /// is left unread.
    func copy(length: UInt64, chunkSize: Int, truncatesLongerSource: Bool = false, to sink: (Data) throws -> Void)
        throws
    {
        var remaining = length
        while remaining > 0 {
            let chunk = try read(upTo: Int(min(UInt64(chunkSize), remaining)))
            guard !chunk.isEmpty else {
                throw BodyLengthMismatchError(expected: length, actual: length - remaining)
            }
            remaining -= UInt64(chunk.count)
            try sink(chunk)
        }
        if !truncatesLongerSource, try !read(upTo: 1).isEmpty {
            throw BodyLengthMismatchError(expected: length, actual: length + 1)
        }
    }
}
