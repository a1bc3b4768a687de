import Dispatch

/// Where user code may run: never on an event loop. Debug builds check it at each call of user code the request
/// makes (the `URLRequest`'s making and adaptation, retriers, redirect handlers, head steps, validators, serializers,
/// cache handlers, download destinations, trust evaluators, monitors); a release build checks nothing, but a request
/// resumed on an event loop makes its `URLRequest` elsewhere in every build (`isOnEventLoop`).
enum Confinement {
    private static let probe = Protected<(@Sendable () -> Bool)?>(nil)

    /// Installed by an engine: whether the calling thread is one of its event loops.
    static func installEventLoopProbe(_ isOnEventLoop: @escaping @Sendable () -> Bool) {
        probe.write { $0 = isOnEventLoop }
    }

    /// Whether the calling thread is an event loop of an engine made so far.
    static func isOnEventLoop() -> Bool {
        guard let isOnEventLoop = probe.read({ $0 }) else { return false }
        return isOnEventLoop()
    }

    /// Traps, in a debug build, when the calling thread is an event loop.
    ///
    /// - Parameter what: The user code about to run, for the message.
    static func assertOffEventLoop(_ what: @autoclosure () -> String) {
        #if DEBUG
        if isOnEventLoop() { assertionFailure("\(what()) would run on an event loop") }
        #endif
    }
}
