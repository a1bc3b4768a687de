import Foundation

/// Walks the structure of each image format far enough to know its size, frame count and whether it is whole.
enum ImageHeaderReader {
    struct Header: Equatable {
        var format: ImageResponseSerializer.Image.Format
        var width: Int
        var height: Int
        var frameCount = 1
    }

    /// Raised internally when a read runs past the end of the data.
    struct OutOfBounds: Error {}

    static func read(_ data: Data) throws -> Header {
        let bytes = ByteReader(data)
        guard let format = sniff(bytes) else { throw failure(.unrecognizedFormat) }
        do {
            let header: Header
            switch format {
            case .png: header = try png(bytes)
            case .jpeg: header = try jpeg(bytes)
            case .gif: header = try gif(bytes)
            case .webp: header = try webp(bytes)
            case .bmp: header = try bmp(bytes)
            case .tiff: header = try tiff(bytes)
            case .ico: header = try ico(bytes)
            case .heic: header = try heic(bytes)
            }
            guard header.width > 0, header.height > 0 else { throw OutOfBounds() }
            return header
        } catch {
            throw failure(.truncated(format: format))
        }
    }

    static func failure(_ reason: AFError.ImageFailureReason) -> AFError {
        .responseSerializationFailed(reason: .imageSerializationFailed(reason: reason))
    }

    static func sniff(_ bytes: ByteReader) -> ImageResponseSerializer.Image.Format? {
        if bytes.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if bytes.starts(with: [0xFF, 0xD8, 0xFF]) { return .jpeg }
        if bytes.starts(with: Array("GIF87a".utf8)) || bytes.starts(with: Array("GIF89a".utf8)) { return .gif }
        if bytes.starts(with: Array("RIFF".utf8)), (try? bytes.ascii(8, 4)) == "WEBP" { return .webp }
        // "BM" alone is too weak a signature; the four reserved bytes after the file size are zero in real bitmaps.
        if bytes.starts(with: Array("BM".utf8)), (6..<10).allSatisfy({ (try? bytes.u8($0)) ?? 0 == 0 }) { return .bmp }
        if bytes.starts(with: [0x49, 0x49, 0x2A, 0x00]) || bytes.starts(with: [0x4D, 0x4D, 0x00, 0x2A]) {
            return .tiff
        }
        if bytes.starts(with: [0x00, 0x00, 0x01, 0x00]) { return .ico }
        if (try? bytes.ascii(4, 4)) == "ftyp", isHEIC(bytes) { return .heic }
        return nil
    }

    // MARK: PNG: chunks to IEND; APNG's acTL gives the frame count.

    static func png(_ bytes: ByteReader) throws -> Header {
        guard try bytes.ascii(12, 4) == "IHDR" else { throw OutOfBounds() }
        var header = Header(format: .png, width: Int(try bytes.u32be(16)), height: Int(try bytes.u32be(20)))
        var offset = 8
        while true {
            let length = Int(try bytes.u32be(offset))
            let type = try bytes.ascii(offset + 4, 4)
            try bytes.require(offset + 12 + length)
            if type == "acTL" { header.frameCount = max(1, Int(try bytes.u32be(offset + 8))) }
            if type == "IEND" { return header }
            offset += 12 + length
        }
    }

    // MARK: JPEG: markers to the start-of-frame, then the image must end with EOI.

    static func jpeg(_ bytes: ByteReader) throws -> Header {
        var offset = 2
        var header: Header?
        while header == nil {
            guard try bytes.u8(offset) == 0xFF else { throw OutOfBounds() }
            let marker = try bytes.u8(offset + 1)
            if marker == 0xFF { offset += 1; continue }
            if (0xD0...0xD7).contains(marker) || marker == 0x01 { offset += 2; continue }
            let length = Int(try bytes.u16be(offset + 2))
            let isStartOfFrame = (0xC0...0xCF).contains(marker) && ![0xC4, 0xC8, 0xCC].contains(marker)
            if isStartOfFrame {
                header = Header(
                    format: .jpeg, width: Int(try bytes.u16be(offset + 7)), height: Int(try bytes.u16be(offset + 5)))
            } else if marker == 0xDA || marker == 0xD9 {
                throw OutOfBounds()
            }
            offset += 2 + length
        }
        // Entropy-coded scans follow; a whole file ends with EOI (some encoders pad after it).
        var end = bytes.count
        while end > offset, try bytes.u8(end - 1) == 0x00 { end -= 1 }
        guard end >= 2, try bytes.u8(end - 2) == 0xFF, try bytes.u8(end - 1) == 0xD9 else { throw OutOfBounds() }
        return header!
    }

    // MARK: GIF: blocks to the trailer, counting image descriptors.

    static func gif(_ bytes: ByteReader) throws -> Header {
        var header = Header(
            format: .gif, width: Int(try bytes.u16le(6)), height: Int(try bytes.u16le(8)), frameCount: 0)
        let packed = try bytes.u8(10)
        var offset = 13 + (packed & 0x80 != 0 ? 3 << (Int(packed & 0x07) + 1) : 0)
        while true {
            switch try bytes.u8(offset) {
            case 0x2C:
                header.frameCount += 1
                let local = try bytes.u8(offset + 9)
                offset += 10 + (local & 0x80 != 0 ? 3 << (Int(local & 0x07) + 1) : 0)
                offset = try skipSubBlocks(bytes, from: offset + 1)
            case 0x21:
                offset = try skipSubBlocks(bytes, from: offset + 2)
            case 0x3B:
                header.frameCount = max(1, header.frameCount)
                return header
            default:
                throw OutOfBounds()
            }
        }
    }

    static func skipSubBlocks(_ bytes: ByteReader, from start: Int) throws -> Int {
        var offset = start
        while true {
            let size = Int(try bytes.u8(offset))
            offset += 1 + size
            if size == 0 { return offset }
        }
    }

    // MARK: WebP: the RIFF container must be whole; VP8, VP8L or VP8X gives the size.

    static func webp(_ bytes: ByteReader) throws -> Header {
        let riffEnd = 8 + Int(try bytes.u32le(4))
        try bytes.require(riffEnd)
        switch try bytes.ascii(12, 4) {
        case "VP8 ":
            guard try bytes.u8(23) == 0x9D, try bytes.u8(24) == 0x01, try bytes.u8(25) == 0x2A else {
                throw OutOfBounds()
            }
            return Header(
                format: .webp, width: Int(try bytes.u16le(26) & 0x3FFF), height: Int(try bytes.u16le(28) & 0x3FFF))
        case "VP8L":
            guard try bytes.u8(20) == 0x2F else { throw OutOfBounds() }
            let bits = try bytes.u32le(21)
            return Header(format: .webp, width: Int(bits & 0x3FFF) + 1, height: Int((bits >> 14) & 0x3FFF) + 1)
        case "VP8X":
            var header = Header(
                format: .webp, width: Int(try bytes.u24le(24)) + 1, height: Int(try bytes.u24le(27)) + 1)
            if try bytes.u8(20) & 0x02 != 0 {
                var frames = 0
                var offset = 12
                while offset + 8 <= riffEnd {
                    if try bytes.ascii(offset, 4) == "ANMF" { frames += 1 }
                    let size = Int(try bytes.u32le(offset + 4))
                    offset += 8 + size + (size & 1)
                }
                header.frameCount = max(1, frames)
            }
            return header
        default:
            throw OutOfBounds()
        }
    }

    // MARK: BMP: the declared file size must be present.

    static func bmp(_ bytes: ByteReader) throws -> Header {
        try bytes.require(Int(try bytes.u32le(2)))
        if try bytes.u32le(14) == 12 {
            return Header(format: .bmp, width: Int(try bytes.u16le(18)), height: Int(try bytes.u16le(20)))
        }
        let width = Int(Int32(bitPattern: try bytes.u32le(18)))
        let height = Int(Int32(bitPattern: try bytes.u32le(22)))
        return Header(format: .bmp, width: abs(width), height: abs(height))
    }

    // MARK: TIFF: every IFD in the chain, whose strips must lie inside the data.

    static func tiff(_ bytes: ByteReader) throws -> Header {
        let bigEndian = try bytes.u8(0) == 0x4D
        func u16(_ at: Int) throws -> Int { Int(bigEndian ? try bytes.u16be(at) : try bytes.u16le(at)) }
        func u32(_ at: Int) throws -> Int { Int(bigEndian ? try bytes.u32be(at) : try bytes.u32le(at)) }
        func value(_ entry: Int, index: Int = 0) throws -> Int {
            let type = try u16(entry + 2)
            let count = try u32(entry + 4)
            let size = type == 3 ? 2 : 4
            let base = count * size > 4 ? try u32(entry + 8) : entry + 8
            return type == 3 ? try u16(base + index * size) : try u32(base + index * size)
        }
        var header: Header?
        var frames = 0
        var ifd = try u32(4)
        var visited = Set<Int>()
        while ifd != 0, visited.insert(ifd).inserted {
            let entries = try u16(ifd)
            var width = 0, height = 0
            var offsets: Int?, counts: Int?
            for index in 0..<entries {
                let entry = ifd + 2 + index * 12
                switch try u16(entry) {
                case 256: width = try value(entry)
                case 257: height = try value(entry)
                case 273: offsets = entry
                case 279: counts = entry
                default: break
                }
            }
            if let offsets, let counts {
                for strip in 0..<(try u32(offsets + 4)) {
                    try bytes.require(try value(offsets, index: strip) + value(counts, index: strip))
                }
            }
            if header == nil { header = Header(format: .tiff, width: width, height: height) }
            frames += 1
            ifd = try u32(ifd + 2 + entries * 12)
        }
        guard var result = header else { throw OutOfBounds() }
        result.frameCount = frames
        return result
    }

    // MARK: ICO: every image the directory names must be present; the largest gives the size.

    static func ico(_ bytes: ByteReader) throws -> Header {
        let count = Int(try bytes.u16le(4))
        guard count > 0 else { throw OutOfBounds() }
        var best = Header(format: .ico, width: 0, height: 0)
        for index in 0..<count {
            let entry = 6 + index * 16
            let width = Int(try bytes.u8(entry)), height = Int(try bytes.u8(entry + 1))
            try bytes.require(Int(try bytes.u32le(entry + 12)) + Int(try bytes.u32le(entry + 8)))
            let size = (width == 0 ? 256 : width, height == 0 ? 256 : height)
            if size.0 * size.1 > best.width * best.height { (best.width, best.height) = size }
        }
        return best
    }

    // MARK: HEIC: an ftyp naming HEVC, sized by the first image spatial extents (`ispe`) property.

    static let heicBrands: Set<String> = ["heic", "heix", "hevc", "hevx", "heim", "heis"]

    static func isHEIC(_ bytes: ByteReader) -> Bool {
        guard let size = try? Int(bytes.u32be(0)), let major = try? bytes.ascii(8, 4) else { return false }
        if heicBrands.contains(major) { return true }
        guard major == "mif1" || major == "msf1" else { return false }
        return stride(from: 16, to: min(size, bytes.count) - 3, by: 4).contains {
            (try? bytes.ascii($0, 4)).map(heicBrands.contains) == true
        }
    }

    static func heic(_ bytes: ByteReader) throws -> Header {
        guard let ispe = bytes.firstIndex(of: Array("ispe".utf8)) else { throw OutOfBounds() }
        return Header(format: .heic, width: Int(try bytes.u32be(ispe + 8)), height: Int(try bytes.u32be(ispe + 12)))
    }
}

/// Bounds-checked reads from `Data` at offsets from its start, without copying it.
struct ByteReader {
    let data: Data
    init(_ data: Data) { self.data = data }

    var count: Int { data.count }

    func require(_ end: Int) throws {
        guard end >= 0, end <= data.count else { throw ImageHeaderReader.OutOfBounds() }
    }

    func u8(_ offset: Int) throws -> UInt8 {
        guard offset >= 0, offset < data.count else { throw ImageHeaderReader.OutOfBounds() }
        return data[data.startIndex + offset]
    }

    func u16be(_ offset: Int) throws -> UInt16 { UInt16(try u8(offset)) << 8 | UInt16(try u8(offset + 1)) }
    func u16le(_ offset: Int) throws -> UInt16 { UInt16(try u8(offset + 1)) << 8 | UInt16(try u8(offset)) }
    func u24le(_ offset: Int) throws -> UInt32 { UInt32(try u16le(offset)) | UInt32(try u8(offset + 2)) << 16 }
    func u32be(_ offset: Int) throws -> UInt32 { UInt32(try u16be(offset)) << 16 | UInt32(try u16be(offset + 2)) }
    func u32le(_ offset: Int) throws -> UInt32 { UInt32(try u16le(offset + 2)) << 16 | UInt32(try u16le(offset)) }

    func ascii(_ offset: Int, _ length: Int) throws -> String {
        try require(offset + length)
        let start = data.startIndex + offset
        return String(decoding: data[start..<start + length], as: UTF8.self)
    }

    func starts(with prefix: [UInt8]) -> Bool {
        data.starts(with: prefix)
    }

    func firstIndex(of pattern: [UInt8]) -> Int? {
        data.range(of: Data(pattern)).map { $0.lowerBound - data.startIndex }
    }
}
