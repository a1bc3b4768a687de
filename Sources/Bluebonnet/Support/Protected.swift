#if BLUEBONNET_SANITIZER_LOCK
import Foundation
#else
import Synchronization
#endif

#if !BLUEBONNET_SANITIZER_LOCK
/// The one lock type of Bluebonnet: a value guarded by a `Mutex`, in a class so it can be shared by reference.
///
/// The value sits beside a `Mutex<Void>` rather than inside a `Mutex<Value>`: a `Mutex<Value>` field is a generic
/// type built from `Value` at run time, so releasing a `Protected` or calling `write` from code that is generic over
/// the value (most of a request's state is) looked its metadata up in the runtime's cache every time, about 260
/// instructions, 13 times a request.
final class Protected<Value: ~Copyable>: @unchecked Sendable {
    // @unchecked: `value` is read and written only inside `mutex.withLock`, which is also why the exclusivity check
    // the compiler would add to each access of a class's stored property is left out.
    private let mutex = Mutex(())
    @exclusivity(unchecked) private var value: Value

    init(_ value: consuming sending Value) {
        self.value = value
    }

    /// Runs `body` with exclusive access to the value; keep the closure short and never call out of the library
    /// from inside it.
    func write<Result: ~Copyable, E: Error>(_ body: (inout sending Value) throws(E) -> sending Result) throws(E)
        -> sending Result
    {
        try mutex.withLock { (_: inout Void) throws(E) -> sending Result in try body(&value) }
    }
}
#else
/// `Protected` for sanitizer builds (`scripts/sanitize.sh` sets `BLUEBONNET_SANITIZER_LOCK`): the same contract on a
/// pthread mutex. `Mutex` takes a contended lock inside the uninstrumented standard library on Linux, so
/// ThreadSanitizer never sees the acquisition and reports every contended access as a race; it intercepts pthreads.
final class Protected<Value: ~Copyable>: @unchecked Sendable {
    // Every access to `value` happens between `pthread_mutex_lock` and `pthread_mutex_unlock` of `mutex`.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    init(_ value: consuming sending Value) {
        self.value = value
        mutex = .allocate(capacity: 1)
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    func write<Result: ~Copyable, E: Error>(_ body: (inout sending Value) throws(E) -> sending Result) throws(E)
        -> sending Result
    {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
#endif

extension Protected {
    /// Reads part of the value under the lock; named apart from `write` so a reader can tell the two at a glance.
    func read<Result: ~Copyable, E: Error>(_ body: (borrowing Value) throws(E) -> sending Result) throws(E)
        -> sending Result
    {
        try write { (value: inout sending Value) throws(E) -> sending Result in try body(value) }
    }
}

extension Protected where Value: Copyable {
    /// A copy of the current value.
    func read() -> Value {
        write { value -> sending Value in
            let copy = value
            return copy
        }
    }
}

extension Protected where Value: Sendable {
    /// Replaces the value.
    func write(_ newValue: Value) {
        write { $0 = newValue }
    }
}
