/// The media type of a file, guessed from its extension the way browsers fill in a file upload's `Content-Type`.
enum MIMETypeTable {
    /// The type sent when the extension is unknown or missing.
    static let fallback = "application/octet-stream"

    /// The media type for a path extension (without the dot), case-insensitively; `fallback` when unknown.
    static func mimeType(forPathExtension pathExtension: String) -> String {
        types[pathExtension.lowercased()] ?? fallback
    }

    // The common registrations of IANA's media type list and the Apache/nginx `mime.types` files.
    private static let types: [String: String] = [
        // Text
        "txt": "text/plain", "text": "text/plain", "log": "text/plain", "conf": "text/plain", "ini": "text/plain",
        "html": "text/html", "htm": "text/html", "shtml": "text/html", "css": "text/css", "csv": "text/csv",
        "tsv": "text/tab-separated-values", "md": "text/markdown", "markdown": "text/markdown",
        "xml": "application/xml", "xsl": "application/xml", "xsd": "application/xml", "dtd": "application/xml-dtd",
        "rtf": "application/rtf", "ics": "text/calendar", "vcf": "text/vcard", "vtt": "text/vtt",
        "yaml": "application/yaml", "yml": "application/yaml", "toml": "application/toml",
        // Code and data
        "js": "text/javascript", "mjs": "text/javascript", "json": "application/json", "jsonld": "application/ld+json",
        "geojson": "application/geo+json", "map": "application/json", "wasm": "application/wasm",
        "plist": "application/x-plist", "swift": "text/x-swift", "c": "text/x-c", "h": "text/x-c",
        "py": "text/x-python", "sh": "application/x-sh", "sql": "application/sql",
        "atom": "application/atom+xml", "rss": "application/rss+xml", "xhtml": "application/xhtml+xml",
        // Images
        "png": "image/png", "apng": "image/apng", "jpg": "image/jpeg", "jpeg": "image/jpeg", "jpe": "image/jpeg",
        "gif": "image/gif", "webp": "image/webp", "bmp": "image/bmp", "tif": "image/tiff", "tiff": "image/tiff",
        "ico": "image/vnd.microsoft.icon", "cur": "image/x-icon", "svg": "image/svg+xml", "svgz": "image/svg+xml",
        "heic": "image/heic", "heif": "image/heif", "avif": "image/avif", "jxl": "image/jxl",
        "psd": "image/vnd.adobe.photoshop",
        // Audio
        "mp3": "audio/mpeg", "m4a": "audio/mp4", "aac": "audio/aac", "wav": "audio/wav", "ogg": "audio/ogg",
        "oga": "audio/ogg", "opus": "audio/opus", "flac": "audio/flac", "mid": "audio/midi", "midi": "audio/midi",
        "weba": "audio/webm", "aif": "audio/aiff", "aiff": "audio/aiff",
        // Video
        "mp4": "video/mp4", "m4v": "video/mp4", "mov": "video/quicktime", "webm": "video/webm", "ogv": "video/ogg",
        "avi": "video/x-msvideo", "mpeg": "video/mpeg", "mpg": "video/mpeg", "mkv": "video/x-matroska",
        "3gp": "video/3gpp", "ts": "video/mp2t", "flv": "video/x-flv", "wmv": "video/x-ms-wmv",
        // Fonts
        "woff": "font/woff", "woff2": "font/woff2", "ttf": "font/ttf", "otf": "font/otf",
        "eot": "application/vnd.ms-fontobject",
        // Documents
        "pdf": "application/pdf", "doc": "application/msword", "xls": "application/vnd.ms-excel",
        "ppt": "application/vnd.ms-powerpoint",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
        "pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
        "odt": "application/vnd.oasis.opendocument.text", "ods": "application/vnd.oasis.opendocument.spreadsheet",
        "odp": "application/vnd.oasis.opendocument.presentation", "epub": "application/epub+zip",
        "pages": "application/vnd.apple.pages", "numbers": "application/vnd.apple.numbers",
        "key": "application/vnd.apple.keynote",
        // Archives and binaries
        "zip": "application/zip", "gz": "application/gzip", "tgz": "application/gzip", "bz2": "application/x-bzip2",
        "xz": "application/x-xz", "zst": "application/zstd", "7z": "application/x-7z-compressed",
        "rar": "application/vnd.rar", "tar": "application/x-tar", "jar": "application/java-archive",
        "apk": "application/vnd.android.package-archive", "ipa": "application/octet-stream",
        "dmg": "application/x-apple-diskimage", "deb": "application/vnd.debian.binary-package",
        "rpm": "application/x-rpm", "iso": "application/x-iso9660-image", "bin": "application/octet-stream",
        "exe": "application/vnd.microsoft.portable-executable", "dll": "application/vnd.microsoft.portable-executable",
        "pem": "application/x-pem-file", "crt": "application/x-x509-ca-cert", "cer": "application/pkix-cert",
        "der": "application/x-x509-ca-cert", "p12": "application/x-pkcs12", "pfx": "application/x-pkcs12",
        "sqlite": "application/vnd.sqlite3", "db": "application/octet-stream",
    ]
}
