import ArgumentParser
import Bluebonnet
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension RequestCommand {
    /// `--download`/`-o`/`--continue`: the body goes to a file as it arrives (never whole in memory), the head and a
    /// progress bar to standard error, as httpie does.
    ///
    /// Nothing of the user's is ever lost: the body is written to a file beside the target and only a complete 2xx
    /// body replaces an existing file (renamed over it); a resumed (`206`) body is appended to the partial file,
    /// also when it is cut again, so repeated `--continue` converges; an error status writes and removes nothing; a
    /// complete file (`416` to `--continue`) is kept.
    func downloadBody(
        _ urlRequest: URLRequest, on session: Session, credential: URLCredential?, file: String?,
        printer: Output
    ) async throws {
        var urlRequest = urlRequest
        let explicitURL = file.map { URL(fileURLWithPath: ($0 as NSString).expandingTildeInPath) }
        let existing = explicitURL.flatMap {
            (try? FileManager.default.attributesOfItem(atPath: $0.path)[.size] as? NSNumber)?.int64Value
        }
        var offset: Int64 = 0
        if resume, let existing, existing > 0 {
            offset = existing
            urlRequest.setValue("bytes=\(existing)-", forHTTPHeaderField: "Range")
            // A range counts bytes of the body as sent: ask for it unencoded, so the bytes are the file's.
            urlRequest.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        }
        let request = session.streamRequest(urlRequest)
        if let credential { request.authenticate(with: credential) }
        let bar = quiet > 0 ? nil : ProgressBar(label: "Downloading")
        var standardError = FileHandle.standardError
        let started = Date()
        var part: PartFile?
        var plan: DownloadPlan?
        var received: Int64 = 0
        var failure: AFError?
        var response: HTTPURLResponse?
        for await event in request.streamTask().streamingData() {
            switch event.event {
            case let .stream(.success(chunk)):
                if plan == nil, let head = request.response {
                    response = head
                    plan = DownloadPlan(response: head, offset: offset, explicitURL: explicitURL)
                    if case .save = plan {} else { request.cancel() }
                }
                guard case let .save(target, appending)? = plan else { continue }
                do {
                    if part == nil { part = try PartFile(beside: target) }
                    try part?.write(chunk)
                } catch {
                    request.cancel()
                    part?.discard()
                    print(
                        "bonnet: error: cannot write beside \(target.path): \(error.localizedDescription); nothing saved",
                        to: &standardError)
                    throw ExitCode(1)
                }
                received += Int64(chunk.count)
                let expected = request.response?.expectedContentLength ?? -1
                bar?.update(
                    completed: received + (appending ? offset : 0),
                    total: expected < 0 ? -1 : expected + (appending ? offset : 0))
            case let .complete(completion):
                response = response ?? completion.response
                if plan == nil, let head = response {
                    plan = DownloadPlan(response: head, offset: offset, explicitURL: explicitURL)
                }
                if let error = completion.error, !(error.isExplicitlyCancelledError && plan?.refusesBody == true) {
                    failure = error
                }
            }
        }
        bar?.finish()
        if quiet == 0, let http = response {
            print(
                printer.statusLine(http, protocolName: request.metrics?.transactionMetrics.last?.networkProtocolName),
                to: &standardError)
            print(printer.headers(http) + "\n", to: &standardError)
        }
        switch plan {
        case nil:
            Self.fail(failure ?? AFError.explicitlyCancelled)
        case .complete?:
            if quiet == 0 {
                print("Nothing left to download: \(explicitURL?.path ?? "the file") is complete.", to: &standardError)
            }
        case let .refuse(status)?:
            print(
                "bonnet: error: \(status) \(HTTPURLResponse.localizedString(forStatusCode: status)); nothing saved",
                to: &standardError)
            throw ExitCode(Int32(status / 100))
        case let .mismatch(contentRange)?:
            print(
                "bonnet: error: the server's Content-Range (\(contentRange ?? "none")) does not continue the \(offset)-byte file; "
                    + "nothing appended", to: &standardError)
            throw ExitCode(1)
        case let .save(target, appending)?:
            let written = part ?? (try? PartFile(beside: target))
            do {
                if appending {
                    // What arrived continues the file, whole or cut: keep it, so the next --continue starts after it.
                    if received > 0, let written { try written.append(to: target) } else { written?.discard() }
                } else if failure == nil || !FileManager.default.fileExists(atPath: target.path) || existing == 0 {
                    // A whole body replaces the file in one rename; a cut one is kept only where it loses nothing.
                    try written?.replace(target)
                } else {
                    written?.discard()
                    if quiet < 2 {
                        print(
                            "bonnet: \(target.path) was left as it was: the download was cut short.", to: &standardError
                        )
                    }
                }
            } catch {
                written?.discard()
                print("bonnet: error: \(error.localizedDescription)", to: &standardError)
                throw ExitCode(1)
            }
            if let failure {
                if received > 0, FileManager.default.fileExists(atPath: target.path),
                    appending || existing == nil || existing == 0
                {
                    print(
                        "Kept the \(ProgressBar.size(received)) received in \(target.path): resume with --continue.",
                        to: &standardError)
                }
                Self.fail(failure)
            }
            guard quiet == 0 else { return }
            let seconds = max(Date().timeIntervalSince(started), 0.001)
            print(
                "Done. \(ProgressBar.size(received)) in \(String(format: "%.2f", seconds)) s "
                    + "(\(ProgressBar.size(Int64(Double(received) / seconds)))/s): \(target.path)", to: &standardError)
        }
    }

    /// What a download's response head says to do with its body.
    enum DownloadPlan {
        /// Write it to `target`: appended to the partial file (a `206` that continues it), or replacing it.
        case save(URL, appending: Bool)
        /// `--continue` of a file that is already whole: the server answered `416`.
        case complete
        /// An error status: nothing is written or removed.
        case refuse(Int)
        /// A `206` that does not start where the partial file ends.
        case mismatch(String?)

        init(response: HTTPURLResponse, offset: Int64, explicitURL: URL?) {
            let status = response.statusCode
            if offset > 0, status == 416 {
                self = .complete
                return
            }
            guard (200..<300).contains(status) else {
                self = .refuse(status)
                return
            }
            let target =
                explicitURL
                ?? RequestCommand.unusedFile(
                    named: RequestCommand.suggestedName(for: response),
                    in: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
            if status == 206 {
                let contentRange = response.value(forHTTPHeaderField: "Content-Range")
                guard offset > 0, RequestCommand.firstByte(ofContentRange: contentRange) == offset else {
                    self = .mismatch(contentRange)
                    return
                }
                self = .save(target, appending: true)
                return
            }
            self = .save(target, appending: false)
        }

        /// Whether the body is not to be read at all.
        var refusesBody: Bool {
            if case .save = self { return false }
            return true
        }
    }

    /// The name a download without `-o` is saved under: the server's suggestion (sanitised), else the URL's last
    /// component, else `index`, with an extension from the content type when it has none.
    static func suggestedName(for response: HTTPURLResponse) -> String {
        let suggested = DownloadRequest.suggestedDownloadDestination(for: .cachesDirectory)(
            URL(fileURLWithPath: "/index"), response)
        var name = suggested.destinationURL.lastPathComponent
        // `URL.path` drops a trailing slash: read the path as written.
        let path =
            response.url.flatMap { URLComponents(url: $0, resolvingAgainstBaseURL: true)?.percentEncodedPath } ?? ""
        if path.hasSuffix("/"), response.value(forHTTPHeaderField: "Content-Disposition") == nil { name = "index" }
        if (name as NSString).pathExtension.isEmpty, let type = response.mimeType,
            let ext = extensionsByMIMEType[type.lowercased()]
        {
            name += "." + ext
        }
        return name
    }

    /// Extensions for the content types downloads most often carry.
    static let extensionsByMIMEType = [
        "text/html": "html", "application/json": "json", "text/plain": "txt", "application/xml": "xml",
        "text/xml": "xml",
        "image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp", "image/svg+xml": "svg",
        "application/pdf": "pdf", "application/zip": "zip", "application/gzip": "gz", "text/css": "css",
        "text/csv": "csv",
        "application/javascript": "js", "text/javascript": "js", "application/octet-stream": "bin",
    ]

    /// The first byte of `bytes first-last/length`.
    static func firstByte(ofContentRange value: String?) -> Int64? {
        guard let spec = value?.trimmingCharacters(in: .whitespaces), spec.lowercased().hasPrefix("bytes "),
            let dash = spec.firstIndex(of: "-")
        else { return nil }
        return Int64(spec[spec.index(spec.startIndex, offsetBy: 6)..<dash].trimmingCharacters(in: .whitespaces))
    }

    /// `name`, or `name-1`, `name-2`, ... : the first that does not exist in `directory` (httpie never overwrites).
    static func unusedFile(named name: String, in directory: URL) -> URL {
        let candidate = directory.appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: candidate.path) else { return candidate }
        var index = 1
        while FileManager.default.fileExists(atPath: directory.appendingPathComponent("\(name)-\(index)").path) {
            index += 1
        }
        return directory.appendingPathComponent("\(name)-\(index)")
    }

    /// `--stream`: the head, then the body as it arrives, flushed piece by piece (Server-Sent Events included).
    func streamBody(
        _ urlRequest: URLRequest, on session: Session, credential: URLCredential?, parts: Set<Character>,
        printer: Output
    ) async throws {
        let request = session.streamRequest(urlRequest)
        if let credential { request.authenticate(with: credential) }
        var printedHead = false
        func printHead() {
            guard !printedHead, let http = request.response else { return }
            printedHead = true
            if parts.contains("h") {
                print(
                    printer.statusLine(
                        http, protocolName: request.metrics?.transactionMetrics.last?.networkProtocolName))
                print(printer.headers(http) + (parts.contains("b") ? "\n" : ""))
            }
        }
        // Piped, the bytes go out exactly as they came; on a terminal, as text with a character split across two
        // chunks kept whole and control characters shown escaped.
        var pending = Data()
        for await event in request.streamTask().streamingData() {
            switch event.event {
            case let .stream(.success(chunk)):
                printHead()
                guard parts.contains("b") else { continue }
                if !printer.toTerminal {
                    StandardOutput.write(chunk)
                    continue
                }
                pending.append(chunk)
                let keep = Self.incompleteUTF8Suffix(pending)
                print(printer.sanitized(String(decoding: pending.dropLast(keep), as: UTF8.self)), terminator: "")
                pending = Data(pending.suffix(keep))
                fflush(nil)
            case let .complete(completion):
                printHead()
                if !pending.isEmpty {
                    print(printer.sanitized(String(decoding: pending, as: UTF8.self)), terminator: "")
                }
                if let error = completion.error { Self.fail(error) }
                if checkStatus, let status = completion.response?.statusCode, status >= 300 {
                    throw ExitCode(Int32(status / 100))
                }
            }
        }
    }

    /// How many bytes at the end of `bytes` begin a UTF-8 sequence the next chunk completes (at most 3).
    static func incompleteUTF8Suffix(_ bytes: Data) -> Int {
        var count = 0
        for byte in bytes.reversed() {
            count += 1
            if byte & 0xC0 == 0x80 {
                if count == 4 { return 0 }
                continue
            }
            let needed = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
            return needed > count ? count : 0
        }
        return 0
    }
}
