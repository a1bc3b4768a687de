import Synchronization

/// The one lock type of Bluebonnet: a value guarded by a `Mutex`, in a class so it can be shared by reference.
final class Protected<Value: ~Copyable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: consuming sending Value) {
        mutex = Mutex(value)
    }

    /// Runs `body` with exclusive access to the value; keep the closure short and never call out of the library
    /// from inside it.
    func write<Result: ~Copyable, E: Error>(_ body: (inout sending Value) throws(E) -> sending Result) throws(E) -> sending Result {
        try mutex.withLock(body)
    }
}

extension Protected where Value: Copyable {
    /// A copy of the current value.
    func read() -> Value {
        mutex.withLock { value -> sending Value in
            let copy = value
            return copy
        }
    }
}
