import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `ParameterEncoder` that writes an `Encodable` value as `application/x-www-form-urlencoded` with a
/// `URLEncodedFormEncoder`, in the query or the body.
public struct URLEncodedFormParameterEncoder: ParameterEncoder {
    /// Where the form goes: the same type as `URLEncoding.Destination`, so both encodings place parameters by one
    /// rule.
    public typealias Destination = URLEncoding.Destination

    /// The default encoder: `URLEncodedFormEncoder()` and a method-dependent destination.
    public static var `default`: URLEncodedFormParameterEncoder { URLEncodedFormParameterEncoder() }

    /// The encoder that writes the form.
    public let encoder: URLEncodedFormEncoder
    /// Where the form goes.
    public let destination: Destination

    /// Creates an encoder.
    ///
    /// - Parameters:
    ///   - encoder:     The `URLEncodedFormEncoder`. `URLEncodedFormEncoder()` by default.
    ///   - destination: Where the form goes. `.methodDependent` by default.
    public init(encoder: URLEncodedFormEncoder = URLEncodedFormEncoder(), destination: Destination = .methodDependent) {
        self.encoder = encoder
        self.destination = destination
    }

    /// Encodes `parameters` as a form into `request`.
    public func encode<Parameters: Encodable & Sendable>(_ parameters: Parameters?, into request: URLRequest) throws
        -> URLRequest
    {
        guard let parameters else { return request }
        var request = request
        guard let url = request.url else {
            throw AFError.parameterEncoderFailed(reason: .missingRequiredComponent(.url))
        }
        guard let rawMethod = request.httpMethod else {
            throw AFError.parameterEncoderFailed(reason: .missingRequiredComponent(.httpMethod(rawValue: "nil")))
        }
        let query: String
        do {
            query = try encoder.encode(parameters)
        } catch {
            throw AFError.parameterEncoderFailed(reason: .encoderFailed(error: error))
        }
        if destination.encodesParametersInURL(for: HTTPMethod(rawValue: rawMethod)) {
            guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
                throw AFError.parameterEncoderFailed(reason: .missingRequiredComponent(.url))
            }
            if !query.isEmpty {
                components.percentEncodedQuery = [components.percentEncodedQuery, query].compactMap { $0 }.joined(
                    separator: "&")
            }
            guard let newURL = components.url else {
                throw AFError.parameterEncoderFailed(reason: .missingRequiredComponent(.url))
            }
            request.url = newURL
        } else {
            if request.value(forHTTPHeaderField: "Content-Type") == nil {
                request.setValue("application/x-www-form-urlencoded; charset=utf-8", forHTTPHeaderField: "Content-Type")
            }
            request.httpBody = Data(query.utf8)
        }
        return request
    }
}

extension ParameterEncoder where Self == URLEncodedFormParameterEncoder {
    /// A `URLEncodedFormParameterEncoder` with its defaults: `parameterEncoder: .urlEncodedForm`.
    public static var urlEncodedForm: URLEncodedFormParameterEncoder { URLEncodedFormParameterEncoder() }

    /// A `URLEncodedFormParameterEncoder` with `encoder` and `destination`.
    ///
    /// - Parameters:
    ///   - encoder:     The `URLEncodedFormEncoder`. `URLEncodedFormEncoder()` by default.
    ///   - destination: Where the parameters go. `.methodDependent` by default.
    /// - Returns: The encoder.
    public static func urlEncodedForm(
        encoder: URLEncodedFormEncoder = URLEncodedFormEncoder(),
        destination: URLEncodedFormParameterEncoder.Destination = .methodDependent
    ) -> URLEncodedFormParameterEncoder {
        URLEncodedFormParameterEncoder(encoder: encoder, destination: destination)
    }
}
