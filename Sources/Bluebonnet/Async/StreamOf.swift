import Foundation

/// An `AsyncSequence` of a stream's events that applies back-pressure: an element counts as handled only once the
/// iterating task takes it, so a consumer slower than the network stops the connection being read. Ending the
/// iteration (leaving the loop, cancelling the task) ends the stream and, by default, cancels the request.
public struct StreamOf<Element>: AsyncSequence, @unchecked Sendable {
    // @unchecked: `Element` need not be `Sendable` (a decoded value); each is handed from the request's queue to the
    // one iterating task, once, through the channel's lock.
    /// What is kept when the consumer falls behind; `.unbounded` relies on the back-pressure alone.
    public typealias BufferingPolicy = AsyncStream<Element>.Continuation.BufferingPolicy

    private let bufferingPolicy: BufferingPolicy
    private let onTermination: @Sendable () -> Void
    private let builder: @Sendable (StreamChannel<Element>) -> Void
    /// The channel of a stream started when it was made, until its iterator takes it.
    private let started: StartedChannel<Element>?

    init(
        bufferingPolicy: BufferingPolicy, onTermination: @escaping @Sendable () -> Void,
        builder: @escaping @Sendable (StreamChannel<Element>) -> Void
    ) {
        self.bufferingPolicy = bufferingPolicy
        self.onTermination = onTermination
        self.builder = builder
        started = nil
    }

    /// A stream whose source starts now, not at the first iteration: its elements wait in the stream, each counting
    /// as handled only once the loop takes it, as an `AsyncStream` buffers from its making. A stream dropped without
    /// being iterated ends as a loop left early does.
    init(
        startingNow bufferingPolicy: BufferingPolicy, onTermination: @escaping @Sendable () -> Void,
        builder: @escaping @Sendable (StreamChannel<Element>) -> Void
    ) {
        self.bufferingPolicy = bufferingPolicy
        self.onTermination = onTermination
        self.builder = builder
        let channel = StreamChannel<Element>(policy: bufferingPolicy, onTermination: onTermination)
        started = StartedChannel(channel)
        builder(channel)
    }

    /// Starts the stream: the request's handler is registered now, which resumes a request that starts immediately.
    /// A stream started when it was made hands its iterator what it holds; a second iterator gets nothing.
    public func makeAsyncIterator() -> Iterator {
        if let started {
            guard let channel = started.take() else {
                let empty = StreamChannel<Element>(policy: bufferingPolicy, onTermination: {})
                empty.finish()
                return Iterator(handle: IteratorHandle(channel: empty))
            }
            return Iterator(handle: IteratorHandle(channel: channel))
        }
        let channel = StreamChannel<Element>(policy: bufferingPolicy, onTermination: onTermination)
        builder(channel)
        return Iterator(handle: IteratorHandle(channel: channel))
    }

    /// The iterator of a `StreamOf`.
    public struct Iterator: AsyncIteratorProtocol {
        let handle: IteratorHandle<Element>

        /// The next element, or `nil` once the stream completed or was ended.
        public mutating func next() async -> Element? {
            await handle.channel.next()
        }
    }
}

/// The channel of a stream started when it was made: the first iterator takes it; if none does, it is ended when the
/// stream goes away.
final class StartedChannel<Element>: @unchecked Sendable {
    // @unchecked: the channel is thread-safe, and handed over once through the lock.
    private let channel: Protected<StreamChannel<Element>?>

    init(_ channel: StreamChannel<Element>) {
        self.channel = Protected(channel)
    }

    func take() -> StreamChannel<Element>? {
        channel.write { channel in
            defer { channel = nil }
            return channel
        }
    }

    deinit {
        take()?.terminate()
    }
}

/// Ends the channel when the iterator goes away, so a loop left early stops the request.
final class IteratorHandle<Element>: @unchecked Sendable {
    // @unchecked: `channel` is itself thread-safe.
    let channel: StreamChannel<Element>

    init(channel: StreamChannel<Element>) {
        self.channel = channel
    }

    deinit {
        channel.terminate()
    }
}

/// The buffer between a request's handler and one iterating task.
final class StreamChannel<Element>: @unchecked Sendable {
    // @unchecked: every field is behind `state`'s lock; elements pass through it once.
    private struct State {
        var buffer: [(UncheckedBox<Element>, @Sendable () -> Void)] = []
        var head = 0
        var finished = false
        var terminated = false
        var waiter: CheckedContinuation<UncheckedBox<Element>?, Never>?

        var count: Int { buffer.count - head }

        mutating func popFirst() -> (UncheckedBox<Element>, @Sendable () -> Void)? {
            guard head < buffer.count else { return nil }
            defer {
                head += 1
                if head > 64, head * 2 > buffer.count {
                    buffer.removeFirst(head)
                    head = 0
                }
            }
            return buffer[head]
        }
    }

    private enum YieldOutcome {
        case handed(CheckedContinuation<UncheckedBox<Element>?, Never>)
        case queued
        case dropped([@Sendable () -> Void])
    }

    private let state = Protected(State())
    private let policy: StreamOf<Element>.BufferingPolicy
    private let onTermination: @Sendable () -> Void

    init(policy: StreamOf<Element>.BufferingPolicy, onTermination: @escaping @Sendable () -> Void) {
        self.policy = policy
        self.onTermination = onTermination
    }

    /// Offers an element; `taken` is called once the consumer took it, or when it is dropped.
    func yield(_ element: Element, taken: @escaping @Sendable () -> Void) {
        let box = UncheckedBox(element)
        let outcome = state.write { state -> YieldOutcome in
            if state.terminated || state.finished { return .dropped([taken]) }
            if let waiter = state.waiter {
                state.waiter = nil
                return .handed(waiter)
            }
            switch policy {
            case let .bufferingOldest(limit) where state.count >= limit:
                return .dropped([taken])
            case let .bufferingNewest(limit) where state.count >= limit:
                guard limit > 0, let oldest = state.popFirst() else { return .dropped([taken]) }
                state.buffer.append((box, taken))
                return .dropped([oldest.1])
            default:
                state.buffer.append((box, taken))
                return .queued
            }
        }
        switch outcome {
        case let .handed(waiter):
            waiter.resume(returning: box)
            taken()
        case .queued:
            break
        case let .dropped(releases):
            for release in releases { release() }
        }
    }

    /// No more elements will come: the consumer gets `nil` once the buffer is empty.
    func finish() {
        let waiter = state.write { state -> CheckedContinuation<UncheckedBox<Element>?, Never>? in
            state.finished = true
            guard state.count == 0 else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    /// The consumer stopped: what is buffered is released and, unless the stream had finished, `onTermination` runs.
    func terminate() {
        let ended = state.write {
            state -> ([@Sendable () -> Void], CheckedContinuation<UncheckedBox<Element>?, Never>?, Bool)? in
            guard !state.terminated else { return nil }
            state.terminated = true
            var releases: [@Sendable () -> Void] = []
            while let (_, taken) = state.popFirst() { releases.append(taken) }
            defer { state.waiter = nil }
            return (releases, state.waiter, state.finished)
        }
        guard let (releases, waiter, finished) = ended else { return }
        for release in releases { release() }
        waiter?.resume(returning: nil)
        if !finished { onTermination() }
    }

    func next() async -> Element? {
        let box = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<UncheckedBox<Element>?, Never>) in
                let ready = state.write { state -> ((UncheckedBox<Element>, @Sendable () -> Void)?, Bool) in
                    if let next = state.popFirst() { return (next, false) }
                    if state.finished || state.terminated { return (nil, true) }
                    state.waiter = continuation
                    return (nil, false)
                }
                if let (box, taken) = ready.0 {
                    continuation.resume(returning: box)
                    taken()
                } else if ready.1 {
                    continuation.resume(returning: nil)
                }
            }
        } onCancel: {
            terminate()
        }
        return box?.value
    }
}
