// Types another module of an app might declare under the short names Bluebonnet once declared at top level. Test
// files that import this module and `Bluebonnet` together compile only while `Bluebonnet` declares none of them.

/// An app's own image type, as SwiftUI-style `Image` typealiases are.
public struct Image: Equatable {
    public let name: String
    public init(name: String) { self.name = name }
}

/// Another package's timeline.
public struct Timeline: Equatable {
    public let events: [String]
    public init(events: [String]) { self.events = events }
}

/// Another package's Server-Sent Events client, as LDSwiftEventSource's is.
public final class EventSource {
    public let url: String
    public init(url: String) { self.url = url }
}

/// Another package's event.
public struct ServerSentEvent: Equatable {
    public let data: String
    public init(data: String) { self.data = data }
}

/// Another package's cache.
public struct HTTPCache: Equatable {
    public let capacity: Int
    public init(capacity: Int) { self.capacity = capacity }
}
