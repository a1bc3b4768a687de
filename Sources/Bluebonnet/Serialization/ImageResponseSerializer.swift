import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A `ResponseSerializer` that reads the body as an `Image` (AFNetworking's image serializer, without decoding
/// pixels). Bytes that are not a whole image are refused, and so is an image whose pixel count is above
/// `maximumPixelCount`, so it is never handed on to be inflated. An empty body is not an image:
/// `.invalidEmptyResponse(type: "Image")`.
public final class ImageResponseSerializer: ResponseSerializer {
    /// The value made: named, so one type answers for both data and download serialization.
    public typealias SerializedObject = Image

    /// The content types AFNetworking's image serializer accepts, plus WebP and HEIC.
    public static let defaultAcceptableContentTypes: Set<String> = [
        "image/tiff", "image/jpeg", "image/gif", "image/png", "image/ico", "image/x-icon", "image/bmp",
        "image/x-bmp", "image/x-xbitmap", "image/x-win-bitmap", "image/webp", "image/heic", "image/heif",
    ]
    /// 100 megapixels: about 400 MB once inflated at four bytes a pixel.
    public static let defaultMaximumPixelCount = 100_000_000

    /// The preprocessor.
    public let dataPreprocessor: any DataPreprocessor
    /// HTTP response codes for which empty responses are allowed (and still fail: an empty body is not an image).
    public let emptyResponseCodes: Set<Int>
    /// `HTTPMethod`s for which empty responses are allowed.
    public let emptyRequestMethods: Set<HTTPMethod>
    /// The largest `width × height` accepted.
    public let maximumPixelCount: Int
    /// MIME types the body must have to be read; `nil` checks nothing.
    public let acceptableContentTypes: Set<String>?
    /// Status codes the response must have to be read; `nil` checks nothing.
    public let acceptableStatusCodes: IndexSet?

    /// Creates an instance with the provided values.
    ///
    /// - Parameters:
    ///   - dataPreprocessor:       `DataPreprocessor` used to prepare the received `Data` for serialization.
    ///   - emptyResponseCodes:     The HTTP response codes for which empty responses are allowed.
    ///   - emptyRequestMethods:    The HTTP request methods for which empty responses are allowed.
    ///   - maximumPixelCount:      The largest `width × height` accepted. 100 megapixels by default.
    ///   - acceptableContentTypes: MIME types the body must have; `nil` (the default) checks nothing.
    ///   - acceptableStatusCodes:  Status codes the response must have; `nil` (the default) checks nothing.
    public init(
        dataPreprocessor: any DataPreprocessor = ImageResponseSerializer.defaultDataPreprocessor,
        emptyResponseCodes: Set<Int> = ImageResponseSerializer.defaultEmptyResponseCodes,
        emptyRequestMethods: Set<HTTPMethod> = ImageResponseSerializer.defaultEmptyRequestMethods,
        maximumPixelCount: Int = ImageResponseSerializer.defaultMaximumPixelCount,
        acceptableContentTypes: Set<String>? = nil,
        acceptableStatusCodes: IndexSet? = nil
    ) {
        self.dataPreprocessor = dataPreprocessor
        self.emptyResponseCodes = emptyResponseCodes
        self.emptyRequestMethods = emptyRequestMethods
        self.maximumPixelCount = maximumPixelCount
        self.acceptableContentTypes = acceptableContentTypes
        self.acceptableStatusCodes = acceptableStatusCodes
    }

    /// Reads the body's image headers.
    public func serialize(request: URLRequest?, response: HTTPURLResponse?, data: Data?, error: (any Error)?) throws
        -> Image
    {
        guard let data = try preparedData(request: request, response: response, data: data, error: error) else {
            throw AFError.responseSerializationFailed(reason: .invalidEmptyResponse(type: "Image"))
        }
        let image = try Image(data: data)
        guard image.width.multipliedReportingOverflow(by: image.height).partialValue <= maximumPixelCount,
            !image.width.multipliedReportingOverflow(by: image.height).overflow
        else {
            throw AFError.responseSerializationFailed(
                reason: .imageSerializationFailed(
                    reason: .pixelCountExceedsLimit(width: image.width, height: image.height, limit: maximumPixelCount)
                ))
        }
        return image
    }
}

extension ResponseSerializer where Self == ImageResponseSerializer {
    /// Provides a default `ImageResponseSerializer` instance.
    public static var image: ImageResponseSerializer { ImageResponseSerializer() }
}
