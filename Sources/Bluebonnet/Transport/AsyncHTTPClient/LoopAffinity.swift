import AsyncHTTPClient
import NIOCore

/// Which event loop the next request's delegate should run on: one whose connection just finished a request.
///
/// AsyncHTTPClient runs a delegate's callbacks on the task's event loop, and when the connection that carries the
/// request lives on another loop, every callback (the request sent, the head, each body part, the end) is a trip
/// through that loop's task queue, which wakes it. Asked to be indifferent from a thread that is no event loop, it
/// picks the group's loops in turn, so a client making one request after another on its one connection crossed loops
/// on every other request (measured with `strace`: 2.6 more `eventfd` writes, `epoll_wait`s and reads a request, a
/// third more CPU). A request that finishes leaves its loop here;
/// the next request prefers that loop, where the connection it just freed waits. The pool still takes an idle
/// connection on another loop when the preferred has none, and opens new connections on the preferred loop, so
/// requests that find nothing here (a burst's start) stay indifferent and spread new connections over the loops.
final class LoopAffinity: Sendable {
    /// The most loops kept: about one for each connection that may come free at once.
    static let capacity = 64

    private let loops = Protected<[any EventLoop]>([])

    /// A request finished on `loop`, whose connection is now free.
    func released(_ loop: any EventLoop) {
        loops.write { loops in
            if loops.count < Self.capacity { loops.append(loop) }
        }
    }

    /// The preference for a request made now: the loop a request last left, if any is left; indifferent otherwise,
    /// and always when the caller runs on an event loop (AsyncHTTPClient then prefers the caller's own loop).
    func preference(onEventLoop: Bool) -> HTTPClient.EventLoopPreference {
        guard !onEventLoop, let loop = loops.write({ $0.popLast() }) else { return .indifferent }
        return .delegate(on: loop)
    }
}
