import Foundation

extension ImageResponseSerializer {
    /// An image read from its headers alone: format, size in pixels and frame count, with the bytes it came from.
    /// Nothing is decoded, so reading a large image costs no more than walking its structure.
    public struct Image: Sendable, Equatable {
        /// The formats Bluebonnet reads.
        public enum Format: String, Sendable, CaseIterable {
            /// PNG, including animated PNG (APNG).
            case png
            /// JPEG, baseline or progressive.
            case jpeg
            /// GIF, including animated GIF.
            case gif
            /// WebP: lossy, lossless or extended (including animated).
            case webp
            /// Windows bitmap.
            case bmp
            /// TIFF, either byte order.
            case tiff
            /// Windows icon; its size is the largest image it holds.
            case ico
            /// HEIC (HEIF with HEVC), sized from its `ispe` property.
            case heic
        }

        /// The format.
        public let format: Format
        /// The width in pixels.
        public let width: Int
        /// The height in pixels.
        public let height: Int
        /// The number of frames: more than 1 for an animated GIF, WebP or PNG; 1 otherwise.
        public let frameCount: Int
        /// The encoded bytes.
        public let data: Data

        /// `width × height`.
        public var pixelCount: Int { width * height }

        /// Reads `data`'s headers.
        ///
        /// - Parameter data: The encoded image.
        /// - Throws: `AFError.responseSerializationFailed(.imageSerializationFailed(...))` for bytes that are no image
        ///   Bluebonnet reads, or that end before the image's structure does.
        public init(data: Data) throws {
            let header = try ImageHeaderReader.read(data)
            format = header.format
            width = header.width
            height = header.height
            frameCount = header.frameCount
            self.data = data
        }
    }
}

/// The MIME types of the formats `Image` reads.
extension ImageResponseSerializer.Image.Format {
    /// The content types a response carrying this format usually has.
    public var mimeTypes: [String] {
        switch self {
        case .png: return ["image/png", "image/apng"]
        case .jpeg: return ["image/jpeg", "image/jpg", "image/pjpeg"]
        case .gif: return ["image/gif"]
        case .webp: return ["image/webp"]
        case .bmp: return ["image/bmp", "image/x-bmp", "image/x-ms-bmp", "image/x-xbitmap", "image/x-win-bitmap"]
        case .tiff: return ["image/tiff"]
        case .ico: return ["image/ico", "image/x-icon", "image/vnd.microsoft.icon"]
        case .heic: return ["image/heic", "image/heif"]
        }
    }
}
