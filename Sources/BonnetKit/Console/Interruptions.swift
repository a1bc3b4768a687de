import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Ctrl-C (`SIGINT`) and `SIGTERM` as a command sees them.
///
/// A command that has something to put in order before it ends (a download's file) handles them for a while
/// (`handling(_:_:)`): an interruption then reaches its handler, and the command ends by itself, with the status of a
/// process the signal ended (130, 143). While nothing handles them, the process's interruptions end it at once, as
/// they would have without this type. A console in memory is interrupted by its test (`interrupt(with:)`).
public final class Interruptions: Sendable {
    private struct State {
        var handlers: [Int: @Sendable (Int32) -> Void] = [:]
        var nextKey = 0
        var received: Int32?
    }

    private let state = Mutex(State())
    /// Whether an interruption nobody handles ends the process (the process's own), rather than only being recorded.
    private let endsProcessWhenUnhandled: Bool
    /// The process's signal sources, kept for as long as the process runs.
    private let sources = Mutex<SignalSources?>(nil)

    /// Signal sources only held, never touched again once resumed: `@unchecked Sendable` because Dispatch's sources
    /// are not marked `Sendable`, though Dispatch runs their handlers on their own queue.
    private final class SignalSources: @unchecked Sendable {
        let sources: [any DispatchSourceSignal]

        init(_ sources: [any DispatchSourceSignal]) {
            self.sources = sources
        }
    }

    /// Interruptions that come only from `interrupt(with:)`: a console in memory.
    public init() {
        endsProcessWhenUnhandled = false
    }

    private init(process: Void) {
        endsProcessWhenUnhandled = true
    }

    /// The process's `SIGINT` and `SIGTERM`, taken from the system's default handling on first use.
    public static let process: Interruptions = {
        let interruptions = Interruptions(process: ())
        let installed = SignalSources(
            [SIGINT, SIGTERM].map { number -> any DispatchSourceSignal in
                // A signal source sees the signal only once its default action (ending the process) is off.
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { interruptions.interrupt(with: number) }
                source.resume()
                return source
            })
        interruptions.sources.withLock { $0 = installed }
        return interruptions
    }()

    /// The first interruption received, if any.
    public var received: Int32? {
        state.withLock { $0.received }
    }

    /// Delivers the signal `number` to whatever handles interruptions now; with nothing handling them, the process's end the
    /// process as the signal would have.
    public func interrupt(with number: Int32) {
        let handlers = state.withLock { state in
            if state.received == nil { state.received = number }
            return Array(state.handlers.values)
        }
        if handlers.isEmpty, endsProcessWhenUnhandled {
            signal(number, SIG_DFL)
            raise(number)
            return
        }
        for handler in handlers { handler(number) }
    }

    /// Runs `body` with `handler` called for each interruption that comes meanwhile (on whatever thread delivers
    /// it); one that came before `body` began is delivered at once.
    func handling<T>(
        _ handler: @escaping @Sendable (Int32) -> Void, _ body: () async throws -> T
    ) async rethrows -> T {
        let (key, earlier) = state.withLock { state in
            defer { state.nextKey += 1 }
            state.handlers[state.nextKey] = handler
            return (state.nextKey, state.received)
        }
        defer { _ = state.withLock { $0.handlers.removeValue(forKey: key) } }
        if let earlier { handler(earlier) }
        return try await body()
    }

    /// The exit status of a process the signal `number` ended: 128 + its number.
    static func status(of number: Int32) -> Int32 {
        128 + number
    }
}
