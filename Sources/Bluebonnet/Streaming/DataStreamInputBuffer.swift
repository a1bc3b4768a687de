import Dispatch
import Foundation

/// What `DataStreamInputStream` reads: the request's chunks, shared between the request's queue and the reading
/// thread.
///
/// A chunk counts as handled for the request's back-pressure only once no more than `bufferSize` bytes wait unread,
/// so a slow reader stops the connection being read rather than filling memory. `read(_:maxLength:)` blocks until
/// bytes arrive or the body ends: 0 after a complete body, -1 (with `streamError`) after a failed one.
final class DataStreamInputBuffer: Sendable {

    private struct Entry {
        var data: Data
        /// Tells the request the chunk was handled; `nil` once told.
        var done: (@Sendable () -> Void)?
    }

    private struct State {
        var entries: [Entry] = []
        var head = 0
        /// Bytes of `entries[head]` already read.
        var offset = 0
        var unread = 0
        var status = Stream.Status.notOpen
        var ended = false
        var error: (any Error)?
        var readerWaiting = false

        /// Takes the `done` of every chunk still holding one, once the unread bytes fit in `limit`.
        mutating func releasable(within limit: Int) -> [@Sendable () -> Void] {
            guard unread <= limit else { return [] }
            var released: [@Sendable () -> Void] = []
            for index in head..<entries.count {
                if let done = entries[index].done {
                    released.append(done)
                    entries[index].done = nil
                }
            }
            return released
        }

        /// Copies up to `count` bytes into `buffer`; returns how many, and the `done`s of chunks read through.
        mutating func take(into buffer: UnsafeMutablePointer<UInt8>, count: Int) -> (Int, [@Sendable () -> Void]) {
            var copied = 0
            var released: [@Sendable () -> Void] = []
            while copied < count, head < entries.count {
                let data = entries[head].data
                let length = min(count - copied, data.count - offset)
                data.withUnsafeBytes { bytes in
                    let start = bytes.baseAddress!.advanced(by: offset).assumingMemoryBound(to: UInt8.self)
                    (buffer + copied).update(from: start, count: length)
                }
                copied += length
                offset += length
                unread -= length
                if offset == data.count {
                    if let done = entries[head].done { released.append(done) }
                    entries[head] = Entry(data: Data(), done: nil)
                    head += 1
                    offset = 0
                }
            }
            if head > 32, head * 2 > entries.count {
                entries.removeFirst(head)
                head = 0
            }
            return (copied, released)
        }
    }

    private let state = Protected(State())
    private let wake = DispatchSemaphore(value: 0)
    private let bufferSize: Int
    private let onEarlyClose: @Sendable () -> Void

    /// - Parameters:
    ///   - bufferSize:   Unread bytes held before chunks stop counting as handled.
    ///   - onEarlyClose: Called when the reader closes the stream before the body ended.
    init(bufferSize: Int, onEarlyClose: @escaping @Sendable () -> Void) {
        self.bufferSize = max(0, bufferSize)
        self.onEarlyClose = onEarlyClose
    }

    // MARK: Fed by the request

    /// A chunk of the body; `done` is called once it counts as handled.
    func append(_ chunk: Data, done: @escaping @Sendable () -> Void) {
        let (released, signal) = state.write { state -> ([@Sendable () -> Void], Bool) in
            guard !state.ended, state.status != .closed, !chunk.isEmpty else { return ([done], false) }
            state.entries.append(Entry(data: chunk, done: done))
            state.unread += chunk.count
            defer { state.readerWaiting = false }
            return (state.releasable(within: bufferSize), state.readerWaiting)
        }
        for done in released { done() }
        if signal { wake.signal() }
    }

    /// The body ended, completely or with `error`.
    func finish(error: (any Error)?) {
        let signal = state.write { state -> Bool in
            guard !state.ended else { return false }
            state.ended = true
            state.error = error
            defer { state.readerWaiting = false }
            return state.readerWaiting
        }
        if signal { wake.signal() }
    }

    // MARK: Read by the stream

    func open() {
        state.write { state in
            if state.status == .notOpen { state.status = .open }
        }
    }

    func close() {
        let (released, early) = state.write { state -> ([@Sendable () -> Void], Bool) in
            guard state.status != .closed else { return ([], false) }
            state.status = .closed
            // Whatever is still held must not leave the request waiting for a reader that is gone.
            defer {
                state.entries = []
                state.head = 0
                state.offset = 0
                state.unread = 0
            }
            return (state.releasable(within: .max), !state.ended)
        }
        for done in released { done() }
        if early { onEarlyClose() }
    }

    var streamStatus: Stream.Status { state.read { $0.status } }

    var streamError: (any Error)? { state.read { $0.error } }

    var hasBytesAvailable: Bool {
        state.read { state in
            guard state.status == .open || state.status == .reading else { return false }
            return state.unread > 0 || !state.ended
        }
    }

    func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        enum Outcome { case read(Int, [@Sendable () -> Void]), end, failed, wait }
        guard length > 0 else { return 0 }
        while true {
            let outcome = state.write { state -> Outcome in
                switch state.status {
                case .open, .reading: break
                case .atEnd: return .end
                default: return .failed
                }
                if state.unread > 0 {
                    let (count, released) = state.take(into: buffer, count: length)
                    return .read(count, released + state.releasable(within: bufferSize))
                }
                if state.ended {
                    state.status = state.error == nil ? .atEnd : .error
                    return state.error == nil ? .end : .failed
                }
                state.status = .reading
                state.readerWaiting = true
                return .wait
            }
            switch outcome {
            case let .read(count, released):
                for done in released { done() }
                return count
            case .end:
                return 0
            case .failed:
                return -1
            case .wait:
                wake.wait()
                state.write { state in
                    if state.status == .reading { state.status = .open }
                }
            }
        }
    }
}
