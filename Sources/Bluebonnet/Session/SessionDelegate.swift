import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Alamofire's `SessionDelegate`: the delegate of `Session.session`, and the `FileManager` that moves downloaded files
/// to their destinations.
///
/// Bluebonnet's requests are not `URLSession` tasks, so URLSession never asks this delegate about them: what
/// Alamofire's `SessionDelegate` does for a request, Bluebonnet's request machine does, and tells `EventMonitor`s the
/// same events. It declares none of URLSession's delegate methods, so a subclass written for Alamofire that overrides
/// one does not compile, rather than compiling and never being called: watch requests with an `EventMonitor`, answer
/// challenges with `Request.authenticate(...)` or `Session`'s credentials, and judge servers with a
/// `ServerTrustManager`.
open class SessionDelegate: NSObject, URLSessionDelegate, @unchecked Sendable {
    // @unchecked: its only stored property is a `let` set once; `FileManager` is documented as safe to share.

    /// Moves each downloaded file to its destination.
    let fileManager: FileManager

    /// Creates a delegate.
    ///
    /// - Parameter fileManager: The `FileManager` that moves downloaded files to their destinations. `.default` by
    ///   default.
    public init(fileManager: FileManager = .default) {
        self.fileManager = fileManager
    }
}
