import Foundation

/// An upload's body as the transport streams it: where the bytes come from and how many there are.
struct UploadBody: Sendable {
    /// Where the bytes come from.
    enum Source: @unchecked Sendable {
        // `InputStream` is not `Sendable`; the transport reads it from one thread at a time, in order.
        case data(Data)
        case file(URL)
        case stream(InputStream)
    }

    let source: Source
    /// The body's size; `nil` sends it with chunked transfer encoding.
    let length: Int64?

    /// Whether the body can be sent again, for a redirect that keeps it (307, 308): a stream is read only once.
    var isReplayable: Bool {
        if case .stream = source { return false }
        return true
    }

    /// A fresh reader positioned at the first byte.
    func makeReader() throws -> any BodyChunkReader {
        switch source {
        case let .data(data): return DataChunkReader(data: data)
        case let .file(url): return try FileChunkReader(url: url)
        case let .stream(stream): return InputStreamChunkReader(stream: stream)
        }
    }
}
