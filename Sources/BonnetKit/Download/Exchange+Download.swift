import Bluebonnet
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Exchange {
    /// `--download`/`-o`/`--continue`: the body goes to a file as it arrives (never whole in memory), the head and a
    /// progress bar to standard error, as httpie does.
    ///
    /// Nothing of the user's is ever lost: the body is written to a file beside the target and only a complete 2xx
    /// body replaces an existing file (renamed over it); a resumed (`206`) body is appended to the partial file,
    /// also when it is cut again, so repeated `--continue` converges; an error status writes and removes nothing; a
    /// complete file (`416` to `--continue`) is kept.
    func download() async throws {
        var urlRequest = plan.urlRequest
        let quiet = plan.options.printing.quiet
        let explicitURL = plan.options.download.output.map(console.file)
        let existing = explicitURL.flatMap {
            (try? FileManager.default.attributesOfItem(atPath: $0.path)[.size] as? NSNumber)?.int64Value
        }
        var offset: Int64 = 0
        if plan.options.download.resume, let existing, existing > 0 {
            offset = existing
            urlRequest.setValue("bytes=\(existing)-", forHTTPHeaderField: "Range")
            // A range counts bytes of the body as sent: ask for it unencoded, so the bytes are the file's.
            urlRequest.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        }
        let request = session.streamRequest(urlRequest)
        if let credential = plan.challengeCredential { request.authenticate(with: credential) }
        let bar = quiet > 0 ? nil : ProgressBar(label: "Downloading", console: console)
        let printer = plan.printer
        let directory = console.directory
        let started = Date()
        var part: PartFile?
        var decision: DownloadPlan?
        var received: Int64 = 0
        var failure: AFError?
        var response: HTTPURLResponse?
        for await event in request.streamTask().streamingData() {
            switch event.event {
            case let .stream(.success(chunk)):
                if decision == nil, let head = request.response {
                    response = head
                    decision = DownloadPlan(
                        response: head, offset: offset, explicitURL: explicitURL, directory: directory)
                    if case .save = decision {} else { request.cancel() }
                }
                guard case let .save(target, appending)? = decision else { continue }
                do {
                    if part == nil { part = try PartFile(beside: target) }
                    try part?.write(chunk)
                } catch {
                    request.cancel()
                    part?.discard()
                    throw CommandExit(
                        status: 1,
                        message: "cannot write beside \(target.path): \(error.localizedDescription); nothing saved")
                }
                received += Int64(chunk.count)
                let expected = request.response?.expectedContentLength ?? -1
                bar?.update(
                    completed: received + (appending ? offset : 0),
                    total: expected < 0 ? -1 : expected + (appending ? offset : 0))
            case let .complete(completion):
                response = response ?? completion.response
                if decision == nil, let head = response {
                    decision = DownloadPlan(
                        response: head, offset: offset, explicitURL: explicitURL, directory: directory)
                }
                if let error = completion.error, !(error.isExplicitlyCancelledError && decision?.refusesBody == true) {
                    failure = error
                }
            }
        }
        bar?.finish()
        if quiet == 0, let http = response {
            try? console.errors.write(
                line: printer.statusLine(
                    http, protocolName: request.metrics?.transactionMetrics.last?.networkProtocolName))
            try? console.errors.write(line: printer.headers(http) + "\n")
        }
        switch decision {
        case nil:
            throw CommandExit.failure(failure ?? AFError.explicitlyCancelled)
        case .complete?:
            if quiet == 0 {
                try? console.errors.write(
                    line: "Nothing left to download: \(explicitURL?.path ?? "the file") is complete.")
            }
        case let .refuse(status)?:
            throw CommandExit(
                status: Int32(status / 100),
                message: "\(status) \(HTTPURLResponse.localizedString(forStatusCode: status)); nothing saved")
        case let .mismatch(contentRange)?:
            throw CommandExit(
                status: 1,
                message:
                    "the server's Content-Range (\(contentRange ?? "none")) does not continue the \(offset)-byte file; "
                    + "nothing appended")
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
                        console.warn("\(target.path) was left as it was: the download was cut short.")
                    }
                }
            } catch {
                written?.discard()
                throw CommandExit(status: 1, message: "\(error.localizedDescription)")
            }
            if let failure {
                if received > 0, FileManager.default.fileExists(atPath: target.path),
                    appending || existing == nil || existing == 0
                {
                    try? console.errors.write(
                        line:
                            "Kept the \(ProgressBar.size(received)) received in \(target.path): resume with --continue."
                    )
                }
                throw CommandExit.failure(failure)
            }
            guard quiet == 0 else { return }
            let seconds = max(Date().timeIntervalSince(started), 0.001)
            try? console.errors.write(
                line: "Done. \(ProgressBar.size(received)) in \(String(format: "%.2f", seconds)) s "
                    + "(\(ProgressBar.size(Int64(Double(received) / seconds)))/s): \(target.path)")
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

        init(response: HTTPURLResponse, offset: Int64, explicitURL: URL?, directory: URL) {
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
                ?? Exchange.unusedFile(named: Exchange.suggestedName(for: response), in: directory)
            if status == 206 {
                let contentRange = response.value(forHTTPHeaderField: "Content-Range")
                guard offset > 0, Exchange.firstByte(ofContentRange: contentRange) == offset else {
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
}
