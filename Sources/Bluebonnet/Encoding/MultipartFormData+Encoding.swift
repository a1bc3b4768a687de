import Foundation

extension MultipartFormData {
    /// Encodes the whole form in memory.
    ///
    /// Use it for small forms: files and streams are read into the returned `Data`. Larger forms are better written
    /// with `writeEncodedData(to:)`, which `Session.upload(multipartFormData:...)` does above its threshold.
    ///
    /// - Returns: The encoded body.
    /// - Throws: The first error an `append` recorded, or an `AFError.multipartEncodingFailed` while reading a part.
    public func encode() throws -> Data {
        var encoded = Data()
        let length = encodedLength
        if length <= UInt64(Int.max) { encoded.reserveCapacity(Int(length)) }
        try encodeParts { encoded.append($0) }
        return encoded
    }

    /// Writes the encoded form to a new file, reading files and streams in chunks so memory stays flat.
    ///
    /// A partly written file is removed when writing fails.
    ///
    /// - Parameter fileURL: The `file:` URL to create; nothing may exist there yet.
    /// - Throws: The first error an `append` recorded, or an `AFError.multipartEncodingFailed` naming the output or
    ///   the part that failed.
    public func writeEncodedData(to fileURL: URL) throws {
        if let error = state.read().error { throw error }
        guard fileURL.isFileURL else {
            throw AFError.multipartEncodingFailed(reason: .outputStreamURLInvalid(url: fileURL))
        }
        guard !fileManager.fileExists(atPath: fileURL.path) else {
            throw AFError.multipartEncodingFailed(reason: .outputStreamFileAlreadyExists(at: fileURL))
        }
        guard fileManager.createFile(atPath: fileURL.path, contents: nil),
            let handle = try? FileHandle(forWritingTo: fileURL)
        else {
            throw AFError.multipartEncodingFailed(reason: .outputStreamCreationFailed(for: fileURL))
        }
        do {
            try encodeParts { chunk in
                do {
                    try handle.write(contentsOf: chunk)
                } catch {
                    throw AFError.multipartEncodingFailed(reason: .outputStreamWriteFailed(error: error))
                }
            }
            try handle.close()
        } catch {
            try? handle.close()
            try? fileManager.removeItem(at: fileURL)
            throw error.asAFError(or: .multipartEncodingFailed(reason: .outputStreamWriteFailed(error: error)))
        }
    }

    /// Hands the encoded form to `sink` in order: boundaries, part headers, and bodies in chunks.
    func encodeParts(into sink: (Data) throws -> Void) throws {
        let (parts, error) = state.write { state -> ([BodyPart], AFError?) in (state.parts, state.error) }
        if let error { throw error }
        guard !parts.isEmpty else { return }
        for (index, part) in parts.enumerated() {
            try sink(index == 0 ? initialBoundary : encapsulatedBoundary)
            try sink(part.headerBlock)
            try copyBody(of: part, to: sink)
        }
        try sink(finalBoundary)
    }

    private func copyBody(of part: BodyPart, to sink: (Data) throws -> Void) throws {
        let reader: any BodyChunkReader
        switch part.source {
        case let .data(data):
            try sink(data)
            return
        case let .file(url):
            do {
                reader = try FileChunkReader(url: url)
            } catch {
                throw AFError.multipartEncodingFailed(reason: .bodyPartInputStreamCreationFailed(for: url))
            }
        case let .stream(stream):
            reader = InputStreamChunkReader(stream: stream)
        }
        defer { reader.close() }
        do {
            // A stream's length is the caller's word, and the part's header already announced it: as in Alamofire,
            // what follows it is not sent. A file that changed size while the form was encoded is an error.
            let truncates = if case .stream = part.source { true } else { false }
            try reader.copy(
                length: part.length, chunkSize: streamBufferSize, truncatesLongerSource: truncates, to: sink)
        } catch let error as AFError {
            throw error
        } catch let mismatch as BodyLengthMismatchError {
            let error = AFError.UnexpectedInputStreamLength(
                bytesExpected: mismatch.expected, bytesRead: mismatch.actual)
            throw AFError.multipartEncodingFailed(reason: .inputStreamReadFailed(error: error))
        } catch {
            throw AFError.multipartEncodingFailed(reason: .inputStreamReadFailed(error: error))
        }
    }
}
