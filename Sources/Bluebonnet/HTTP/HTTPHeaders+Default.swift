import Foundation

/// The version of Bluebonnet, as it appears in the default `User-Agent`.
public let bluebonnetVersion = "0.1.0"

extension HTTPHeaders {
    /// The default set of `HTTPHeaders` used by Bluebonnet: `Accept-Encoding`, `Accept-Language` and `User-Agent`.
    public static let `default`: HTTPHeaders = [.defaultAcceptEncoding, .defaultAcceptLanguage, .defaultUserAgent]
}

extension HTTPHeader {
    /// The `Accept-Encoding` Bluebonnet sends: only what the transport really decodes, so a server never answers with
    /// an encoding that would reach the caller still compressed. Brotli first, as Apple's URLSession (and so Alamofire
    /// on Apple platforms) asks for it; then zstd, then gzip and deflate:
    /// `br;q=1.0, zstd;q=0.9, gzip;q=0.8, deflate;q=0.7`.
    public static let defaultAcceptEncoding: HTTPHeader = .acceptEncoding(
        ["br", "zstd", "gzip", "deflate"].qualityEncoded())

    /// The `Accept-Language` built from the process locale (`Locale.preferredLanguages`, else `LC_ALL`/`LANG`),
    /// at most six languages with descending quality.
    public static let defaultAcceptLanguage: HTTPHeader = .acceptLanguage(
        ProcessLocale.preferredLanguages().prefix(6).qualityEncoded()
    )

    /// The `User-Agent`, in Alamofire's layout: the executable and its version, its bundle identifier and build (each
    /// `Unknown` when the bundle does not say, as on Linux it usually does not), the OS, then `Bluebonnet/<version>`.
    ///
    /// Example: `bonnet/Unknown (Unknown; build:Unknown; Linux 6.1.0) Bluebonnet/0.1.0`.
    public static let defaultUserAgent: HTTPHeader = {
        let info = Bundle.main.infoDictionary
        let executable =
            (info?["CFBundleExecutable"] as? String)
            ?? CommandLine.arguments.first.map { URL(fileURLWithPath: $0).lastPathComponent }
            ?? ProcessInfo.processInfo.processName
        let version = info?["CFBundleShortVersionString"] as? String ?? "Unknown"
        let bundle = info?["CFBundleIdentifier"] as? String ?? "Unknown"
        let build = info?["CFBundleVersion"] as? String ?? "Unknown"
        let os = ProcessInfo.processInfo.operatingSystemVersion
        let osName: String
        #if os(Linux)
        osName = "Linux"
        #elseif os(macOS)
        osName = "macOS"
        #elseif os(Windows)
        osName = "Windows"
        #else
        osName = "Unknown"
        #endif
        let osVersion = "\(os.majorVersion).\(os.minorVersion).\(os.patchVersion)"
        return .userAgent(
            "\(executable)/\(version) (\(bundle); build:\(build); \(osName) \(osVersion)) Bluebonnet/\(bluebonnetVersion)"
        )
    }()
}

/// Reads the languages a process prefers from Foundation, or from the POSIX locale variables when Foundation
/// has none (as on a bare Linux container).
enum ProcessLocale {
    static func preferredLanguages(
        foundation: [String] = Locale.preferredLanguages,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) -> [String] {
        let fromFoundation = foundation.filter { !$0.isEmpty }
        if !fromFoundation.isEmpty { return fromFoundation }
        let variable = [environment["LC_ALL"], environment["LC_MESSAGES"], environment["LANG"]]
            .compactMap { $0 }
            .first { !$0.isEmpty }
        guard let raw = variable else { return ["en"] }
        // "de_DE.UTF-8@euro" -> "de-DE"; the C and POSIX locales mean no preference, which HTTP spells "en".
        let base = raw.split(separator: ".").first.map(String.init) ?? raw
        let tag = (base.split(separator: "@").first.map(String.init) ?? base).replacingOccurrences(of: "_", with: "-")
        if tag.isEmpty || tag == "C" || tag == "POSIX" { return ["en"] }
        return [tag]
    }
}

extension Collection where Element == String {
    /// Joins values with descending `q` weights: `"a;q=1.0, b;q=0.9"`.
    func qualityEncoded() -> String {
        enumerated().map { index, encoding in
            let quality = 1.0 - (Double(index) * 0.1)
            return "\(encoding);q=\(quality)"
        }.joined(separator: ", ")
    }
}
