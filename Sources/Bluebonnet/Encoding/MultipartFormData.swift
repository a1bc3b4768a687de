import Foundation

/// Builds a `multipart/form-data` body (RFC 7578) from data, files and streams, encoded in memory or into a file.
///
/// Appending never reads a file or stream: their bytes are copied in chunks only when the form is encoded. A failed
/// `append` (a missing file, say) is remembered and thrown by `encode()` or `writeEncodedData(to:)`.
open class MultipartFormData: @unchecked Sendable {
    // @unchecked: the parts and the first error are behind `Protected`; the rest is immutable. `open` forbids checked
    // `Sendable`.
    /// Forms whose encoded size is at most this many bytes (10 MB) are encoded in memory when uploaded; larger
    /// ones are written to a temporary file that is streamed, then deleted.
    public static let encodingMemoryThreshold: UInt64 = 10_000_000

    /// The `FileManager` used to inspect appended files and to write the encoded form.
    public let fileManager: FileManager
    /// The boundary line that separates the parts.
    public let boundary: String

    /// How much of a file or stream is read at once while encoding.
    let streamBufferSize = 64 * 1024

    // `InputStream` is not `Sendable`; a part's stream is read only while the form is encoded, by one thread.
    struct BodyPart: @unchecked Sendable {
        enum Source {
            case data(Data)
            case file(URL)
            case stream(InputStream)
        }

        /// The part's header lines and the blank line that ends them, as sent.
        let headerBlock: Data
        let source: Source
        let length: UInt64
    }

    struct State {
        var parts: [BodyPart] = []
        var error: AFError?
        var contentType: String?
    }

    let state = Protected(State())

    /// Creates an empty form.
    ///
    /// - Parameters:
    ///   - fileManager: The `FileManager` for file checks and output. `.default` by default.
    ///   - boundary:    The boundary to use. By default `bluebonnet.boundary` and 16 random hexadecimal digits: 35
    ///                  characters, as long as Alamofire's, so a body's length is what code written for it computes.
    public init(fileManager: FileManager = .default, boundary: String? = nil) {
        self.fileManager = fileManager
        self.boundary = boundary ?? Self.randomBoundary()
    }

    static func randomBoundary() -> String {
        let high = String(UInt32.random(in: .min ... .max), radix: 16)
        let low = String(UInt32.random(in: .min ... .max), radix: 16)
        return "bluebonnet.boundary" + String(repeating: "0", count: 8 - high.count) + high
            + String(repeating: "0", count: 8 - low.count) + low
    }

    /// The body's `Content-Type`: `multipart/form-data; boundary=...` unless set otherwise.
    open var contentType: String {
        get { state.read().contentType ?? "multipart/form-data; boundary=\(boundary)" }
        set { state.write { $0.contentType = newValue } }
    }

    /// The sum of the parts' bodies, as Alamofire counts it (boundaries and part headers are not included; see
    /// `encodedLength` for the size of the encoded form). `Session.upload(multipartFormData:...)` compares it with
    /// its `usingThreshold:`.
    public var contentLength: UInt64 {
        state.read().parts.reduce(0) { $0 + $1.length }
    }

    /// The exact number of bytes the encoded form holds: boundaries, part headers and bodies.
    var encodedLength: UInt64 {
        let parts = state.read().parts
        guard !parts.isEmpty else { return 0 }
        let boundaries = UInt64(
            initialBoundary.count + (parts.count - 1) * encapsulatedBoundary.count + finalBoundary.count)
        return parts.reduce(boundaries) { $0 + UInt64($1.headerBlock.count) + $1.length }
    }

    // MARK: - Appending

    /// Appends a part holding `data`.
    ///
    /// - Parameters:
    ///   - data:     The part's body.
    ///   - name:     The form field name.
    ///   - fileName: The file name to report, making the part a file upload. `nil` by default.
    ///   - mimeType: The part's `Content-Type`. `nil` (none) by default.
    public func append(_ data: Data, withName name: String, fileName: String? = nil, mimeType: String? = nil) {
        let headers = Self.contentHeaders(name: name, fileName: fileName, mimeType: mimeType)
        appendPart(headers: headers, source: .data(data), length: UInt64(data.count))
    }

    /// Appends a file, naming it by its last path component and typing it by its extension.
    ///
    /// - Parameters:
    ///   - fileURL: The `file:` URL of the file; it is read when the form is encoded.
    ///   - name:    The form field name.
    public func append(_ fileURL: URL, withName name: String) {
        let fileName = fileURL.lastPathComponent
        let pathExtension = fileURL.pathExtension
        guard !fileName.isEmpty, !pathExtension.isEmpty else {
            recordError(.multipartEncodingFailed(reason: .bodyPartFilenameInvalid(in: fileURL)))
            return
        }
        append(
            fileURL, withName: name, fileName: fileName,
            mimeType: MIMETypeTable.mimeType(forPathExtension: pathExtension))
    }

    /// Appends a file under the given file name and type.
    ///
    /// - Parameters:
    ///   - fileURL:  The `file:` URL of the file; it is read when the form is encoded.
    ///   - name:     The form field name.
    ///   - fileName: The file name to report.
    ///   - mimeType: The part's `Content-Type`.
    public func append(_ fileURL: URL, withName name: String, fileName: String, mimeType: String) {
        let length: UInt64
        do {
            length = try checkedFileSize(of: fileURL)
        } catch {
            recordError(error)
            return
        }
        let headers = Self.contentHeaders(name: name, fileName: fileName, mimeType: mimeType)
        appendPart(headers: headers, source: .file(fileURL), length: length)
    }

    /// Appends `length` bytes read from a stream as a file part.
    ///
    /// - Parameters:
    ///   - stream:   The stream; it is opened and read when the form is encoded, and must hold exactly `length` bytes.
    ///   - length:   The number of bytes the stream holds.
    ///   - name:     The form field name.
    ///   - fileName: The file name to report.
    ///   - mimeType: The part's `Content-Type`.
    public func append(
        _ stream: InputStream, withLength length: UInt64, name: String, fileName: String, mimeType: String
    ) {
        append(
            stream, withLength: length, headers: Self.contentHeaders(name: name, fileName: fileName, mimeType: mimeType)
        )
    }

    /// Appends `length` bytes read from a stream, with the given part headers.
    ///
    /// - Parameters:
    ///   - stream:  The stream; it is opened and read when the form is encoded, and must hold exactly `length` bytes.
    ///   - length:  The number of bytes the stream holds.
    ///   - headers: The part's headers, such as `Content-Disposition` and `Content-Type`.
    public func append(_ stream: InputStream, withLength length: UInt64, headers: HTTPHeaders) {
        appendPart(headers: headers, source: .stream(stream), length: length)
    }

    private func appendPart(headers: HTTPHeaders, source: BodyPart.Source, length: UInt64) {
        let part = BodyPart(headerBlock: Self.headerBlock(headers), source: source, length: length)
        state.write { $0.parts.append(part) }
    }

    private func recordError(_ error: AFError) {
        state.write { state in
            if state.error == nil { state.error = error }
        }
    }

    /// The file's size, after the checks Alamofire makes when a file is appended.
    private func checkedFileSize(of fileURL: URL) throws(AFError) -> UInt64 {
        func failure(_ reason: AFError.MultipartEncodingFailureReason) -> AFError {
            .multipartEncodingFailed(reason: reason)
        }
        guard fileURL.isFileURL else { throw failure(.bodyPartURLInvalid(url: fileURL)) }
        do {
            guard try fileURL.checkResourceIsReachable() else { throw failure(.bodyPartFileNotReachable(at: fileURL)) }
        } catch let error as AFError {
            throw error
        } catch {
            throw failure(.bodyPartFileNotReachableWithError(atURL: fileURL, error: error))
        }
        var isDirectory: ObjCBool = false
        guard fileManager.fileExists(atPath: fileURL.path, isDirectory: &isDirectory) else {
            throw failure(.bodyPartFileNotReachable(at: fileURL))
        }
        guard !isDirectory.boolValue else { throw failure(.bodyPartFileIsDirectory(at: fileURL)) }
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try fileManager.attributesOfItem(atPath: fileURL.path)
        } catch {
            throw failure(.bodyPartFileSizeQueryFailedWithError(forURL: fileURL, error: error))
        }
        guard let size = (attributes[.size] as? NSNumber)?.uint64Value else {
            throw failure(.bodyPartFileSizeNotAvailable(at: fileURL))
        }
        guard fileManager.isReadableFile(atPath: fileURL.path) else {
            throw failure(.bodyPartInputStreamCreationFailed(for: fileURL))
        }
        return size
    }

    // MARK: - Part headers

    /// `Content-Disposition` with the escaped name and file name, then `Content-Type` when given.
    static func contentHeaders(name: String, fileName: String?, mimeType: String?) -> HTTPHeaders {
        var disposition = "form-data; name=\"\(escapedParameter(name))\""
        if let fileName { disposition += "; filename=\"\(escapedParameter(fileName))\"" }
        var headers: HTTPHeaders = [HTTPHeader(name: "Content-Disposition", value: disposition)]
        if let mimeType { headers.add(name: "Content-Type", value: mimeType) }
        return headers
    }

    /// Escapes a quoted `name`/`filename` parameter as browsers do (WHATWG HTML): `"`, CR and LF become `%22`,
    /// `%0D` and `%0A`, so no value can close the quotes or start a header of its own.
    static func escapedParameter(_ value: String) -> String {
        guard value.utf8.contains(where: { $0 == 0x22 || $0 == 0x0D || $0 == 0x0A }) else { return value }
        var escaped = ""
        escaped.reserveCapacity(value.utf8.count + 8)
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\"": escaped += "%22"
            case "\r": escaped += "%0D"
            case "\n": escaped += "%0A"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// A header line can end only where the form puts its CRLF: line breaks inside names or values are escaped.
    static func headerBlock(_ headers: HTTPHeaders) -> Data {
        var block = ""
        for header in headers {
            block += lineSafe(header.name) + ": " + lineSafe(header.value) + "\r\n"
        }
        block += "\r\n"
        return Data(block.utf8)
    }

    private static func lineSafe(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A }) else { return text }
        return text.replacingOccurrences(of: "\r", with: "%0D").replacingOccurrences(of: "\n", with: "%0A")
    }

    // MARK: - Boundaries

    var initialBoundary: Data { Data("--\(boundary)\r\n".utf8) }
    var encapsulatedBoundary: Data { Data("\r\n--\(boundary)\r\n".utf8) }
    var finalBoundary: Data { Data("\r\n--\(boundary)--\r\n".utf8) }
}
