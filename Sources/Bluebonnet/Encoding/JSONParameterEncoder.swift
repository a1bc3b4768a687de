import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `ParameterEncoder` that encodes types as JSON body data; `Content-Type` becomes `application/json` unless set.
public struct JSONParameterEncoder: ParameterEncoder {
    /// Returns an encoder with default parameters.
    public static var `default`: JSONParameterEncoder { JSONParameterEncoder() }

    /// Returns an encoder with `JSONEncoder.outputFormatting` set to `.prettyPrinted`.
    public static var prettyPrinted: JSONParameterEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .prettyPrinted
        return JSONParameterEncoder(encoder: encoder)
    }

    /// Returns an encoder with `JSONEncoder.outputFormatting` set to `.sortedKeys`.
    public static var sortedKeys: JSONParameterEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        return JSONParameterEncoder(encoder: encoder)
    }

    /// `JSONEncoder` used to encode parameters.
    public let encoder: JSONEncoder

    /// Creates an instance with the provided `JSONEncoder`.
    ///
    /// - Parameter encoder: The `JSONEncoder`. `JSONEncoder()` by default.
    public init(encoder: JSONEncoder = JSONEncoder()) {
        self.encoder = encoder
    }

    /// Encodes `parameters` as the JSON body of `request`.
    public func encode<Parameters: Encodable & Sendable>(_ parameters: Parameters?, into request: URLRequest) throws
        -> URLRequest
    {
        guard let parameters else { return request }
        var request = request
        do {
            let data = try encoder.encode(parameters)
            request.httpBody = data
            if request.value(forHTTPHeaderField: "Content-Type") == nil {
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            }
        } catch {
            throw AFError.parameterEncoderFailed(reason: .encoderFailed(error: error))
        }
        return request
    }
}

extension ParameterEncoder where Self == JSONParameterEncoder {
    /// A `JSONParameterEncoder` with a default `JSONEncoder`: `parameterEncoder: .json`.
    public static var json: JSONParameterEncoder { JSONParameterEncoder() }

    /// A `JSONParameterEncoder` with `encoder`.
    ///
    /// - Parameter encoder: The `JSONEncoder`. `JSONEncoder()` by default.
    /// - Returns: The encoder.
    public static func json(encoder: JSONEncoder = JSONEncoder()) -> JSONParameterEncoder {
        JSONParameterEncoder(encoder: encoder)
    }
}
