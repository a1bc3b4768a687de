import Bluebonnet
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Which responses the retriers will resend: those a `RetryPolicy` among them retries by status, and a `401` when an
/// `AuthenticationInterceptor` is among them. The transport fails only those (so the retrier sees them, as a
/// validation failure); any other response, and the last one when retries run out, is delivered.
struct RetryPrediction: Sendable {
    private(set) var policies: [RetryPolicy] = []
    /// Whether an `AuthenticationInterceptor` may refresh its credential and resend on a `401`.
    private(set) var authenticates = false

    /// The prediction for the retriers of `interceptors`, in an `Interceptor`'s retriers too.
    init(_ interceptors: [(any RequestInterceptor)?]) {
        for interceptor in interceptors {
            if let interceptor { collect(interceptor) }
        }
    }

    private mutating func collect(_ retrier: any RequestRetrier) {
        if let policy = retrier as? RetryPolicy {
            policies.append(policy)
        } else if retrier is any RefreshingAuthentication {
            authenticates = true
        } else if let composite = retrier as? Interceptor {
            for retrier in composite.retriers { collect(retrier) }
        }
    }

    /// Whether nothing is predicted to be retried by status.
    var isEmpty: Bool { policies.isEmpty && !authenticates }

    /// Whether `response`, to a request sent with `method` and retried `retryCount` times, is offered to the
    /// retriers: a `401` with an authentication interceptor, or a status and method a policy retries, within its
    /// limit and with a `Retry-After` (delta-seconds) within its maximum.
    func willRetry(status statusCode: Int, retryAfter: String?, method: String?, retryCount: Int) -> Bool {
        if authenticates, statusCode == 401 { return true }
        guard !policies.isEmpty else { return false }
        let method = HTTPMethod(rawValue: (method ?? "GET").uppercased())
        return policies.contains { policy in
            guard retryCount < policy.retryLimit, policy.retryableHTTPMethods.contains(method),
                policy.retryableHTTPStatusCodes.contains(statusCode)
            else { return false }
            guard RetryPolicy.retryAfterStatusCodes.contains(statusCode),
                let value = retryAfter?.trimmingCharacters(in: .whitespaces),
                !value.isEmpty, value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
            else { return true }
            // Delta-seconds beyond the policy's maximum: the policy gives up, so this response is the last.
            return value.count <= 12 && (TimeInterval(value) ?? .infinity) <= policy.maximumRetryAfter
        }
    }
}

/// Marks `AuthenticationInterceptor`, whatever its authenticator: it refreshes and resends on a `401`.
protocol RefreshingAuthentication {}

extension AuthenticationInterceptor: RefreshingAuthentication {}
