import Bluebonnet

// Bluebonnet's own types whose short names Alamofire does not have live inside the type they belong to, so that
// `import Bluebonnet` adds no top-level name an app's other modules commonly use (an `Image` typealias, a
// `Timeline` or `EventSource` of another package). Code written against the earlier top-level names keeps compiling
// by importing this module too; the short names then clash with another module's as they did before.

/// The times of a request's life: ``Bluebonnet/Request/Timeline``.
public typealias Timeline = Request.Timeline

/// An image read from its headers: ``Bluebonnet/ImageResponseSerializer/Image``.
public typealias Image = ImageResponseSerializer.Image

/// A Server-Sent Events connection that reconnects: ``Bluebonnet/DataStreamRequest/EventSource``.
public typealias EventSource = DataStreamRequest.EventSource

/// One event of a `text/event-stream` body: ``Bluebonnet/DataStreamRequest/ServerSentEvent``.
public typealias ServerSentEvent = DataStreamRequest.ServerSentEvent

/// Bluebonnet's HTTP cache store: ``Bluebonnet/Session/HTTPCache``.
public typealias HTTPCache = Session.HTTPCache
