/// Carries a value whose type the compiler cannot prove `Sendable` (a generic response) across one dispatch;
/// the value is never mutated after it is boxed.
struct UncheckedBox<Value>: @unchecked Sendable {
    // @unchecked: immutable, and used for one hand-over only.
    let value: Value
    init(_ value: Value) { self.value = value }
}
