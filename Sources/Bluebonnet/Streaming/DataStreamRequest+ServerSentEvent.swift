import Foundation

extension DataStreamRequest {
    /// One event of a `text/event-stream` body, as the WHATWG HTML specification dispatches it.
    public struct ServerSentEvent: Sendable, Equatable {
        /// The event type: the block's `event` field, else `message`.
        public var type: String
        /// The `data` fields' values, joined with line feeds.
        public var data: String
        /// The last event ID when the event was dispatched (an `id` field persists across events); `nil` before any.
        public var lastEventID: String?
        /// The reconnection time the block's `retry` field set, in milliseconds, if it set one.
        public var retry: Int?

        /// Creates an event.
        ///
        /// - Parameters:
        ///   - type:        The event type. `message` by default.
        ///   - data:        The data.
        ///   - lastEventID: The last event ID. `nil` by default.
        ///   - retry:       The reconnection time set, in milliseconds. `nil` by default.
        public init(type: String = "message", data: String, lastEventID: String? = nil, retry: Int? = nil) {
            self.type = type
            self.data = data
            self.lastEventID = lastEventID
            self.retry = retry
        }
    }
}

/// Parses a `text/event-stream` body chunk by chunk, exactly as the WHATWG specification's "interpreting an event
/// stream": one leading BOM skipped; lines end at CRLF, LF or CR (a CR at a chunk's end and an LF at the next one's
/// start are one ending); `:` starts a comment; a blank line dispatches. Lines and events are bounded, so a server
/// cannot grow memory without end.
struct ServerSentEventParser {
    /// The longest line kept.
    static let maximumLineLength = 1024 * 1024
    /// The most data one event may gather.
    static let maximumEventSize = 16 * 1024 * 1024

    private var line = Data()
    private var sawBOMCheck = false
    private var lastWasCR = false
    private var data = ""
    private var hasData = false
    private var eventType = ""
    private var retry: Int?
    /// The last event ID buffer: it persists across events.
    private var lastEventIDBuffer: String?
    /// The event source's last event ID: the buffer as of the last blank line, what a reconnection sends.
    private(set) var lastEventID: String?
    /// The reconnection time the stream set, in milliseconds.
    private(set) var reconnectionTime: Int?

    init(lastEventID: String? = nil, reconnectionTime: Int? = nil) {
        self.lastEventID = lastEventID
        lastEventIDBuffer = lastEventID
        self.reconnectionTime = reconnectionTime
    }

    /// The events `chunk` completes.
    mutating func parse(_ chunk: Data) throws -> [DataStreamRequest.ServerSentEvent] {
        var events: [DataStreamRequest.ServerSentEvent] = []
        var bytes = chunk[...]
        if !sawBOMCheck {
            // The BOM may itself straddle chunks: wait for three bytes before deciding.
            line.append(contentsOf: bytes)
            bytes = Data()[...]
            guard line.count >= 3 || !Array(line).elementsEqual([0xEF, 0xBB, 0xBF].prefix(line.count)) else {
                return []
            }
            sawBOMCheck = true
            let start = line.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
            bytes = Data(line.dropFirst(start))[...]
            line = Data()
        }
        while !bytes.isEmpty {
            if lastWasCR, bytes.first == 0x0A {
                // The LF of a CRLF whose CR ended the previous chunk (or line).
                bytes = bytes.dropFirst()
            }
            lastWasCR = false
            guard let end = bytes.firstIndex(where: { $0 == 0x0A || $0 == 0x0D }) else {
                line.append(contentsOf: bytes)
                if line.count > Self.maximumLineLength { throw Self.limitError(Self.maximumLineLength) }
                break
            }
            line.append(contentsOf: bytes[..<end])
            if line.count > Self.maximumLineLength { throw Self.limitError(Self.maximumLineLength) }
            lastWasCR = bytes[end] == 0x0D
            bytes = bytes[bytes.index(after: end)...]
            try endLine(into: &events)
        }
        return events
    }

    private static func limitError(_ limit: Int) -> AFError {
        .responseLimitExceeded(reason: .maximumResponseSizeExceeded(limit: Int64(limit)))
    }

    private mutating func endLine(into events: inout [DataStreamRequest.ServerSentEvent]) throws {
        let text = String(decoding: line, as: UTF8.self)
        line.removeAll(keepingCapacity: true)
        if text.isEmpty {
            dispatch(into: &events)
            return
        }
        if text.hasPrefix(":") { return }
        let field: Substring
        var value: Substring
        if let colon = text.firstIndex(of: ":") {
            field = text[..<colon]
            value = text[text.index(after: colon)...]
            if value.hasPrefix(" ") { value = value.dropFirst() }
        } else {
            field = text[...]
            value = ""
        }
        switch field {
        case "event":
            eventType = String(value)
        case "data":
            if hasData { data.append("\n") }
            data.append(contentsOf: value)
            hasData = true
            if data.utf8.count > Self.maximumEventSize { throw Self.limitError(Self.maximumEventSize) }
        case "id":
            if !value.contains("\u{0}") { lastEventIDBuffer = String(value) }
        case "retry":
            if !value.isEmpty, value.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let milliseconds = Int(value) {
                reconnectionTime = milliseconds
                retry = milliseconds
            }
        default:
            return
        }
    }

    private mutating func dispatch(into events: inout [DataStreamRequest.ServerSentEvent]) {
        defer {
            data = ""
            hasData = false
            eventType = ""
            retry = nil
        }
        lastEventID = lastEventIDBuffer
        guard hasData else { return }
        events.append(
            DataStreamRequest.ServerSentEvent(
                type: eventType.isEmpty ? "message" : eventType, data: data, lastEventID: lastEventID, retry: retry))
    }
}
