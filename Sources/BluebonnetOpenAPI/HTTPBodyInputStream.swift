import Foundation
import OpenAPIRuntime

/// An `InputStream` over an `HTTPBody`, for the engine's upload path, which reads streams on a blocking thread of its
/// own: a read waits until the body yields its next chunk, so the body is produced only as fast as it is sent.
final class HTTPBodyInputStream: InputStream {
    private let pump: BodyPump

    init(body: HTTPBody) {
        pump = BodyPump(body: body)
        super.init(data: Data())
    }

    override func open() { pump.open() }

    override func close() { pump.close() }

    override var streamStatus: Stream.Status { pump.status }

    override var streamError: (any Error)? { pump.failure }

    override var hasBytesAvailable: Bool { pump.hasBytesAvailable }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        pump.read(into: buffer, maxLength: length)
    }
}

/// The body's chunks, fetched one at a time by a task and handed to the blocking reader.
final class BodyPump: @unchecked Sendable {
    // @unchecked: the buffered state is behind `condition`; `iterator` is used only by the one pulling task at a
    // time (a pull starts only once the previous one ended).
    private let body: HTTPBody
    private let condition = NSCondition()
    private var pending = ArraySlice<UInt8>()
    private var ended = false
    private var error: (any Error)?
    private var state = Stream.Status.notOpen
    private var pull: Task<Void, Never>?
    private var iterator: HTTPBody.AsyncIterator?

    init(body: HTTPBody) {
        self.body = body
    }

    var status: Stream.Status { locked { state } }

    var failure: (any Error)? { locked { error } }

    var hasBytesAvailable: Bool { locked { !ended || !pending.isEmpty } }

    func open() {
        locked { if state == .notOpen { state = .open } }
    }

    /// Ends reading; a pull under way is cancelled and a waiting read returns.
    func close() {
        let pull = locked { () -> Task<Void, Never>? in
            state = .closed
            condition.broadcast()
            return self.pull
        }
        pull?.cancel()
    }

    /// Copies up to `length` bytes into `buffer`, waiting for the body's next chunk when none is buffered: the count,
    /// 0 at the end, -1 on a failure (`failure` says which).
    func read(into buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        condition.lock()
        defer { condition.unlock() }
        while pending.isEmpty, !ended, error == nil, state != .closed {
            if pull == nil { startPull() }
            condition.wait()
        }
        if error != nil {
            state = .error
            return -1
        }
        guard !pending.isEmpty else {
            if state != .closed { state = .atEnd }
            return 0
        }
        let count = min(length, pending.count)
        pending.withUnsafeBufferPointer { source in
            buffer.update(from: source.baseAddress!, count: count)
        }
        pending = pending.dropFirst(count)
        return count
    }

    private func locked<Value>(_ body: () -> Value) -> Value {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    /// Fetches the body's next chunk on a task; the condition's lock is held.
    private func startPull() {
        pull = Task { [self] in
            var iterator = self.iterator ?? body.makeAsyncIterator()
            let outcome: Result<HTTPBody.ByteChunk?, any Error>
            do {
                outcome = .success(try await iterator.next())
            } catch {
                outcome = .failure(error)
            }
            self.iterator = iterator
            locked {
                switch outcome {
                case let .success(chunk?): pending = chunk
                case .success(nil): ended = true
                case let .failure(failure): error = failure
                }
                pull = nil
                condition.broadcast()
            }
        }
    }
}
