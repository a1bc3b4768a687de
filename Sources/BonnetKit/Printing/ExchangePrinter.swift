import Bluebonnet
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Prints an exchange as httpie does: the exchanges followed (`--all`), the request as sent (`H`, `B`), the
/// response's head (`h`) and body (`b`), the timeline (`m`), and ends with the status `--check-status` asks for.
struct ExchangePrinter {
    let plan: RequestPlan
    let console: Console

    private var output: ConsoleStream { console.output }
    private var printer: Output { plan.printer }

    func print(_ outcome: Exchange.Outcome) throws {
        let options = plan.options
        let parts = plan.parts
        for (sent, followed, data) in outcome.history {
            let historyParts = plan.historyParts
            try printSentRequest(
                sent, parts: historyParts, protocolName: nil,
                exact: plan.showsExactBytes)
            if historyParts.contains("h") {
                try output.write(line: printer.statusLine(followed))
                try output.write(line: printer.headers(followed))
            }
            if historyParts.contains("b"), data?.isEmpty == false {
                if historyParts.contains("h") { try output.write(line: "") }
                try printer.writeBody(data, response: followed, to: output)
            }
            if historyParts.contains("h") || historyParts.contains("b") { try output.write(line: "") }
        }
        let response = outcome.response
        let protocolName = response.taskMetrics?.transactionMetrics.last?.networkProtocolName
        if let sent = response.request {
            var shown = sent
            // A streamed upload's length is the form's, which the request no longer carries.
            if let upload = outcome.request as? UploadRequest, upload.uploadProgress.totalUnitCount > 0,
                shown.value(forHTTPHeaderField: "Content-Length") == nil
            {
                shown.setValue(String(upload.uploadProgress.totalUnitCount), forHTTPHeaderField: "Content-Length")
            }
            if plan.sendsMultipart, parts.contains("B"), shown.httpBody == nil {
                // The form as it was sent: encoded again with the boundary its Content-Type names, the same bytes.
                shown.httpBody = multipartBody(of: shown)
            } else if !plan.sendsMultipart, plan.streamedBody == nil, shown.httpBody == nil, !plan.options.body.chunked
            {
                // A body sent as an upload (a GET's) is the planned one.
                shown.httpBody = plan.urlRequest.httpBody
            }
            try printSentRequest(
                shown, parts: parts, protocolName: protocolName,
                exact: plan.showsExactBytes)
        }
        guard let http = response.response else {
            if options.exchange.offline, (response.error?.underlyingError as? URLError)?.code == .resourceUnavailable {
                let url = plan.urlRequest.url?.absoluteString ?? "this request"
                throw CommandExit(status: 1, message: "no response for \(url) in the cache (--offline --cache)")
            }
            throw CommandExit.failure(response.error ?? AFError.explicitlyCancelled)
        }
        let maxHeaders = options.exchange.maxHeaders
        if maxHeaders > 0, http.headers.count > maxHeaders {
            throw CommandExit(
                status: 1,
                message:
                    "the response has \(http.headers.count) header fields, more than --max-headers \(maxHeaders)")
        }
        if parts.contains("h") {
            try output.write(line: printer.statusLine(http, protocolName: protocolName))
            try output.write(line: printer.headers(http))
        }
        // Anything that ended the response after its head (a reset, a truncated body, a limit) is an error, not an
        // empty body: say so and exit non-zero, whatever --check-status says.
        if let error = response.error { throw CommandExit.failure(error) }
        if parts.contains("b") {
            if parts.contains("h") { try output.write(line: "") }
            try printer.writeBody(response.data, response: http, to: output)
        }
        if options.printing.timeline || parts.contains("m") {
            try output.write(line: "")
            try output.write(line: printer.paint(response.timeline.description, "2"))
        }
        try checkStatus(of: http)
    }

    /// `--check-status`: ends with 3, 4 or 5 for a 3xx, 4xx or 5xx, warning on standard error when the output is not
    /// a terminal (where the status line is not seen), as httpie does.
    func checkStatus(of response: HTTPURLResponse) throws {
        guard plan.options.exchange.checkStatus, let exit = CommandExit.status(of: response) else { return }
        if !console.outputIsTerminal, plan.options.printing.quiet < 2 {
            console.warn("warning: HTTP \(response.statusCode) \(Output.statusPhrase(response.statusCode))")
        }
        throw exit
    }

    /// `H` and `B`: the request as it goes on the wire: the request line, `Host`, every header (the session's
    /// defaults, the engine's own `Accept-Encoding` and the body's `Content-Length` included), then the body. `exact`
    /// (`--offline`, or output that is not a terminal) writes the bytes themselves, CRLF line ends and all, so the
    /// output can be replayed.
    func printSentRequest(
        _ sent: URLRequest, parts: Set<Character>, protocolName: String?, exact: Bool
    ) throws {
        guard parts.contains("H") || parts.contains("B"),
            let url = sent.url, let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return }
        let lineEnd = exact ? "\r\n" : "\n"
        var head = ""
        if parts.contains("H") {
            let path =
                (components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath)
                + (components.percentEncodedQuery.map { "?\($0)" } ?? "")
            head += printer.paint(
                "\(sent.httpMethod ?? "GET") \(path) \(Output.httpVersion(protocolName))", printer.style.method)
            if !exact { head += printer.paint("   # \(Self.withoutPassword(url))", "2") }
            head += lineEnd
            var headers = plan.sessionHeaders
            for header in sent.headers { headers.update(header) }
            // A `Host` given as an item is the one sent, in place of the URL's.
            let port = url.port.map { ":\($0)" } ?? ""
            let host = headers.value(for: "Host") ?? "\(url.host ?? "")\(port)"
            headers.remove(name: "Host")
            let chunked = plan.options.body.chunked && sent.httpBody?.isEmpty == false
            if chunked {
                headers.remove(name: "Content-Length")
                headers.update(name: "Transfer-Encoding", value: "chunked")
            } else if let body = sent.httpBody, !body.isEmpty, headers.value(for: "Content-Length") == nil {
                headers.add(name: "Content-Length", value: String(body.count))
            }
            head += printer.paint("Host", printer.style.headerName) + ": " + printer.sanitized(host) + lineEnd
            for header in headers.sorted() {
                head +=
                    printer.paint(header.name, printer.style.headerName) + ": " + printer.sanitized(header.value)
                    + lineEnd
            }
            head += lineEnd
        }
        if exact {
            var bytes = Data(head.utf8)
            if parts.contains("B"), let body = sent.httpBody {
                // `--chunked` goes as one chunk and the last, empty one: replayed, the same request.
                let chunked = plan.options.body.chunked && !body.isEmpty
                if chunked { bytes.append(Data((String(body.count, radix: 16) + "\r\n").utf8)) }
                bytes.append(body)
                if chunked { bytes.append(Data("\r\n0\r\n\r\n".utf8)) }
            }
            try output.write(bytes)
            if parts.contains("B"), sent.httpBody?.isEmpty == false, !plan.options.exchange.offline {
                try output.write(line: "")
            }
            return
        }
        try output.write(head)
        if parts.contains("B"), let body = sent.httpBody {
            try output.write(line: printer.sanitized(String(decoding: body, as: UTF8.self)))
        }
        try output.write(line: "")
    }

    /// The multipart body `sent` carried: the form's items encoded with the boundary of its `Content-Type`.
    func multipartBody(of sent: URLRequest) -> Data? {
        guard let type = sent.value(forHTTPHeaderField: "Content-Type"),
            let range = type.range(of: "boundary=")
        else { return nil }
        let boundary = type[range.upperBound...].trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
        let form = MultipartFormData(boundary: boundary)
        plan.appendParts(to: form, in: console)
        return try? form.encode()
    }

    /// `url` with its password, if any, shown as `***`.
    static func withoutPassword(_ url: URL) -> String {
        guard url.password != nil, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return url.absoluteString
        }
        components.password = "***"
        return components.string ?? url.absoluteString
    }
}
