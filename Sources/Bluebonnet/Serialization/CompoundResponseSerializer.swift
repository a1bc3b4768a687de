import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A serializer that tries several serializers in order and returns the first success (AFNetworking's compound
/// serializer). When all fail, the error is `.compoundSerializationFailed(errors:)` with every error in order; its
/// `underlyingError` is the last serializer's.
public final class CompoundResponseSerializer: DataResponseSerializerProtocol, DownloadResponseSerializerProtocol {
    /// The serializers, in the order they are tried; each applies its own empty-body and preprocessing rules.
    public let serializers: [any DataResponseSerializerProtocol]
    /// MIME types the body must have before any serializer is tried; `nil` checks nothing.
    public let acceptableContentTypes: Set<String>?
    /// Status codes the response must have before any serializer is tried; `nil` checks nothing.
    public let acceptableStatusCodes: IndexSet?

    /// Creates a compound serializer.
    ///
    /// - Parameters:
    ///   - serializers:            The serializers, in the order they are tried.
    ///   - acceptableContentTypes: MIME types the body must have; `nil` (the default) checks nothing.
    ///   - acceptableStatusCodes:  Status codes the response must have; `nil` (the default) checks nothing.
    public init(
        _ serializers: [any DataResponseSerializerProtocol],
        acceptableContentTypes: Set<String>? = nil,
        acceptableStatusCodes: IndexSet? = nil
    ) {
        self.serializers = serializers
        self.acceptableContentTypes = acceptableContentTypes
        self.acceptableStatusCodes = acceptableStatusCodes
    }

    /// The first inner serializer's value that succeeds.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws
        -> Any
    {
        if let error { throw error }
        if let response {
            try ResponseAcceptance.check(
                .response(response), data: data, contentTypes: acceptableContentTypes,
                statusCodes: acceptableStatusCodes)
        }
        var errors: [AFError] = []
        for serializer in serializers {
            do {
                return try serializer.serialize(request: request, response: response, data: data, error: nil)
            } catch {
                errors.append(
                    error.asAFError(or: .responseSerializationFailed(reason: .customSerializationFailed(error: error))))
            }
        }
        throw AFError.responseSerializationFailed(reason: .compoundSerializationFailed(errors: errors))
    }

    /// Reads the downloaded file, then tries the serializers on its bytes.
    public func serializeDownload(request: URLRequest?, response: HTTPURLResponse?, fileURL: URL?, error: (any Error)?)
        throws -> Any
    {
        if let error { throw error }
        return try serialize(request: request, response: response, data: DownloadedFile.read(fileURL), error: nil)
    }
}
