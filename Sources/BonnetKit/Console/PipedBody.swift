import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A request body piped to standard input: held whole when it ends within a limit, else streamed as it is read, so
/// `bonnet PUT URL < 1GiB.bin` sends a gigabyte in bounded memory.
enum PipedBody {
    /// All of it.
    case whole(Data)
    /// Its first bytes (enough to tell it is not empty, and what it starts with), and a stream of all of it.
    case streamed(prefix: Data, stream: InputStream)

    /// The most a piped body is held in memory before it is streamed instead: 1 MiB.
    static let heldAtMost = 1 << 20
}

extension ConsoleInput {
    /// The body piped in: `nil` from a terminal or when nothing was piped; whole when it ends within `limit` bytes;
    /// else its first `limit` bytes read, and the rest left to be read as the request is sent.
    func readBody(holdingAtMost limit: Int = PipedBody.heldAtMost) -> PipedBody? {
        guard let (prefix, ended) = readPrefix(upTo: limit) else { return nil }
        if ended { return prefix.isEmpty ? nil : .whole(prefix) }
        return .streamed(prefix: prefix, stream: remainder(after: prefix))
    }
}

/// Standard input as a request body: the bytes already read to look at it, then the rest read as the transport asks
/// for it (one reader, on one thread at a time, as `InputStream`s are read).
final class DescriptorInputStream: InputStream {
    private var pending: Data
    private let descriptor: Int32
    private var status = Stream.Status.notOpen
    private var failure: POSIXError?

    init(prefix: Data, descriptor: Int32) {
        pending = prefix
        self.descriptor = descriptor
        super.init(data: Data())
    }

    override func open() {
        if status == .notOpen { status = .open }
    }

    override func close() {
        status = .closed
    }

    override var streamStatus: Stream.Status { status }

    override var streamError: (any Error)? { failure }

    override var hasBytesAvailable: Bool { status == .open }

    override func read(_ buffer: UnsafeMutablePointer<UInt8>, maxLength length: Int) -> Int {
        guard status == .open, length > 0 else { return status == .error ? -1 : 0 }
        if !pending.isEmpty {
            let count = min(length, pending.count)
            pending.copyBytes(to: buffer, count: count)
            pending = pending.dropFirst(count)
            return count
        }
        while true {
            let count = Glibc.read(descriptor, buffer, length)
            if count < 0, errno == EINTR { continue }
            if count < 0 {
                failure = POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
                status = .error
                return -1
            }
            if count == 0 { status = .atEnd }
            return count
        }
    }
}
