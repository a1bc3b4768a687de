import Foundation

extension DataStreamRequest {
    /// Produces an `InputStream` that receives the body as it arrives, and resumes the request.
    ///
    /// Call `open()` before reading. `read(_:maxLength:)` blocks until bytes arrive, so read on a thread of your own
    /// (as `XMLParser(stream:)` does), never on a queue the request uses. A reader slower than the network holds
    /// back the connection once `bufferSize` bytes wait unread (plus the request's own back-pressure window); after
    /// the body it returns 0, or -1 with `streamError` set when the request failed. Closing the stream before the end
    /// cancels the request. Run-loop scheduling and a stream delegate are not supported: the stream is read directly.
    ///
    /// - Parameter bufferSize: Unread bytes held before the request waits for the reader. 1024 by default.
    /// - Returns: The stream.
    public func asInputStream(bufferSize: Int = 1024) -> InputStream? {
        let buffer = DataStreamInputBuffer(bufferSize: bufferSize) { [weak self] in self?.cancel() }
        addConsumer(
            Consumer(
                queue: underlyingQueue,
                deliver: { chunk, done in
                    buffer.append(chunk, done: done)
                },
                finish: { [self] in
                    // After the chunks, which were queued on the same queue.
                    underlyingQueue.async { [self] in buffer.finish(error: completion().error) }
                }))
        resume()
        return DataStreamInputStream(buffer: buffer)
    }
}
