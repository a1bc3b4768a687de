import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A dictionary of parameters to apply to a `URLRequest`.
public typealias Parameters = [String: any Any & Sendable]

/// A type used to define how a set of parameters are applied to a `URLRequest`.
public protocol ParameterEncoding: Sendable {
    /// Creates a `URLRequest` by encoding parameters and applying them on the passed request.
    ///
    /// - Parameters:
    ///   - urlRequest: `URLRequestConvertible` value onto which parameters will be encoded.
    ///   - parameters: `Parameters` to encode onto the request.
    /// - Returns:      The encoded `URLRequest`.
    /// - Throws:       Any `Error` produced during parameter encoding.
    func encode(_ urlRequest: any URLRequestConvertible, with parameters: Parameters?) throws -> URLRequest
}
