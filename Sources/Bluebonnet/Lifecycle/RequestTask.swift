import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One attempt of a request on the wire, redirects included: what Bluebonnet's task events carry where Alamofire's
/// carry a `URLSessionTask`.
///
/// FoundationNetworking's `URLSessionTask` cannot stand for an AsyncHTTPClient request (one made outside a
/// `URLSession` traps when cancelled), so monitors get this value instead. It has the `URLSessionTask` properties that
/// mean something here; a monitor written for Alamofire that only names the task compiles unchanged.
public struct RequestTask: Sendable, Hashable, CustomStringConvertible {
    /// An identifier unique among the tasks of this process.
    public let taskIdentifier: Int
    /// The `URLRequest` the attempt began with (after adaptation).
    public let originalRequest: URLRequest?

    /// The task's `URLRequest` when it began; Bluebonnet follows redirects itself, so this is `originalRequest`.
    public var currentRequest: URLRequest? { originalRequest }

    private static let counter = Atomic<Int>(0)

    init(originalRequest: URLRequest?) {
        taskIdentifier = Self.counter.wrappingAdd(1, ordering: .relaxed).newValue
        self.originalRequest = originalRequest
    }

    /// Tasks are equal when their identifiers are.
    public static func == (lhs: RequestTask, rhs: RequestTask) -> Bool { lhs.taskIdentifier == rhs.taskIdentifier }

    /// Hashes the identifier.
    public func hash(into hasher: inout Hasher) { hasher.combine(taskIdentifier) }

    /// `Task <id>: METHOD URL`.
    public var description: String {
        let method = originalRequest?.httpMethod ?? "GET"
        return "Task \(taskIdentifier): \(method) \(originalRequest?.url?.absoluteString ?? "?")"
    }
}
