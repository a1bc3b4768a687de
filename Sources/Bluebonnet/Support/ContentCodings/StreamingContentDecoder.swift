/// A decoder of one HTTP content coding (brotli, zstd), fed a response body chunk by chunk as it arrives.
///
/// The body may be cut anywhere: a decoder keeps what it cannot decode yet and goes on when the next chunk comes, so
/// what it holds is bounded by its window (and its format's largest unit), never by the body. Decoded bytes are handed
/// to `output` as they are made; the caller applies the body limits there (a ratio or an absolute size) and may throw
/// to stop. Every byte is untrusted: a malformed stream is a `ContentDecodingError`, never a crash, and nothing is
/// allocated past the limits the decoder was made with.
protocol StreamingContentDecoder {
    /// Decodes `input`, which follows the bytes of earlier calls, handing decoded bytes to `output` in chunks.
    mutating func decode(
        _ input: UnsafeRawBufferPointer, output: (UnsafeRawBufferPointer) throws -> Void
    ) throws

    /// Says the body has ended: throws `ContentDecodingError.truncated` when the stream stopped inside a unit.
    func finish() throws
}

/// Why a coded body could not be decoded. The reasons say what was wrong with the bytes, in the format's own words.
enum ContentDecodingError: Error, Equatable, Sendable {
    /// The bytes break the format's rules; `detail` names the rule.
    case malformed(coding: String, detail: String)
    /// The stream asks for a window larger than the decoder accepts; nothing that large was allocated.
    case windowTooLarge(coding: String, requested: Int, limit: Int)
    /// The body ended before the stream did.
    case truncated(coding: String)
    /// The stream's own checksum does not match what was decoded.
    case checksumMismatch(coding: String)
    /// Bytes follow the end of the stream.
    case trailingData(coding: String)
}
