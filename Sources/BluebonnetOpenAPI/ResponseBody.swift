import Bluebonnet
import Foundation
import OpenAPIRuntime
import Synchronization

/// A response body read from a `DataStreamRequest`'s stream: a chunk is taken from the request only when the consumer
/// asks for the next one, so a slow consumer stops the connection being read (the stream's back-pressure).
struct ResponseBodySequence: AsyncSequence, Sendable {
    typealias Element = HTTPBody.ByteChunk

    let reader: ResponseBodyReader

    func makeAsyncIterator() -> Iterator {
        Iterator(reader: reader)
    }

    struct Iterator: AsyncIteratorProtocol {
        let reader: ResponseBodyReader

        mutating func next() async throws -> HTTPBody.ByteChunk? {
            try await reader.next()
        }
    }
}

/// Reads the request's stream for one consumer (the body is iterated once, as `HTTPBody` enforces). A body left
/// before its end cancels the request.
final class ResponseBodyReader: @unchecked Sendable {
    // @unchecked: `iterator` is used by one task at a time (an `HTTPBody` of `.single` iteration has one iterator,
    // whose `next()` calls do not overlap); `ended` is behind its lock.
    private var iterator: DataStreamTask.Stream<Data, Never>.Iterator?
    private let request: DataStreamRequest
    private let deadline: OperationDeadline?
    private let ended = Mutex(false)

    init(
        request: DataStreamRequest, iterator: DataStreamTask.Stream<Data, Never>.Iterator,
        deadline: OperationDeadline?
    ) {
        self.request = request
        self.iterator = iterator
        self.deadline = deadline
    }

    /// The next chunk, `nil` at the end; throws the request's error, or a cancellation when the task was cancelled.
    func next() async throws -> HTTPBody.ByteChunk? {
        guard var current = iterator else { return nil }
        let request = self.request
        while true {
            let event = await withTaskCancellationHandler {
                await current.next()
            } onCancel: {
                _ = request.cancel()
            }
            guard let event else {
                // The stream stopped without its end: the task was cancelled.
                finish()
                throw deadline?.mapped(.explicitlyCancelled) ?? AFError.explicitlyCancelled
            }
            switch event.event {
            case let .stream(.success(data)):
                if data.isEmpty { continue }
                iterator = current
                return ArraySlice(data)
            case let .complete(completion):
                finish()
                if let error = completion.error { throw deadline?.mapped(error) ?? error }
                return nil
            }
        }
    }

    /// The body was handed over without being read (none follows the head): the request ends by itself.
    func releaseWithoutCancelling() {
        ended.withLock { $0 = true }
        iterator = nil
    }

    private func finish() {
        ended.withLock { $0 = true }
        iterator = nil
        deadline?.stop()
    }

    deinit {
        if !ended.withLock({ $0 }) {
            _ = request.cancel()
            deadline?.stop()
        }
    }
}
