import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Request {
    /// The request's upload progress as an `AsyncSequence`, ending when the request finishes.
    ///
    /// - Parameter bufferingPolicy: What is kept when the consumer falls behind. `.unbounded` by default.
    /// - Returns: The stream.
    public func uploadProgress(bufferingPolicy: StreamOf<Progress>.BufferingPolicy = .unbounded) -> StreamOf<Progress> {
        eventStream(bufferingPolicy: bufferingPolicy) { [self] yield in
            uploadProgress(queue: underlyingQueue) { yield($0) }
        }
    }

    /// The request's download progress as an `AsyncSequence`, ending when the request finishes.
    ///
    /// - Parameter bufferingPolicy: What is kept when the consumer falls behind. `.unbounded` by default.
    /// - Returns: The stream.
    public func downloadProgress(bufferingPolicy: StreamOf<Progress>.BufferingPolicy = .unbounded) -> StreamOf<Progress>
    {
        eventStream(bufferingPolicy: bufferingPolicy) { [self] yield in
            downloadProgress(queue: underlyingQueue) { yield($0) }
        }
    }

    /// Each `URLRequest` the request makes (the first, then one per redirect) as an `AsyncSequence`, ending when the
    /// request finishes.
    ///
    /// - Parameter bufferingPolicy: What is kept when the consumer falls behind. `.unbounded` by default.
    /// - Returns: The stream.
    public func urlRequests(bufferingPolicy: StreamOf<URLRequest>.BufferingPolicy = .unbounded) -> StreamOf<URLRequest>
    {
        eventStream(bufferingPolicy: bufferingPolicy) { [self] yield in
            onURLRequestCreation(on: underlyingQueue) { yield($0) }
        }
    }

    /// Each attempt's `URLSessionTask` as it begins (`onURLSessionTaskCreation(on:perform:)`), as an `AsyncSequence`
    /// ending when the request finishes.
    ///
    /// - Parameter bufferingPolicy: What is kept when the consumer falls behind. `.unbounded` by default.
    /// - Returns: The stream.
    public func urlSessionTasks(
        bufferingPolicy: StreamOf<URLSessionTask>.BufferingPolicy = .unbounded
    ) -> StreamOf<URLSessionTask> {
        eventStream(bufferingPolicy: bufferingPolicy) { [self] yield in
            onURLSessionTaskCreation(on: underlyingQueue) { yield($0) }
        }
    }

    /// The request's cURL command, once its `URLRequest` exists, as an `AsyncSequence` ending when the request
    /// finishes.
    ///
    /// - Parameter bufferingPolicy: What is kept when the consumer falls behind. `.unbounded` by default.
    /// - Returns: The stream.
    public func cURLDescriptions(bufferingPolicy: StreamOf<String>.BufferingPolicy = .unbounded) -> StreamOf<String> {
        eventStream(bufferingPolicy: bufferingPolicy) { [self] yield in
            cURLDescription(on: underlyingQueue) { yield($0) }
        }
    }

    /// A stream of what `register` hands to `yield`, ending once the request finished. Registering happens when the
    /// stream is iterated; leaving the loop early ends the stream but not the request.
    func eventStream<Element>(
        bufferingPolicy: StreamOf<Element>.BufferingPolicy,
        register: @escaping @Sendable (_ yield: @escaping @Sendable (Element) -> Void) -> Void
    ) -> StreamOf<Element> {
        StreamOf(
            bufferingPolicy: bufferingPolicy, onTermination: {},
            builder: { [self] channel in
                register { channel.yield($0, taken: {}) }
                // Queued like a response handler, so it comes after the events of the last attempt; like one, it
                // resumes a request that starts immediately.
                appendResponseSerializer(inlineSafe: true) { [self] in
                    // The finish comes after the handlers' events, which are queued on `underlyingQueue`.
                    underlyingQueue.async { channel.finish() }
                }
            })
    }
}
