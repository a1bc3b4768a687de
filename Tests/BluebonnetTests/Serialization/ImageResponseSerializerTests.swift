import Bluebonnet
import Foundation
import XCTest
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

final class ImageTests: XCTestCase {
    let fixtures: [(file: String, format: ImageResponseSerializer.Image.Format, width: Int, height: Int, frames: Int)] =
        [
            ("red-40x30.png", .png, 40, 30, 1),
            ("animated-30x20-3frames.png", .png, 30, 20, 3),
            ("baseline-48x32.jpg", .jpeg, 48, 32, 1),
            ("progressive-64x40.jpg", .jpeg, 64, 40, 1),
            ("animated-30x20-3frames.gif", .gif, 30, 20, 3),
            ("lossy-32x24.webp", .webp, 32, 24, 1),
            ("lossless-33x25.webp", .webp, 33, 25, 1),
            ("extended-alpha-34x26.webp", .webp, 34, 26, 1),
            ("animated-30x20-3frames.webp", .webp, 30, 20, 3),
            ("odd-21x13.bmp", .bmp, 21, 13, 1),
            ("small-27x17.tiff", .tiff, 27, 17, 1),
            ("icon-48.ico", .ico, 48, 48, 1),
        ]

    func testEveryFixtureReportsItsFormatSizeAndFrames() throws {
        for fixture in fixtures {
            let data = try Fixtures.data("Images/\(fixture.file)")
            let image = try ImageResponseSerializer.Image(data: data)
            XCTAssertEqual(image.format, fixture.format, fixture.file)
            XCTAssertEqual(image.width, fixture.width, fixture.file)
            XCTAssertEqual(image.height, fixture.height, fixture.file)
            XCTAssertEqual(image.frameCount, fixture.frames, fixture.file)
            XCTAssertEqual(image.data, data)
        }
    }

    func testTruncatedImagesAreRefusedAsTruncated() throws {
        for fixture in fixtures {
            let data = try Fixtures.data("Images/\(fixture.file)")
            for cut in [data.count - 1, data.count / 2, 20] {
                XCTAssertThrowsError(
                    try ImageResponseSerializer.Image(data: data.prefix(cut)), "\(fixture.file) cut to \(cut)"
                ) { error in
                    guard
                        case .responseSerializationFailed(.imageSerializationFailed(.truncated(let format))) = error
                            .asAFError
                    else {
                        return XCTFail("\(fixture.file) cut to \(cut): \(error)")
                    }
                    XCTAssertEqual(format, fixture.format)
                }
            }
        }
    }

    func testBytesThatAreNoImageAreRefused() {
        for bytes in [Data("<html>".utf8), Data(), Data([0x00, 0x01, 0x02]), Data("RIFF1234WAVE".utf8)] {
            XCTAssertThrowsError(try ImageResponseSerializer.Image(data: bytes)) { error in
                guard
                    case .responseSerializationFailed(.imageSerializationFailed(.unrecognizedFormat)) = error.asAFError
                else {
                    return XCTFail("\(error)")
                }
            }
        }
    }

    func testHEICIsSizedFromItsSpatialExtents() throws {
        func box(_ type: String, _ payload: [UInt8]) -> [UInt8] {
            let size = UInt32(8 + payload.count)
            return withUnsafeBytes(of: size.bigEndian, Array.init) + Array(type.utf8) + payload
        }
        let ftyp = box("ftyp", Array("heic".utf8) + [0, 0, 0, 0] + Array("mif1heic".utf8))
        let ispe = box(
            "ispe",
            [0, 0, 0, 0] + withUnsafeBytes(of: UInt32(4032).bigEndian, Array.init)
                + withUnsafeBytes(of: UInt32(3024).bigEndian, Array.init))
        let image = try ImageResponseSerializer.Image(data: Data(ftyp + box("meta", box("iprp", box("ipco", ispe)))))
        XCTAssertEqual(image.format, .heic)
        XCTAssertEqual(image.width, 4032)
        XCTAssertEqual(image.height, 3024)
        XCTAssertThrowsError(try ImageResponseSerializer.Image(data: Data(ftyp)))
    }

    func testSerializerRefusesImagesAboveThePixelLimit() throws {
        let data = try Fixtures.data("Images/red-40x30.png")
        let serializer = ImageResponseSerializer(maximumPixelCount: 1000)
        XCTAssertThrowsError(
            try serializer.serialize(request: nil, response: Fixtures.response(), data: data, error: nil)
        ) { error in
            guard
                case .responseSerializationFailed(.imageSerializationFailed(.pixelCountExceedsLimit(40, 30, 1000))) =
                    error.asAFError
            else {
                return XCTFail("\(error)")
            }
        }
        XCTAssertEqual(
            try ImageResponseSerializer(maximumPixelCount: 1200).serialize(
                request: nil, response: Fixtures.response(), data: data, error: nil
            ).pixelCount, 1200)
    }

    func testDefaultAcceptableTypesCoverEveryFormatRead() {
        for format in ImageResponseSerializer.Image.Format.allCases {
            XCTAssertTrue(
                ImageResponseSerializer.defaultAcceptableContentTypes.contains(format.mimeTypes[0]), format.rawValue)
        }
    }
}

final class ImageResponseSerializerEndToEndTests: ServerTestCase {
    func testServedImagesAreRead() async throws {
        for (path, format) in [
            ("/image/png", ImageResponseSerializer.Image.Format.png), ("/image/jpeg", .jpeg), ("/image/gif", .gif),
            ("/image/webp", .webp),
        ] {
            let image = try await session.request(url(path)).serializingImage().value
            XCTAssertEqual(image.format, format, path)
            XCTAssertGreaterThan(image.width, 0)
        }
    }

    func testImageHandlerRefusesHTMLWithTheDefaultContentTypes() async throws {
        let serializer = ImageResponseSerializer(
            acceptableContentTypes: ImageResponseSerializer.defaultAcceptableContentTypes)
        let response = await session.request(url("/html")).serializingResponse(using: serializer).response
        XCTAssertEqual(response.error?.responseContentType, "text/html")
        XCTAssertNotNil(response.data)
        let handled: AFDataResponse<ImageResponseSerializer.Image> = await withCheckedContinuation { continuation in
            session.request(url("/image/png")).responseImage(queue: .global()) { continuation.resume(returning: $0) }
        }
        XCTAssertEqual(handled.value?.format, .png)
    }
}
