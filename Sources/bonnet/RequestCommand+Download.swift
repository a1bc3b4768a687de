import ArgumentParser
import Bluebonnet
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension RequestCommand {
    /// `--download`/`-o`/`--continue`: the body goes to a file as it arrives (never whole in memory), the head and a
    /// progress bar to standard error, as httpie does.
    func downloadBody(_ urlRequest: URLRequest, on session: Session, credential: URLCredential?, file: String?,
                      printer: Output) async throws {
        var urlRequest = urlRequest
        let explicitURL = file.map { URL(fileURLWithPath: ($0 as NSString).expandingTildeInPath) }
        var offset: Int64 = 0
        if resume, let explicitURL,
           let size = (try? FileManager.default.attributesOfItem(atPath: explicitURL.path)[.size] as? NSNumber)?.int64Value, size > 0 {
            offset = size
            urlRequest.setValue("bytes=\(size)-", forHTTPHeaderField: "Range")
            // A range counts bytes of the body as sent: ask for it unencoded, so the bytes are the file's.
            urlRequest.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
        }
        let partURL = explicitURL.map { $0.deletingLastPathComponent().appendingPathComponent(".\($0.lastPathComponent).bonnet-\(UUID().uuidString)") }
        let directory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath)
        let resumeOffset = offset
        let destination: DownloadRequest.Destination = { temporaryURL, response in
            if let explicitURL, let partURL {
                // A resumed download lands beside the file, to be appended; anything else replaces it.
                return (resumeOffset > 0 && response.statusCode == 206 ? partURL : explicitURL, [.removePreviousFile, .createIntermediateDirectories])
            }
            let name = DownloadRequest.suggestedDownloadDestination(for: .cachesDirectory)(temporaryURL, response).destinationURL.lastPathComponent
            return (Self.unusedFile(named: name, in: directory), [])
        }
        let request = session.download(urlRequest, to: destination)
        if let credential { request.authenticate(with: credential) }
        let bar = ProgressBar(label: "Downloading")
        let barQueue = DispatchQueue(label: "bonnet.download.progress")
        request.downloadProgress(queue: barQueue) { progress in
            let total = progress.totalUnitCount < 0 ? -1 : progress.totalUnitCount + resumeOffset
            bar?.update(completed: progress.completedUnitCount + resumeOffset, total: total)
        }
        let started = Date()
        let response = await request.serializingDownloadedFileURL().response
        barQueue.sync { bar?.finish() }
        var standardError = FileHandle.standardError
        if let http = response.response {
            print(printer.statusLine(http, protocolName: response.metrics?.transactionMetrics.last?.networkProtocolName), to: &standardError)
            print(printer.headers(http) + "\n", to: &standardError)
        }
        if let error = response.error {
            if let explicitURL, offset == 0, let kept = Self.keepPartial(response.resumeData, at: explicitURL) {
                print("Kept the \(ProgressBar.size(kept)) received in \(explicitURL.path): resume with --continue.", to: &standardError)
            }
            Self.fail(error)
        }
        guard let http = response.response, let fileURL = response.value else { Self.fail(AFError.explicitlyCancelled) }
        if offset > 0, http.statusCode == 416 {
            try? FileManager.default.removeItem(at: fileURL)
            print("Nothing left to download: \(explicitURL?.path ?? "") is complete.", to: &standardError)
            return
        }
        guard (200..<300).contains(http.statusCode) else {
            try? FileManager.default.removeItem(at: fileURL)
            print("bonnet: error: \(http.statusCode) \(HTTPURLResponse.localizedString(forStatusCode: http.statusCode)); nothing saved", to: &standardError)
            throw ExitCode(checkStatus ? Int32(http.statusCode / 100) : 1)
        }
        var savedURL = fileURL
        if let explicitURL, fileURL != explicitURL {
            try Self.append(fileURL, to: explicitURL, expectingOffset: offset, contentRange: http.value(forHTTPHeaderField: "Content-Range"))
            savedURL = explicitURL
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: savedURL.path)[.size] as? NSNumber)?.int64Value ?? 0
        let seconds = max(Date().timeIntervalSince(started), 0.001)
        let received = size - (savedURL == explicitURL && offset > 0 && http.statusCode == 206 ? offset : 0)
        print("Done. \(ProgressBar.size(received)) in \(String(format: "%.2f", seconds)) s (\(ProgressBar.size(Int64(Double(received) / seconds)))/s): \(savedURL.path)",
              to: &standardError)
    }

    /// Moves the partial file a cut-short download left (named in its resume data) to `file`, so `--continue` can
    /// resume it; its length, or `nil` when there is none.
    static func keepPartial(_ resumeData: Data?, at file: URL) -> Int64? {
        guard let resumeData,
              let object = try? JSONSerialization.jsonObject(with: resumeData) as? [String: Any],
              let path = object["file"] as? String, let bytes = object["bytes"] as? Int, bytes > 0 else { return nil }
        try? FileManager.default.removeItem(at: file)
        guard (try? FileManager.default.moveItem(at: URL(fileURLWithPath: path), to: file)) != nil else { return nil }
        return Int64(bytes)
    }

    /// `name`, or `name-1`, `name-2`, ... : the first that does not exist in `directory` (httpie never overwrites).
    static func unusedFile(named name: String, in directory: URL) -> URL {
        let candidate = directory.appendingPathComponent(name)
        guard FileManager.default.fileExists(atPath: candidate.path) else { return candidate }
        var index = 1
        while FileManager.default.fileExists(atPath: directory.appendingPathComponent("\(name)-\(index)").path) { index += 1 }
        return directory.appendingPathComponent("\(name)-\(index)")
    }

    /// Appends the part a `206` brought to the partial file, in pieces, after checking it starts where the file ends.
    static func append(_ part: URL, to file: URL, expectingOffset offset: Int64, contentRange: String?) throws {
        defer { try? FileManager.default.removeItem(at: part) }
        let start = contentRange.flatMap { value -> Int64? in
            let spec = value.trimmingCharacters(in: .whitespaces)
            guard spec.lowercased().hasPrefix("bytes "), let dash = spec.firstIndex(of: "-") else { return nil }
            return Int64(spec[spec.index(spec.startIndex, offsetBy: 6)..<dash].trimmingCharacters(in: .whitespaces))
        }
        guard start == offset else {
            throw ValidationError("the server's Content-Range (\(contentRange ?? "none")) does not continue the \(offset)-byte file; nothing appended")
        }
        let reader = try FileHandle(forReadingFrom: part)
        defer { try? reader.close() }
        let writer = try FileHandle(forWritingTo: file)
        defer { try? writer.close() }
        try writer.seekToEnd()
        while let piece = try reader.read(upToCount: 1024 * 1024), !piece.isEmpty {
            try writer.write(contentsOf: piece)
        }
    }

    /// `--stream`: the head, then the body as it arrives, flushed piece by piece (Server-Sent Events included).
    func streamBody(_ urlRequest: URLRequest, on session: Session, credential: URLCredential?, parts: Set<Character>,
                    printer: Output) async throws {
        let request = session.streamRequest(urlRequest)
        if let credential { request.authenticate(with: credential) }
        var printedHead = false
        func printHead() {
            guard !printedHead, let http = request.response else { return }
            printedHead = true
            if parts.contains("h") {
                print(printer.statusLine(http, protocolName: request.metrics?.transactionMetrics.last?.networkProtocolName))
                print(printer.headers(http) + (parts.contains("b") ? "\n" : ""))
            }
        }
        for await event in request.streamTask().streamingStrings() {
            switch event.event {
            case let .stream(.success(text)):
                printHead()
                if parts.contains("b") {
                    print(printer.sanitized(text), terminator: "")
                    fflush(nil)
                }
            case let .complete(completion):
                printHead()
                if let error = completion.error { Self.fail(error) }
                if checkStatus, let status = completion.response?.statusCode, status >= 300 { throw ExitCode(Int32(status / 100)) }
            }
        }
    }
}
