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
    /// The coding an adapter chose for the body as it streams (a compressor), or `nil` to send the bytes as they are.
    private(set) var coding: UploadBodyCoding?

    init(source: Source, length: Int64?) {
        self.source = source
        self.length = length
    }

    /// This body sent through `coding`: every reader made codes the source's bytes, whose coded size is unknown.
    func coded(with coding: UploadBodyCoding) -> UploadBody {
        var coded = UploadBody(source: source, length: nil)
        coded.coding = coding
        return coded
    }

    /// Whether reading blocks or does real work (a file, a stream, a coding), so it runs off the event loop.
    var readingIsWork: Bool {
        if case .data = source { return coding != nil }
        return true
    }

    /// Whether the body can be sent again, for a redirect that keeps it (307, 308): a stream is read only once.
    var isReplayable: Bool {
        if case .stream = source { return false }
        return true
    }

    /// A fresh reader positioned at the first byte, of the coded bytes when the body has a coding.
    func makeReader() throws -> any BodyChunkReader {
        let reader: any BodyChunkReader
        switch source {
        case let .data(data): reader = DataChunkReader(data: data)
        case let .file(url): reader = try FileChunkReader(url: url)
        case let .stream(stream): reader = InputStreamChunkReader(stream: stream)
        }
        guard let coding else { return reader }
        do {
            return try coding.makeReader(reader)
        } catch {
            reader.close()
            throw error
        }
    }
}

/// A content coding of an upload's body applied while it streams (`Content-Encoding: deflate`, say): it wraps each
/// reader of the body in one that yields the coded bytes, so a file or a form is never held in memory to be coded.
struct UploadBodyCoding: Sendable {
    /// The `Content-Encoding` token.
    let name: String
    /// A reader of the coded bytes of what `source` reads.
    let makeReader: @Sendable (_ source: any BodyChunkReader) throws -> any BodyChunkReader
}

/// What an adapter may do with an upload's body, which is not in `URLRequest.httpBody`: choose a coding for it. One is
/// made for each attempt's adaptation; the upload sends that attempt's body with the coding chosen, if any.
final class UploadBodyCodingChoice: Sendable {
    /// The body when it is bytes in memory, for an adapter that decides by looking at them.
    let bytesInMemory: Data?
    private let choice = Protected<UploadBodyCoding?>(nil)

    init(bytesInMemory: Data?) {
        self.bytesInMemory = bytesInMemory
    }

    /// Codes the body with `coding`; the last choice made stands.
    func choose(_ coding: UploadBodyCoding) {
        choice.write(coding)
    }

    /// The coding chosen, if any.
    var chosen: UploadBodyCoding? { choice.read() }
}
