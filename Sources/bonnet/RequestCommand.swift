import ArgumentParser
import Bluebonnet
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `bonnet [METHOD] URL [ITEM ...]`: one request, printed like httpie.
struct RequestCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "request",
        abstract: "Send one HTTP request (the default command).",
        discussion: """
            Redirects are followed (up to --max-redirects); httpie's default is not to: use --no-follow for that.
            Exit codes as httpie's: 0 ok, 1 error, 2 timeout, 3/4/5 a 3xx/4xx/5xx with --check-status, 6 too many redirects.
            """,
        helpNames: [.long]
    )

    @Argument(
        help:
            "An optional METHOD, then the URL, then items: Header:value, name=value, name:=json, name==query, name@file."
    )
    var words: [String] = []

    @Flag(name: [.customShort("j"), .long], help: "Send data items as a JSON object (the default).")
    var json = false

    @Flag(
        name: [.customShort("f"), .long],
        help: "Send data items as a URL-encoded form instead of JSON (multipart when there are name@file items).")
    var form = false

    @Flag(name: .long, help: "Send data and file items as a multipart/form-data form.")
    var multipart = false

    @Flag(name: [.customShort("v"), .long], help: "Print the request as well as the response.")
    var verbose = false

    @Flag(name: [.customShort("h"), .long], help: "Print only the response headers (--print=h).")
    var headers = false

    @Flag(name: [.customShort("b"), .long], help: "Print only the response body (--print=b).")
    var body = false

    @Option(
        name: [.customShort("p"), .customLong("print")],
        help: ArgumentHelp(
            "What to print: H request headers, B request body, h response headers, b response body, m metadata. "
                + "Default: hb on a terminal, b when piped; -v is HBhb.", valueName: "what"))
    var printSpec: String?

    @Flag(
        name: .long,
        help: "Also show the intermediary exchanges (redirects followed, challenges answered), before the final one.")
    var all = false

    @Option(
        name: [.customShort("P"), .customLong("history-print")],
        help: ArgumentHelp(
            "What to print of intermediary exchanges with --all, as --print (the same as --print by default).",
            valueName: "what"))
    var historyPrint: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "all (colours and formatting: the default on a terminal), colors, format, or none (the default when piped).",
            valueName: "style"))
    var pretty: PrettyStyle?

    @Flag(
        name: .long,
        help:
            "Print the request that would be sent (--print=HB unless given), and do not send it; with --cache, answer from the cache instead."
    )
    var offline = false

    @Flag(
        name: .long,
        help:
            "Keep responses in bonnet's HTTP cache (~/.cache/bonnet, or $BONNET_CACHE_DIR) and answer from it by RFC 9111."
    )
    var cache = false

    @Flag(name: .long, help: "Print the request's Timeline after the response.")
    var timeline = false

    @Flag(
        name: [.customShort("x"), .customLong("compress")],
        help:
            "Send the body deflated (Content-Encoding: deflate), when that makes it smaller; -xx deflates it anyway."
    )
    var compress: Int

    @Flag(name: .long, help: "Print the request as a cURL command instead of only sending it.")
    var curl = false

    @Flag(name: .long, help: "Exit with 3, 4 or 5 for a 3xx, 4xx or 5xx response.")
    var checkStatus = false

    @Flag(name: .long, help: "Follow redirects (the default here, unlike httpie).")
    var follow = false

    @Flag(name: .long, help: "Do not follow redirects: a 3xx is the response.")
    var noFollow = false

    @Option(name: .long, help: "The most redirects followed before the request fails with exit code 6 (16 by default).")
    var maxRedirects: Int?

    @Flag(name: .long, help: "Sort headers and JSON keys (the default, as httpie).")
    var sorted = false

    @Flag(name: .long, help: "Keep headers and JSON keys in the order the server sent them.")
    var unsorted = false

    @Flag(name: .long, help: "Never colour the output.")
    var noColor = false

    @Option(name: .long, help: "Seconds of silence allowed from the server.")
    var timeout: Double?

    @Option(
        name: [.customShort("a"), .long],
        help: ArgumentHelp(
            "USER[:PASSWORD], or TOKEN for --auth-type bearer. Without :PASSWORD, it is asked for on the terminal.",
            valueName: "credentials"))
    var auth: String?

    @Option(
        name: [.customShort("A"), .customLong("auth-type")],
        help: ArgumentHelp(
            "basic (sent up front, as httpie does), digest (answers the server's Digest or Basic challenge) or bearer.",
            valueName: "type"))
    var authType: AuthType = .basic

    @Flag(name: .long, help: "Do not read a request body from standard input, even when it is not a terminal.")
    var ignoreStdin = false

    @Option(
        name: .long,
        help: ArgumentHelp("The request body, as given (instead of data items or stdin).", valueName: "data"))
    var raw: String?

    @Flag(name: .long, help: "Send the body with chunked transfer encoding, without a Content-Length.")
    var chunked = false

    @Flag(name: .long, help: "Send the URL's path as given: do not resolve its . and .. segments.")
    var pathAsIs = false

    @Option(
        name: .long,
        help: "Fail (exit 1) when the response has more header fields than this; 0, the default, is no limit.")
    var maxHeaders: Int = 0

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Formatting choices, as httpie's: headers.sort:BOOL, json.sort_keys:BOOL, json.indent:N, json.format:BOOL.",
            valueName: "key:value,..."))
    var formatOptions: [String] = []

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Render the body as this media type (e.g. application/json), whatever the server says.", valueName: "type"))
    var responseMime: String?

    @Option(
        name: .long,
        help: ArgumentHelp(
            "Decode the body shown with this charset (utf-8, latin1, utf-16, ...), whatever the server says.",
            valueName: "charset"))
    var responseCharset: String?

    @Option(
        name: [.customShort("s"), .long],
        help: ArgumentHelp(
            "The output's colours: \(ColorStyle.allValueStrings.joined(separator: ", ")) (auto by default).",
            valueName: "style"))
    var style: ColorStyle = .auto

    @Flag(
        name: [.customShort("q"), .customLong("quiet")],
        help: "Print nothing but errors and warnings (the response is still saved with -o); -qq: errors only.")
    var quiet: Int

    @Flag(
        name: [.customShort("d"), .long],
        help:
            "Save the body to a file (named by -o, the server, or the URL) with a progress bar, headers on standard error."
    )
    var download = false

    @Option(
        name: [.customShort("o"), .long],
        help: ArgumentHelp("The file the body is saved to (implies --download).", valueName: "file"))
    var output: String?

    @Flag(
        name: [.customShort("c"), .customLong("continue")],
        help: "Resume a partial download of the -o file with a Range request.")
    var resume = false

    @Flag(
        name: [.customShort("S"), .long],
        help: "Print the body as it arrives (Server-Sent Events one by one) rather than when it is complete.")
    var stream = false

    @OptionGroup var connection: ConnectionOptions

    @Flag(name: .customLong("http1"), help: "Speak HTTP/1.1 only: do not offer HTTP/2 in the TLS handshake.")
    var http1 = false

    @Option(
        name: .customLong("session"),
        help: ArgumentHelp(
            "Keep headers, --auth and cookies between runs: a NAME (kept per host under ~/.config/bonnet/sessions) or a file PATH.",
            valueName: "name|path"))
    var sessionName: String?

    @Option(
        name: .customLong("session-read-only"),
        help: ArgumentHelp(
            "Use a --session without saving what this run changes.", valueName: "name|path"))
    var sessionReadOnly: String?

    func validate() throws {
        if sessionName != nil, sessionReadOnly != nil {
            throw ValidationError("--session and --session-read-only contradict each other")
        }
        guard !words.isEmpty else { throw ValidationError("Give a URL, e.g. bonnet GET http://127.0.0.1:8080/get") }
        if let printSpec, printSpec.isEmpty || !printSpec.allSatisfy("HBhbm".contains) {
            throw ValidationError("--print takes letters of HBhbm, e.g. --print=Hh")
        }
        if let historyPrint, historyPrint.isEmpty || !historyPrint.allSatisfy("HBhbm".contains) {
            throw ValidationError("--history-print takes letters of HBhbm, e.g. -P Hh")
        }
        if follow, noFollow { throw ValidationError("--follow and --no-follow contradict each other") }
        if sorted, unsorted { throw ValidationError("--sorted and --unsorted contradict each other") }
        if let maxRedirects, maxRedirects < 0 { throw ValidationError("--max-redirects cannot be negative") }
        if maxHeaders < 0 { throw ValidationError("--max-headers cannot be negative") }
        do { _ = try FormatOptions(formatOptions) } catch { throw ValidationError("\(error)") }
        if resume, output == nil { throw ValidationError("--continue needs -o FILE, the partial download to resume") }
        if stream, download || output != nil { throw ValidationError("--stream and --download contradict each other") }
        if let responseCharset, Output.encoding(ofContentType: "text/plain; charset=\(responseCharset)") == nil {
            throw ValidationError("--response-charset: unknown charset \(responseCharset)")
        }
        if let responseMime, !responseMime.contains("/") || responseMime.contains(";") {
            throw ValidationError("--response-mime takes a media type such as application/json")
        }
    }

    /// The parts to print, from --print, -v, -h, -b, --offline and whether the output is a terminal.
    func parts(toTerminal: Bool) -> Set<Character> {
        if quiet > 0 { return [] }
        if let printSpec { return Set(printSpec) }
        if offline, !cache { return ["H", "B"] }
        if verbose { return ["H", "B", "h", "b"] }
        if headers { return ["h"] }
        if body { return ["b"] }
        return toTerminal ? ["h", "b"] : ["b"]
    }

    func run() async throws {
        var words = self.words
        let methodWord = Self.methodWord(in: words)
        if methodWord != nil { words.removeFirst() }
        guard !words.isEmpty else { throw ValidationError("Give a URL after the method") }
        let expanded = Self.expandURL(words.removeFirst())
        let url = pathAsIs ? expanded : Self.squashingDotSegments(expanded)
        let items: RequestItems
        do { items = try RequestItems(words) } catch { throw ValidationError("\(error)") }
        // httpie's rule: a body piped in is the request body, unless --ignore-stdin; with data items too, it is an
        // error, never silently dropped.
        let pipedBody =
            ignoreStdin || raw != nil || isatty(STDIN_FILENO) != 0
            ? nil : FileHandle.standardInput.readDataToEndOfFile()
        // `--raw` is the body as given, as a piped one would be.
        let stdinBody = raw.map { Data($0.utf8) } ?? (pipedBody?.isEmpty == false ? pipedBody : nil)
        if raw != nil, !items.fields.isEmpty || !items.files.isEmpty {
            throw ValidationError("--raw is the whole body: it cannot be mixed with data items (key=value)")
        }
        if stdinBody != nil, !items.fields.isEmpty || !items.files.isEmpty {
            var standardError = FileHandle.standardError
            print(
                "bonnet: error: Request body (from stdin) and request data (key=value) cannot be mixed. "
                    + "Pass --ignore-stdin to let key/value take priority.", to: &standardError)
            throw ExitCode(1)
        }
        let hasData = !items.fields.isEmpty || !items.files.isEmpty || stdinBody != nil
        let method = HTTPMethod(rawValue: methodWord?.uppercased() ?? (hasData ? "POST" : "GET"))
        let sendsMultipart = multipart || !items.files.isEmpty
        let toTerminal = isatty(STDOUT_FILENO) != 0
        let parts = parts(toTerminal: toTerminal)
        let prettiness = pretty ?? (toTerminal ? .all : PrettyStyle.none)
        var printer = Output(
            colored: !noColor && (prettiness == .all || prettiness == .colors),
            formats: prettiness == .all || prettiness == .format, toTerminal: toTerminal, sorts: !unsorted)
        printer.mimeType = responseMime
        printer.charset = responseCharset
        printer.style = style
        printer.formatOptions = (try? FormatOptions(formatOptions)) ?? FormatOptions()

        var urlRequest: URLRequest
        do {
            urlRequest = try URLRequest(url: url, method: method, headers: items.headers)
            if let timeout { urlRequest.timeoutInterval = timeout }
            if !items.query.isEmpty,
                var components = urlRequest.url.flatMap({ URLComponents(url: $0, resolvingAgainstBaseURL: false) })
            {
                components.percentEncodedQuery = [components.percentEncodedQuery, items.encodedQuery].compactMap { $0 }
                    .joined(separator: "&")
                urlRequest.url = components.url
            }
            if let stdinBody {
                urlRequest.httpBody = stdinBody
                // As httpie types a body it did not build: a form with --form, JSON when it parses as JSON.
                if urlRequest.value(forHTTPHeaderField: "Content-Type") == nil {
                    if form {
                        urlRequest.setValue(
                            "application/x-www-form-urlencoded; charset=utf-8", forHTTPHeaderField: "Content-Type")
                    } else if JSONValidator.isValid(stdinBody) {
                        urlRequest.setValue("application/json", forHTTPHeaderField: "Content-Type")
                    }
                }
            } else if !items.fields.isEmpty, !sendsMultipart {
                urlRequest = try Self.encodeFields(items.fields, form: form, into: urlRequest)
            }
            // httpie's `--json` asks for JSON even with nothing to send.
            if json, urlRequest.value(forHTTPHeaderField: "Accept") == nil {
                urlRequest.setValue("application/json, */*;q=0.5", forHTTPHeaderField: "Accept")
            }
        } catch {
            Self.fail(error)
        }

        var sessionFile: SessionFile?
        if let name = sessionName ?? sessionReadOnly {
            guard let target = urlRequest.url else { throw ValidationError("--session needs a URL with a host") }
            do { sessionFile = try SessionFile(name, for: target) } catch { throw ValidationError("\(error)") }
        }
        // The session's headers go along unless this request sets or removes them.
        for (name, value) in sessionFile?.headers ?? [:]
        where urlRequest.value(forHTTPHeaderField: name) == nil
            && !items.removedHeaders.contains(where: { $0.caseInsensitiveCompare(name) == .orderedSame })
        {
            urlRequest.setValue(value, forHTTPHeaderField: name)
        }
        let givenAuth = auth.map { SessionFile.StoredAuth(type: authType.rawValue, raw: $0) }
        let effectiveAuth = givenAuth ?? sessionFile?.auth
        var challengeCredential: URLCredential?
        if let effectiveAuth {
            guard let type = AuthType(rawValue: effectiveAuth.type) else {
                throw ValidationError("--session: unknown auth type \(effectiveAuth.type)")
            }
            do {
                switch try AuthOption(effectiveAuth.raw, type: type) {
                case let .header(header) where urlRequest.value(forHTTPHeaderField: "Authorization") == nil:
                    urlRequest.headers.add(header)
                case .header:
                    break
                case let .challenge(credential):
                    challengeCredential = credential
                }
            } catch {
                throw ValidationError("\(error)")
            }
        }

        // Cookies live in memory for the run unless a --session keeps them: nothing is written behind the user's back.
        let cookieStorage = URLSessionConfiguration.ephemeral.httpCookieStorage ?? HTTPCookieStorage.shared
        do { try sessionFile?.loadCookies(into: cookieStorage) } catch { throw ValidationError("\(error)") }
        let (session, sessionHeaders) = try makeSession(removing: items.removedHeaders, cookies: cookieStorage)
        let itemHeaders = urlRequest.headers
        let keepSession = { [sessionReadOnly] in
            guard sessionReadOnly == nil, var file = sessionFile else { return }
            do {
                try file.update(headers: itemHeaders, auth: givenAuth, cookies: cookieStorage)
                try file.save()
            } catch {
                guard quiet < 2 else { return }
                var standardError = FileHandle.standardError
                print("bonnet: warning: \(error)", to: &standardError)
            }
        }
        if offline, cache {
            // Answered by the cache alone: a miss fails rather than reaching the network.
            urlRequest.cachePolicy = .returnCacheDataDontLoad
        } else if offline {
            // The exact request, multipart body included, so that it can be replayed (`| nc host port`).
            var offlineRequest = urlRequest
            if sendsMultipart {
                let form = MultipartFormData()
                Self.appendParts(items, to: form)
                do { offlineRequest.httpBody = try form.encode() } catch { Self.fail(error) }
                offlineRequest.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
            }
            // Shown as it would be sent: through the same compressor the session would adapt it with.
            if let compressor {
                let plain = offlineRequest
                offlineRequest = await withCheckedContinuation { continuation in
                    compressor.adapt(plain, for: session) { result in
                        continuation.resume(returning: (try? result.get()) ?? plain)
                    }
                }
            }
            printSentRequest(
                offlineRequest, parts: parts, protocolName: nil, sessionHeaders: sessionHeaders, output: printer,
                exact: true)
            return
        }
        if download || output != nil, !sendsMultipart {
            try await downloadBody(
                urlRequest, on: session, credential: challengeCredential, file: output, printer: printer)
            keepSession()
            return
        }
        if stream, !sendsMultipart {
            try await streamBody(
                urlRequest, on: session, credential: challengeCredential, parts: parts, printer: printer)
            keepSession()
            return
        }
        let request: DataRequest
        if chunked, sendsMultipart {
            // The form encoded, then sent as a stream of unknown length: chunked.
            let form = MultipartFormData()
            Self.appendParts(items, to: form)
            var formRequest = urlRequest
            formRequest.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
            do { request = session.upload(InputStream(data: try form.encode()), with: formRequest) } catch {
                Self.fail(error)
            }
        } else if sendsMultipart {
            request = Self.multipartUpload(items, with: urlRequest, on: session)
        } else if chunked, let body = urlRequest.httpBody {
            var bodiless = urlRequest
            bodiless.httpBody = nil
            request = session.upload(InputStream(data: body), with: bodiless)
        } else {
            request = session.request(urlRequest)
        }
        if let challengeCredential { request.authenticate(with: challengeCredential) }
        if curl {
            // Once the URLRequest exists, in single quotes: a command line is pasted into a shell.
            await withCheckedContinuation { continuation in
                request.cURLDescription(calling: { _ in continuation.resume() })
            }
            print(request.cURLDescription(quoting: .shellSafe))
        }
        // Updates and the final newline go through one serial queue, so the newline comes after the last redraw.
        let barQueue = DispatchQueue(label: "bonnet.progress")
        let uploadBar = sendsMultipart && quiet == 0 ? ProgressBar(label: "upload") : nil
        if let uploadBar, let upload = request as? UploadRequest {
            upload.uploadProgress(queue: barQueue) {
                uploadBar.update(completed: $0.completedUnitCount, total: $0.totalUnitCount)
            }
        }
        // With --all, each response followed (and the request that got it) is kept, to be shown before the final one.
        let historyQueue = DispatchQueue(label: "bonnet.history")
        let history = History()
        if all {
            request.onFollowedResponse(on: historyQueue) { sent, response, data in
                history.exchanges.append((sent, response, data))
            }
        }
        let response = await request.serializingResponse().response
        historyQueue.sync {}
        if all {
            let historyParts = historyPrint.map(Set.init) ?? parts
            for (sent, followed, data) in historyQueue.sync(execute: { history.exchanges }) {
                printSentRequest(
                    sent, parts: historyParts, protocolName: nil, sessionHeaders: sessionHeaders, output: printer,
                    exact: !toTerminal)
                if historyParts.contains("h") {
                    print(printer.statusLine(followed))
                    print(printer.headers(followed))
                }
                if historyParts.contains("b"), data?.isEmpty == false {
                    if historyParts.contains("h") { print("") }
                    printer.writeBody(data, response: followed)
                }
                if historyParts.contains("h") || historyParts.contains("b") { print("") }
            }
        }
        if response.response != nil { keepSession() }
        if let uploadBar { barQueue.sync { uploadBar.finish() } }
        let protocolName = response.metrics?.transactionMetrics.last?.networkProtocolName
        if let sent = response.request {
            var shown = sent
            // A streamed upload's length is the form's, which the request no longer carries.
            if let upload = request as? UploadRequest, upload.uploadProgress.totalUnitCount > 0,
                shown.value(forHTTPHeaderField: "Content-Length") == nil
            {
                shown.setValue(String(upload.uploadProgress.totalUnitCount), forHTTPHeaderField: "Content-Length")
            }
            printSentRequest(
                shown, parts: parts, protocolName: protocolName, sessionHeaders: sessionHeaders, output: printer,
                exact: !toTerminal)
            if sendsMultipart, parts.contains("B") {
                print(
                    printer.paint("[multipart form: \(items.fields.count) field(s), \(items.files.count) file(s)]", "2")
                        + "\n")
            }
        }
        guard let http = response.response else {
            if offline, (response.error?.underlyingError as? URLError)?.code == .resourceUnavailable {
                var standardError = FileHandle.standardError
                print(
                    "bonnet: error: no response for \(urlRequest.url?.absoluteString ?? "this request") in the cache (--offline --cache)",
                    to: &standardError)
                Foundation.exit(1)
            }
            Self.fail(response.error ?? AFError.explicitlyCancelled)
        }
        if maxHeaders > 0, http.headers.count > maxHeaders {
            var standardError = FileHandle.standardError
            print(
                "bonnet: error: the response has \(http.headers.count) header fields, more than --max-headers \(maxHeaders)",
                to: &standardError)
            throw ExitCode(1)
        }
        if parts.contains("h") {
            print(printer.statusLine(http, protocolName: protocolName))
            print(printer.headers(http))
        }
        // Anything that ended the response after its head (a reset, a truncated body, a limit) is an error, not an
        // empty body: say so and exit non-zero, whatever --check-status says.
        if let error = response.error {
            Self.fail(error)
        }
        if parts.contains("b") {
            if parts.contains("h") { print("") }
            printer.writeBody(response.data, response: http)
        }
        if timeline || parts.contains("m") {
            print("")
            print(printer.paint(response.timeline.description, "2"))
        }
        if checkStatus, http.statusCode >= 300 {
            // As httpie does when the output goes elsewhere than a terminal, where the status line is not seen.
            if isatty(STDOUT_FILENO) == 0, quiet < 2 {
                var standardError = FileHandle.standardError
                print(
                    "bonnet: warning: HTTP \(http.statusCode) \(Output.statusPhrase(http.statusCode))",
                    to: &standardError)
            }
            throw ExitCode(Int32(http.statusCode / 100))
        }
    }

    /// The method word, when the first word is one: letters only, and followed by something that is not an item.
    /// As in httpie, `get URL` is a method, while in `localhost a=1` the first word is the URL.
    static func methodWord(in words: [String]) -> String? {
        guard words.count > 1, let first = words.first, !first.isEmpty, first.allSatisfy({ $0.isASCII && $0.isLetter })
        else {
            return nil
        }
        let second = words[1]
        return RequestItems.split(second) == nil || second.hasPrefix(":") || second.contains("://") ? first : nil
    }

    /// The session for this request: redirects as asked, `--timeout` as the idle timeout (not capped by the
    /// default 60 s), and no default header the items removed.
    private func makeSession(removing removed: [String], cookies: HTTPCookieStorage) throws -> (Session, HTTPHeaders) {
        let configuration = URLSessionConfiguration.af.default
        configuration.httpCookieStorage = cookies
        configuration.urlCache =
            cache
            ? Session.HTTPCache(memoryCapacity: 8 << 20, diskCapacity: 256 << 20, directory: Self.cacheDirectory())
            : nil
        if let timeout, timeout > 0 { configuration.timeoutIntervalForRequest = timeout }
        var defaults = HTTPHeaders.default
        for name in removed { defaults.remove(name: name) }
        configuration.headers = defaults
        let redirector = Redirector(behavior: noFollow ? .doNotFollow : .follow, maximumRedirects: maxRedirects ?? 16)
        configuration.connectionProxyDictionary = try connection.proxyDictionary()
        var (trustManager, tls) = try connection.tlsChoices()
        if http1 { tls.allowsHTTP2 = false }
        return (
            Session(
                configuration: configuration, interceptor: compressor, serverTrustManager: trustManager, tls: tls,
                redirectHandler: redirector),
            defaults
        )
    }

    /// `-x`: deflate the body when that makes it smaller, as httpie does; `-xx`: always. A multipart form or a piped
    /// body that streams is deflated as it is sent.
    private var compressor: DeflateRequestCompressor? {
        guard compress > 0 else { return nil }
        let always = compress > 1
        return DeflateRequestCompressor(
            duplicateHeaderBehavior: .skip, shouldCompressBodyData: { always || Deflated.isSmaller($0) })
    }

    /// Where `--cache` keeps responses: `$BONNET_CACHE_DIR`, else `$XDG_CACHE_HOME/bonnet`, else `~/.cache/bonnet`.
    static func cacheDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let directory = environment["BONNET_CACHE_DIR"], !directory.isEmpty {
            return URL(fileURLWithPath: directory)
        }
        if let xdg = environment["XDG_CACHE_HOME"], !xdg.isEmpty {
            return URL(fileURLWithPath: xdg).appendingPathComponent("bonnet")
        }
        return FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".cache/bonnet")
    }

    /// `H` and `B`: the request line and every header as sent (the session's defaults included), then the body.
    /// Prints the request as it goes on the wire: the request line, `Host`, every header (the engine's own
    /// `Accept-Encoding` and the body's `Content-Length` included), then the body. `exact` (`--offline`, or output
    /// that is not a terminal) writes the bytes themselves, CRLF line ends and all, so the output can be replayed.
    private func printSentRequest(
        _ sent: URLRequest, parts: Set<Character>, protocolName: String?, sessionHeaders: HTTPHeaders,
        output: Output, exact: Bool = false
    ) {
        guard parts.contains("H") || parts.contains("B"),
            let url = sent.url, let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return }
        let lineEnd = exact ? "\r\n" : "\n"
        var head = ""
        if parts.contains("H") {
            let path =
                (components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath)
                + (components.percentEncodedQuery.map { "?\($0)" } ?? "")
            head += output.paint(
                "\(sent.httpMethod ?? "GET") \(path) \(Output.httpVersion(protocolName))", output.style.method)
            if !exact { head += output.paint("   # \(Self.withoutPassword(url))", "2") }
            head += lineEnd
            var headers = sessionHeaders
            for header in sent.headers { headers.update(header) }
            // AsyncHTTPClient asks for gzip and deflate itself when the request names no encoding.
            if headers.value(for: "Accept-Encoding") == nil {
                headers.add(name: "Accept-Encoding", value: "deflate, gzip")
            }
            if let body = sent.httpBody, !body.isEmpty, headers.value(for: "Content-Length") == nil {
                headers.add(name: "Content-Length", value: String(body.count))
            }
            let port = url.port.map { ":\($0)" } ?? ""
            head +=
                output.paint("Host", output.style.headerName) + ": " + output.sanitized("\(url.host ?? "")\(port)")
                + lineEnd
            for header in headers.sorted() {
                head +=
                    output.paint(header.name, output.style.headerName) + ": " + output.sanitized(header.value) + lineEnd
            }
            head += lineEnd
        }
        if exact {
            var bytes = Data(head.utf8)
            if parts.contains("B"), let body = sent.httpBody { bytes.append(body) }
            StandardOutput.write(bytes)
            if parts.contains("B"), sent.httpBody?.isEmpty == false, !offline { print("") }
            return
        }
        print(head, terminator: "")
        if parts.contains("B"), let body = sent.httpBody {
            print(output.sanitized(String(decoding: body, as: UTF8.self)))
        }
        print("")
    }

    static func encodeFields(_ fields: [(String, any Sendable)], form: Bool, into request: URLRequest) throws
        -> URLRequest
    {
        if form {
            // Every field, repeated ones too, in the order given: a dictionary would keep the last and sort them.
            let encoding = URLEncoding.httpBody
            let body = fields.map { name, value in
                let text = (value as? SendableJSON).map { "\($0.value)" } ?? "\(value)"
                return encoding.escape(name) + "=" + encoding.escape(text)
            }.joined(separator: "&")
            var request = request
            request.httpBody = Data(body.utf8)
            if request.value(forHTTPHeaderField: "Content-Type") == nil {
                request.setValue("application/x-www-form-urlencoded; charset=utf-8", forHTTPHeaderField: "Content-Type")
            }
            return request
        }
        let body = try NestedJSON.build(fields.map { name, value in (name, (value as? SendableJSON)?.value ?? value) })
        var request = request
        request.httpBody = try NestedJSON.data(body)
        if request.value(forHTTPHeaderField: "Content-Type") == nil {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if request.value(forHTTPHeaderField: "Accept") == nil {
            request.setValue("application/json, */*;q=0.5", forHTTPHeaderField: "Accept")
        }
        return request
    }

    /// Sends data items as fields and `name@file` items as file parts, named and typed from the file's extension.
    static func multipartUpload(_ items: RequestItems, with urlRequest: URLRequest, on session: Session)
        -> UploadRequest
    {
        session.upload(multipartFormData: { form in appendParts(items, to: form) }, with: urlRequest)
    }

    /// The data items as fields, the `name@file` items as file parts.
    static func appendParts(_ items: RequestItems, to form: MultipartFormData) {
        for (name, value) in items.fields {
            let text = (value as? SendableJSON).map { "\($0.value)" } ?? "\(value)"
            form.append(Data(text.utf8), withName: name)
        }
        for (name, item) in items.files {
            // httpie's `name@file;type=MIME` names the part's type; without it, the file's extension does.
            var path = item
            var type: String?
            if let marker = item.range(of: ";type=", options: .backwards) {
                path = String(item[..<marker.lowerBound])
                type = String(item[marker.upperBound...]).trimmingCharacters(in: .whitespaces)
            }
            let fileURL = URL(fileURLWithPath: (path as NSString).expandingTildeInPath)
            if let type, !type.isEmpty {
                form.append(fileURL, withName: name, fileName: fileURL.lastPathComponent, mimeType: type)
            } else if fileURL.pathExtension.isEmpty {
                form.append(
                    fileURL, withName: name, fileName: fileURL.lastPathComponent, mimeType: "application/octet-stream")
            } else {
                form.append(fileURL, withName: name)
            }
        }
    }

    /// httpie's shorthands: `:8080/get` is `http://localhost:8080/get`, a bare host gets `http://`.
    static func expandURL(_ word: String) -> String {
        if word.hasPrefix(":") { return "http://localhost" + word }
        if word.contains("://") { return word }
        return "http://" + word
    }

    /// `url` with the `.` and `..` segments of its path resolved (RFC 3986, 5.2.4), as httpie sends it unless
    /// `--path-as-is`; the query and fragment are left alone.
    static func squashingDotSegments(_ url: String) -> String {
        guard var components = URLComponents(string: url), !components.percentEncodedPath.isEmpty else { return url }
        var input = Substring(components.percentEncodedPath)
        var output: [Substring] = []
        let absolute = input.hasPrefix("/")
        var segments = input.split(separator: "/", omittingEmptySubsequences: false)
        if absolute { segments.removeFirst() }
        for (index, segment) in segments.enumerated() {
            let last = index == segments.count - 1
            switch segment {
            case ".":
                if last { output.append("") }
            case "..":
                if !output.isEmpty { output.removeLast() }
                if last { output.append("") }
            default:
                output.append(segment)
            }
        }
        input = Substring((absolute ? "/" : "") + output.joined(separator: "/"))
        components.percentEncodedPath = String(input)
        return components.string ?? url
    }

    /// `url` with its password, if any, shown as `***`.
    static func withoutPassword(_ url: URL) -> String {
        guard url.password != nil, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else {
            return url.absoluteString
        }
        components.password = "***"
        return components.string ?? url.absoluteString
    }

    static func fail(_ error: any Error) -> Never {
        var standardError = FileHandle.standardError
        print("bonnet: error: \(ErrorMessage.describe(error))", to: &standardError)
        Foundation.exit(exitCode(for: error))
    }

    /// httpie's exit codes: 2 for a timeout, 6 for too many redirects, 1 for any other error.
    static func exitCode(for error: any Error) -> Int32 {
        guard let error = error.asAFError else { return 1 }
        if case .redirectFailed(reason: .tooManyRedirects) = error { return 6 }
        if let urlError = error.underlyingError as? URLError, urlError.code == .timedOut { return 2 }
        return 1
    }
}

extension FileHandle: @retroactive TextOutputStream {
    /// Writes `string` as UTF-8.
    public func write(_ string: String) {
        write(Data(string.utf8))
    }
}

/// The exchanges `--all` shows before the final one, gathered on one serial queue.
private final class History: @unchecked Sendable {
    // @unchecked: `exchanges` is only touched on the history queue (appended there, read there with `sync`).
    var exchanges: [(request: URLRequest, response: HTTPURLResponse, data: Data?)] = []
}
