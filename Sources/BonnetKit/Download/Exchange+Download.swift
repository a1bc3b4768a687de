import Bluebonnet
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Exchange {
    /// `--download`/`-o`/`--continue`: the body goes to a file as it arrives (never whole in memory), the head and a
    /// progress bar to standard error, as httpie does.
    ///
    /// Nothing of the user's is ever lost (`DownloadFile`): a new file is written in place, a regular file is replaced
    /// only by a whole 2xx body (renamed over it, keeping its mode), a FIFO or a device is written through; a resumed
    /// (`206`) body is appended to the partial file as it arrives, so repeated `--continue` converges; an error status
    /// writes and removes nothing; a complete file (`416` to `--continue`) is kept. Ctrl-C and `SIGTERM` end the
    /// download as a cut connection does, with what arrived where `--continue` finds it, and no file left behind.
    func download() async throws {
        var urlRequest = plan.urlRequest
        let quiet = plan.options.printing.quiet
        var explicitTarget: DownloadTarget?
        // httpie's rule: `-o -`, or `--download` without `-o` while standard output is not a terminal, writes the
        // body to standard output (`bonnet -d URL | tar x`), the head and progress still on standard error.
        let output = plan.options.download.output
        let toStandardOutput = output == "-" || output == nil && !console.outputIsTerminal
        if toStandardOutput, plan.options.download.resume {
            throw CommandExit(status: 1, message: "--continue appends to a file, and standard output is not one")
        }
        if !toStandardOutput, let output {
            do {
                explicitTarget = try DownloadTarget.inspect(console.file(output))
            } catch {
                throw CommandExit(status: 1, message: error.message)
            }
        }
        var offset: Int64 = 0
        if plan.options.download.resume, let explicitTarget {
            if case let .special(url, kind) = explicitTarget {
                throw CommandExit(
                    status: 1, message: "--continue appends to a regular file, and \(url.path) is \(kind)")
            }
            if explicitTarget.size > 0 {
                offset = explicitTarget.size
                urlRequest.setValue("bytes=\(offset)-", forHTTPHeaderField: "Range")
                // A range counts bytes of the body as sent: ask for it unencoded, so the bytes are the file's.
                urlRequest.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
            }
        }
        let request = session.streamRequest(urlRequest)
        if let credential = plan.challengeCredential { request.authenticate(with: credential) }
        let bar = quiet > 0 ? nil : ProgressBar(label: "Downloading", console: console)
        let printer = plan.printer
        let directory = console.directory
        let started = Date()
        var file: DownloadFile?
        var piped: Int64 = 0
        var decision: DownloadPlan?
        var failure: AFError?
        var response: HTTPURLResponse?
        try await console.interruptions.handling({ _ in request.cancel() }) {
            for await event in request.streamTask().streamingData() {
                switch event.event {
                case let .stream(.success(chunk)):
                    if decision == nil, let head = request.response {
                        response = head
                        decision = DownloadPlan(
                            response: head, offset: offset, explicitTarget: explicitTarget, directory: directory)
                        if case .save = decision {} else { request.cancel() }
                    }
                    guard case let .save(target, appending)? = decision else { continue }
                    if toStandardOutput {
                        do {
                            try console.output.write(chunk)
                        } catch {
                            request.cancel()
                            throw error
                        }
                        piped += Int64(chunk.count)
                        let expected = request.response?.expectedContentLength ?? -1
                        bar?.update(completed: piped, total: expected)
                        continue
                    }
                    let sink = file ?? DownloadFile(target: target, appending: appending)
                    file = sink
                    do {
                        try sink.write(chunk)
                    } catch {
                        request.cancel()
                        _ = sink.abandon()
                        let reason = (error as? DownloadTarget.Refusal)?.message ?? error.localizedDescription
                        throw CommandExit(status: 1, message: "cannot write \(target.url.path): \(reason)")
                    }
                    let expected = request.response?.expectedContentLength ?? -1
                    bar?.update(
                        completed: sink.written + (appending ? offset : 0),
                        total: expected < 0 ? -1 : expected + (appending ? offset : 0))
                case let .complete(completion):
                    response = response ?? completion.response
                    if decision == nil, let head = response {
                        decision = DownloadPlan(
                            response: head, offset: offset, explicitTarget: explicitTarget, directory: directory)
                    }
                    let refused = decision?.refusesBody == true
                    if let error = completion.error, !(error.isExplicitlyCancelledError && refused) {
                        failure = error
                    }
                }
            }
        }
        bar?.finish()
        if let sent = request.request {
            // `-v`: the request as sent, on standard error with the head, as the body has the file.
            let errors = Console(
                output: console.errors, errors: console.errors, input: console.input,
                outputIsTerminal: console.errorsIsTerminal, errorsIsTerminal: console.errorsIsTerminal,
                environment: console.environment, directory: console.directory)
            try? ExchangePrinter(plan: plan, console: errors).printSentRequest(
                sent, parts: plan.parts, protocolName: nil, exact: false)
        }
        if quiet == 0, let http = response {
            try? console.errors.write(
                line: printer.statusLine(
                    http, protocolName: request.taskMetrics?.transactionMetrics.last?.networkProtocolName))
            try? console.errors.write(line: printer.headers(http) + "\n")
        }
        let interruption = failure == nil ? nil : console.interruptions.received
        switch decision {
        case nil:
            if let interruption { throw Self.interrupted(interruption, saying: "nothing saved") }
            throw CommandExit.failure(failure ?? AFError.explicitlyCancelled)
        case .complete?:
            if quiet == 0 {
                try? console.errors.write(
                    line: "Nothing left to download: \(explicitTarget?.url.path ?? "the file") is complete.")
            }
        case let .refuse(status)?:
            throw CommandExit(
                status: CommandExit.statusClass(status) ?? 1,
                message: "\(status) \(HTTPURLResponse.localizedString(forStatusCode: status)); nothing saved")
        case let .mismatch(contentRange)?:
            throw CommandExit(
                status: 1,
                message:
                    "the server's Content-Range (\(contentRange ?? "none")) does not continue the \(offset)-byte file; "
                    + "nothing appended")
        case .save? where toStandardOutput:
            if let failure {
                if let interruption { throw Self.interrupted(interruption, saying: "the output was cut short") }
                throw CommandExit.failure(failure)
            }
            guard quiet == 0 else { return }
            let seconds = max(Date().timeIntervalSince(started), 0.001)
            try? console.errors.write(
                line: "Done. \(ProgressBar.size(piped)) in \(String(format: "%.2f", seconds)) s "
                    + "(\(ProgressBar.size(Int64(Double(piped) / seconds)))/s): written to standard output")
        case let .save(target, appending)?:
            let sink = file ?? DownloadFile(target: target, appending: appending)
            guard let failure else {
                do {
                    try sink.commit()
                } catch {
                    _ = sink.abandon()
                    let reason = (error as? DownloadTarget.Refusal)?.message ?? error.localizedDescription
                    throw CommandExit(status: 1, message: reason)
                }
                guard quiet == 0 else { return }
                let seconds = max(Date().timeIntervalSince(started), 0.001)
                try? console.errors.write(
                    line: "Done. \(ProgressBar.size(sink.written)) in \(String(format: "%.2f", seconds)) s "
                        + "(\(ProgressBar.size(Int64(Double(sink.written) / seconds)))/s): \(target.url.path)")
                return
            }
            // Cut short or interrupted: what arrived is kept where --continue finds it, unless that would lose the
            // user's own file.
            let kept = sink.abandon()
            let outcome: String
            if kept {
                outcome =
                    "kept the \(ProgressBar.size(sink.written)) received in \(target.url.path): resume with --continue"
            } else if case .regular = target, sink.written > 0, !appending {
                outcome = "\(target.url.path) was left as it was: the download was cut short"
            } else {
                outcome = "nothing saved"
            }
            if let interruption { throw Self.interrupted(interruption, saying: outcome) }
            if kept {
                try? console.errors.write(line: outcome.prefix(1).uppercased() + outcome.dropFirst() + ".")
            } else if quiet < 2, outcome != "nothing saved" {
                console.warn(outcome + ".")
            }
            throw CommandExit.failure(failure)
        }
    }

    /// How a download Ctrl-C or `SIGTERM` ended says so: the status of a process the signal ended, and what became
    /// of the file.
    static func interrupted(_ number: Int32, saying outcome: String) -> CommandExit {
        CommandExit(status: Interruptions.status(of: number), message: "interrupted; \(outcome)")
    }

    /// What a download's response head says to do with its body.
    enum DownloadPlan {
        /// Write it to `target`: appended to the partial file (a `206` that continues it), or replacing it.
        case save(DownloadTarget, appending: Bool)
        /// `--continue` of a file that is already whole: the server answered `416`.
        case complete
        /// An error status: nothing is written or removed.
        case refuse(Int)
        /// A `206` that does not start where the partial file ends.
        case mismatch(String?)

        init(response: HTTPURLResponse, offset: Int64, explicitTarget: DownloadTarget?, directory: URL) {
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
                explicitTarget
                ?? .new(Exchange.unusedFile(named: Exchange.suggestedName(for: response), in: directory))
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

    /// `name`, or `name-1`, `name-2`, ... : the first that does not exist in `directory` (httpie never overwrites). A
    /// name too long for the file system is shortened on a character boundary, keeping its extension, with room left
    /// for the number.
    static func unusedFile(named fullName: String, in directory: URL) -> URL {
        let name = FileNames.fitting(fullName, within: FileNames.maximumLength - 8)
        let candidate = directory.appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: candidate.path) else { return candidate }
        var index = 1
        while FileManager.default.fileExists(atPath: directory.appendingPathComponent("\(name)-\(index)").path) {
            index += 1
        }
        return directory.appendingPathComponent("\(name)-\(index)")
    }
}
