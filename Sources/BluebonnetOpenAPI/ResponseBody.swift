@_spi(OpenAPITransport) import Bluebonnet
import Foundation
import OpenAPIRuntime
import Synchronization

/// One operation's response as its request delivers it: the head that passed (the one a retry will not replace), the
/// body's chunks, then the end.
///
/// The request fills it where the body arrives — an event loop included — so filling it is bookkeeping only: a chunk
/// is stored and a waiting reader woken. One task reads at a time: the transport waits for the head, then the
/// `HTTPBody`'s iterator takes chunk after chunk. A chunk counts against the request's back-pressure window until it
/// is taken, so the connection is read at the consumer's pace.
final class ResponseChannel: Sendable {
    /// What the transport waits for before it answers: the head, or the end of a request that delivers none.
    enum Arrival {
        case head(ResponseHead)
        case ended(head: ResponseHead?, error: AFError?)
    }

    /// What the body's reader takes next.
    enum Next {
        case chunk(Data)
        case ended(AFError?)
    }

    private struct Ending {
        let head: ResponseHead?
        let error: AFError?
    }

    private struct State {
        var head: ResponseHead?
        /// The oldest chunk not yet taken, kept apart from `later` so that a reader keeping up, as most do, makes no
        /// array.
        var first: (chunk: Data, taken: @Sendable () -> Void)?
        /// Chunks that came while `first` waited, in order from `nextLater`.
        var later: [(chunk: Data, taken: @Sendable () -> Void)] = []
        var nextLater = 0

        var hasChunk: Bool { first != nil || nextLater < later.count }
        var ending: Ending?
        var waiter: UnsafeContinuation<Void, Never>?

        mutating func takeWaiter() -> UnsafeContinuation<Void, Never>? {
            defer { waiter = nil }
            return waiter
        }
    }

    private let state = Mutex(State())

    /// The head passed every validation; only the first counts.
    func headPassed(_ head: ResponseHead) {
        let waiter = state.withLock { state -> UnsafeContinuation<Void, Never>? in
            if state.head == nil { state.head = head }
            return state.takeWaiter()
        }
        waiter?.resume()
    }

    /// Stores a chunk of the body; `taken` is called once the reader took it.
    func receive(_ chunk: Data, taken: @escaping @Sendable () -> Void) {
        let waiter = state.withLock { state -> UnsafeContinuation<Void, Never>? in
            if state.first == nil, state.nextLater == state.later.count {
                state.first = (chunk, taken)
            } else {
                state.later.append((chunk, taken))
            }
            return state.takeWaiter()
        }
        waiter?.resume()
    }

    /// The request ended, after its last chunk.
    func end(head: ResponseHead?, error: AFError?) {
        let waiter = state.withLock { state -> UnsafeContinuation<Void, Never>? in
            if state.ending == nil { state.ending = Ending(head: head, error: error) }
            return state.takeWaiter()
        }
        waiter?.resume()
    }

    /// The head that passed, or the end of a request that delivered none.
    func arrival() async -> Arrival {
        while true {
            let arrival = state.withLock { state -> Arrival? in
                if let head = state.head { return .head(head) }
                if let ending = state.ending { return .ended(head: ending.head, error: ending.error) }
                return nil
            }
            if let arrival { return arrival }
            await waitForChange { $0.head != nil || $0.ending != nil }
        }
    }

    /// The next chunk, or the end once every chunk was taken.
    func next() async -> Next {
        while true {
            let next = state.withLock { state -> (Next, (@Sendable () -> Void)?)? in
                if let (chunk, taken) = state.first {
                    state.first = nil
                    return (.chunk(chunk), taken)
                }
                if state.nextLater < state.later.count {
                    let (chunk, taken) = state.later[state.nextLater]
                    state.nextLater += 1
                    if state.nextLater == state.later.count {
                        state.later.removeAll(keepingCapacity: true)
                        state.nextLater = 0
                    }
                    return (.chunk(chunk), taken)
                }
                if let ending = state.ending { return (.ended(ending.error), nil) }
                return nil
            }
            if let (next, taken) = next {
                taken?()
                return next
            }
            await waitForChange { $0.hasChunk || $0.ending != nil }
        }
    }

    /// Returns once `ready` holds (checked under the lock, so no change is missed).
    private func waitForChange(until ready: (State) -> Bool) async {
        await withUnsafeContinuation { (continuation: UnsafeContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if ready(state) { return true }
                state.waiter = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }
}

/// A response body read from the operation's channel: a chunk is taken only when the consumer asks for the next one,
/// so a slow consumer stops the connection being read (the stream's back-pressure).
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

/// Reads the body for one consumer (an `HTTPBody` of `.single` iteration has one iterator, whose `next()` calls do not
/// overlap). A body left before its end cancels the request.
final class ResponseBodyReader: Sendable {
    private let channel: ResponseChannel
    private let request: DataStreamRequest
    private let deadline: OperationDeadline?
    private let ended = Mutex(false)

    init(channel: ResponseChannel, request: DataStreamRequest, deadline: OperationDeadline?) {
        self.channel = channel
        self.request = request
        self.deadline = deadline
    }

    /// The next chunk, `nil` at the end; throws the request's error, or a cancellation when the task was cancelled.
    func next() async throws -> HTTPBody.ByteChunk? {
        if ended.withLock({ $0 }) { return nil }
        let request = self.request
        while true {
            let next = await withTaskCancellationHandler {
                await channel.next()
            } onCancel: {
                _ = request.cancel()
            }
            switch next {
            case let .chunk(data):
                if data.isEmpty { continue }
                return ArraySlice(data)
            case let .ended(error):
                finish()
                if let error { throw deadline?.mapped(error) ?? error }
                return nil
            }
        }
    }

    /// The body was handed over without being read (none follows the head): the request ends by itself.
    func releaseWithoutCancelling() {
        ended.withLock { $0 = true }
    }

    private func finish() {
        ended.withLock { $0 = true }
        deadline?.stop()
    }

    deinit {
        if !ended.withLock({ $0 }) {
            _ = request.cancel()
            deadline?.stop()
        }
    }
}
