import Foundation

/// Values a feature keeps on a request, by key: the request stores them under its lock without knowing what they
/// are (a redirect handler, a credential, what a hop answered of challenges). Empty, it costs nothing.
struct FeatureValues: Sendable {
    private var values: [ObjectIdentifier: any Sendable] = [:]

    subscript<Key: FeatureKey>(_ key: Key.Type) -> Key.Value? {
        get { values.isEmpty ? nil : values[ObjectIdentifier(key)] as? Key.Value }
        set { values[ObjectIdentifier(key)] = newValue }
    }
}

/// Names one value of `FeatureValues`.
protocol FeatureKey {
    associatedtype Value: Sendable
}
