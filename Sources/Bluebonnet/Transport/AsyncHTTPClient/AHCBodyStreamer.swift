import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix

/// Turns an `UploadBody` into an AsyncHTTPClient body that is read one chunk at a time: the next chunk is read only
/// once the previous write's future completes, and AsyncHTTPClient holds that future back while the socket is not
/// writable. So a body of any size costs about one chunk of memory.
enum AHCBodyStreamer {
    /// Bytes read per chunk from files and streams.
    static let chunkSize = 256 * 1024
    /// Bodies already in memory up to this size go out in one write; larger ones in chunks, for progress.
    static let singleWriteLimit = 64 * 1024

    /// The body for `upload`; `gate` holds each chunk back while the request is suspended.
    static func body(for upload: UploadBody, eventLoopGroup: any EventLoopGroup, gate: AHCResponseDelegate)
        -> HTTPClient.Body
    {
        if case let .data(data) = upload.source, upload.coding == nil, data.count <= singleWriteLimit {
            return .bytes(data)
        }
        return .stream(contentLength: upload.length) { writer in
            let eventLoop = eventLoopGroup.any()
            let pump: BodyPump
            do {
                pump = BodyPump(
                    reader: try upload.makeReader(), upload: upload, writer: writer, eventLoop: eventLoop, gate: gate)
            } catch {
                return eventLoop.makeFailedFuture(AFError.createUploadableFailed(error: error))
            }
            let done = pump.next()
            done.whenComplete { _ in pump.close() }
            return done
        }
    }
}

/// One attempt's read-then-write loop. Only one step runs at a time (each starts when the previous future
/// completes), which is what makes the unsynchronised reader safe to share.
private final class BodyPump: @unchecked Sendable {
    // @unchecked: `reader` and `sent` are touched by one step at a time (see above); the rest is immutable.
    private let reader: any BodyChunkReader
    private let writer: HTTPClient.Body.StreamWriter
    private let eventLoop: any EventLoop
    /// Reading a file or a stream blocks, and coding (compressing) is work, so they run off the event loop.
    private let blocks: Bool
    private let length: Int64?
    private let gate: AHCResponseDelegate
    private var sent: Int64 = 0

    init(
        reader: any BodyChunkReader, upload: UploadBody, writer: HTTPClient.Body.StreamWriter, eventLoop: any EventLoop,
        gate: AHCResponseDelegate
    ) {
        self.reader = reader
        self.gate = gate
        self.writer = writer
        self.eventLoop = eventLoop
        length = upload.length
        blocks = upload.readingIsWork
    }

    func next() -> EventLoopFuture<Void> {
        let wanted = length.map { Int(min(Int64(AHCBodyStreamer.chunkSize), $0 - sent)) } ?? AHCBodyStreamer.chunkSize
        guard wanted > 0 else { return eventLoop.makeSucceededVoidFuture() }
        let chunk = gate.whenResumed(on: eventLoop).flatMap { [self] () -> EventLoopFuture<Data> in
            if blocks {
                let read = eventLoop.makePromise(of: Data.self)
                Offload.run { [self] in read.completeWith(Result { try reader.read(upTo: wanted) }) }
                return read.futureResult
            }
            // A hop rather than a direct call, so a long run of writes that complete at once cannot nest the stack.
            return eventLoop.submit { [self] in try reader.read(upTo: wanted) }
        }
        return
            chunk
            .flatMapErrorThrowing { throw AFError.createUploadableFailed(error: $0) }
            .flatMap { [self] data in write(data) }
    }

    private func write(_ data: Data) -> EventLoopFuture<Void> {
        guard !data.isEmpty else {
            if let length, sent != length {
                let error = BodyLengthMismatchError(expected: UInt64(length), actual: UInt64(sent))
                return eventLoop.makeFailedFuture(AFError.createUploadableFailed(error: error))
            }
            return eventLoop.makeSucceededVoidFuture()
        }
        sent += Int64(data.count)
        return writer.write(.byteBuffer(ByteBuffer(bytes: data))).flatMap { [self] in next() }
    }

    func close() {
        reader.close()
    }
}
