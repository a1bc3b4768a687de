import Foundation
import X509

/// The roots a server's chain is verified against.
public enum TrustRoots: Sendable {
    /// The system's trust store.
    case system
    /// These as well as the system's.
    case adding([Certificate])
    /// These only, in place of the system's.
    case replacing([Certificate])

    /// `self` with `other` applied on top: a replacement narrows, an addition joins whatever is trusted.
    func applying(_ other: TrustRoots) -> TrustRoots {
        switch (self, other) {
        case (_, .system): self
        case let (_, .replacing(roots)): .replacing(roots)
        case let (.system, .adding(roots)): .adding(roots)
        case let (.adding(base), .adding(roots)): .adding(base + roots)
        case let (.replacing(base), .adding(roots)): .replacing(base + roots)
        }
    }
}
