import Dispatch

/// Where user code may run: never on an event loop. Debug builds check it at each call of user code the request
/// makes after a hop (retriers, redirect handlers, head steps, validators, serializers, cache handlers, download
/// destinations, trust evaluators, monitors); a release build checks nothing.
enum Confinement {
    #if DEBUG
    private static let probe = Protected<(@Sendable () -> Bool)?>(nil)
    #endif

    /// Installed by an engine: whether the calling thread is one of its event loops.
    static func installEventLoopProbe(_ isOnEventLoop: @escaping @Sendable () -> Bool) {
        #if DEBUG
        probe.write(isOnEventLoop)
        #endif
    }

    /// Traps, in a debug build, when the calling thread is an event loop.
    ///
    /// - Parameter what: The user code about to run, for the message.
    static func assertOffEventLoop(_ what: @autoclosure () -> String) {
        #if DEBUG
        if let isOnEventLoop = probe.read({ $0 }), isOnEventLoop() {
            assertionFailure("\(what()) would run on an event loop")
        }
        #endif
    }
}
