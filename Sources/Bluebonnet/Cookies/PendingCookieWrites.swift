import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Cookie changes on their way to a persistent `HTTPCookieStorage` (the shared one), seen by every request at once.
///
/// FoundationNetworking rewrites a persistent storage's whole cookie file on every `setCookie` and `deleteCookie`,
/// and has no call that stores several cookies at once: a response of 50 `Set-Cookie` fields on a full jar cost
/// 100 rewrites, and its body waited for them. Here a response's changes are one batch, recorded in memory under one
/// lock, and one writer per storage applies what is pending off the request path: changes to the same cookie that
/// arrive while it works collapse into the last one, so a flood costs the writer at most one change per cookie of
/// the (bounded) jar per pass, and never delays a response.
///
/// Until the writer has applied a change, `HTTPCookieStorage`'s own API does not show it; every Bluebonnet reader
/// (requests, `storage.af.cookies(for:)`, the exports) does. `storage.af.waitForPendingCookieWrites()` waits for it.
final class PendingCookieWrites: @unchecked Sendable {
    // @unchecked: `HTTPCookieStorage` is not marked `Sendable`, but every method of it takes its own lock; the rest
    // of the state is behind `Protected`.
    /// One change to a cookie.
    enum Change: @unchecked Sendable {
        // `HTTPCookie` is immutable but not marked `Sendable` on Linux.
        case set(HTTPCookie)
        case delete(HTTPCookie)
    }

    private struct Entry {
        var change: Change
        var sequence: UInt64
    }

    private struct State {
        /// By `CookieJar.key(of:)`: the last change asked for each cookie.
        var pending: [String: Entry] = [:]
        var sequence: UInt64 = 0
        var writing = false
        var waiters: [@Sendable () -> Void] = []
        /// `setCookie` and `deleteCookie` calls made so far, each a rewrite of the storage's file.
        var storageCalls = 0
    }

    private let storage: HTTPCookieStorage
    private let state = Protected(State())
    private let queue: DispatchQueue

    private init(storage: HTTPCookieStorage) {
        self.storage = storage
        queue = DispatchQueue(label: "org.bluebonnet.cookie-writes", qos: .utility)
    }

    // MARK: - The registry

    private static let registry = Protected<[ObjectIdentifier: PendingCookieWrites]>([:])

    /// The writer of `storage`, made on first use. Only persistent storages have one, and those live as long as the
    /// process (`HTTPCookieStorage.shared` and the group containers' are singletons), so holding them costs nothing.
    static func writer(for storage: HTTPCookieStorage) -> PendingCookieWrites {
        let id = ObjectIdentifier(storage)
        return registry.write { registry in
            if let existing = registry[id] { return existing }
            let made = PendingCookieWrites(storage: storage)
            registry[id] = made
            return made
        }
    }

    /// The writer of `storage` if it has one.
    static func existingWriter(for storage: HTTPCookieStorage) -> PendingCookieWrites? {
        registry.write { $0[ObjectIdentifier(storage)] }
    }

    /// Whether a storage persists its cookies to a file on every change: FoundationNetworking's shared and group
    /// storages do; the ephemeral ones of `URLSessionConfiguration.ephemeral` do not.
    static func isPersistent(_ storage: HTTPCookieStorage) -> Bool {
        #if canImport(FoundationNetworking)
        storage === HTTPCookieStorage.shared || !storage.description.hasPrefix("Ephemeral")
        #else
        false
        #endif
    }

    /// The storage's cookies as they will be once what is pending is written.
    static func cookies(of storage: HTTPCookieStorage) -> [HTTPCookie] {
        let stored = storage.cookies ?? []
        return existingWriter(for: storage)?.applied(to: stored) ?? stored
    }

    // MARK: - Changes

    /// Records a batch of changes, in order; the writer is woken if it sleeps.
    func enqueue(_ changes: [(key: String, change: Change)]) {
        guard !changes.isEmpty else { return }
        let wake = state.write { state -> Bool in
            for (key, change) in changes {
                state.sequence += 1
                state.pending[key] = Entry(change: change, sequence: state.sequence)
            }
            guard !state.writing else { return false }
            state.writing = true
            return true
        }
        if wake { queue.async { [self] in write() } }
    }

    /// `stored` with what is pending applied.
    func applied(to stored: [HTTPCookie]) -> [HTTPCookie] {
        let pending = state.write { $0.pending }
        guard !pending.isEmpty else { return stored }
        var result = stored.filter { pending[CookieJar.key(of: $0)] == nil }
        for entry in pending.values {
            if case let .set(cookie) = entry.change { result.append(cookie) }
        }
        return result
    }

    /// Calls `completion` once every change recorded so far is in the storage.
    func whenWritten(_ completion: @escaping @Sendable () -> Void) {
        let now = state.write { state -> Bool in
            guard state.writing else { return true }
            state.waiters.append(completion)
            return false
        }
        if now { completion() }
    }

    /// Applies what is pending until nothing is; a change that came again meanwhile stays for the next pass.
    private func write() {
        while true {
            let (batch, waiters) = state.write { state -> ([(String, Entry)], [@Sendable () -> Void]) in
                if state.pending.isEmpty {
                    state.writing = false
                    defer { state.waiters = [] }
                    return ([], state.waiters)
                }
                return (state.pending.sorted { $0.value.sequence < $1.value.sequence }.map { ($0.key, $0.value) }, [])
            }
            if batch.isEmpty {
                for waiter in waiters { waiter() }
                return
            }
            // Each Foundation call rewrites the file: a cookie made and dropped while it waited is never deleted.
            let present = Set((storage.cookies ?? []).map(CookieJar.key))
            var calls = 0
            for (key, entry) in batch {
                switch entry.change {
                case let .set(cookie):
                    storage.setCookie(cookie)
                    calls += 1
                case let .delete(cookie):
                    guard present.contains(key) else { continue }
                    storage.deleteCookie(cookie)
                    calls += 1
                }
            }
            state.write { state in
                state.storageCalls += calls
                for (key, entry) in batch where state.pending[key]?.sequence == entry.sequence {
                    state.pending[key] = nil
                }
            }
        }
    }

    // MARK: - For tests

    /// How many `setCookie` and `deleteCookie` calls the writer has made, each a rewrite of FoundationNetworking's
    /// file: what a flood of cookies costs, counted rather than timed.
    var storageCallCount: Int {
        state.read { $0.storageCalls }
    }

    /// Holds the writer: changes are still recorded, and seen at once by every Bluebonnet reader, but none reaches the
    /// storage until `release()`; a pass already under way finishes first. For tests that prove no response waits for
    /// a write. Every `hold()` needs its `release()`.
    func hold() {
        queue.suspend()
    }

    /// Lets a held writer apply what is pending.
    func release() {
        queue.resume()
    }
}
