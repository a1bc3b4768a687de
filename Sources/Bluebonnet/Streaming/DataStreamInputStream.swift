import Foundation

/// The `InputStream` `DataStreamRequest.asInputStream(bufferSize:)` returns: a blocking reader of the request's body,
/// through a `DataStreamInputBuffer`. Closing it, or dropping it, before the body ended cancels the request.
final class DataStreamInputStream: InputStream {
    private let buffer: DataStreamInputBuffer

    init(buffer: DataStreamInputBuffer) {
        self.buffer = buffer
        super.init(data: Data())
    }

    deinit {
        buffer.close()
    }

    override func open() { buffer.open() }

    override func close() { buffer.close() }

    override var streamStatus: Stream.Status { buffer.streamStatus }

    override var streamError: (any Error)? { buffer.streamError }

    override var hasBytesAvailable: Bool { buffer.hasBytesAvailable }

    override func read(_ bytes: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        buffer.read(bytes, maxLength: length)
    }

    override func getBuffer(
        _ buffer: UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>, length len: UnsafeMutablePointer<Int>
    ) -> Bool {
        // The bytes live in the request's chunks, not in one buffer the caller could borrow.
        false
    }
}
