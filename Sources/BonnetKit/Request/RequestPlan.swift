import ArgumentParser
import Bluebonnet
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Everything decided before anything is sent: the request (method, URL, headers, body), what is shown and how, and
/// what the session file and `--auth` add. Read from the options, standard input and the session file only.
struct RequestPlan {
    /// What is done with the request.
    enum Mode: Equatable {
        /// `--offline` (without `--cache`): shown, not sent.
        case offline
        /// `--download`/`-o`: the body to a file.
        case download
        /// `--stream`: the body as it arrives.
        case stream
        /// One exchange, printed when it ends.
        case exchange
    }

    let options: RequestCommand
    let mode: Mode
    /// The request as the items, standard input, the session file and `--auth` make it.
    let urlRequest: URLRequest
    let items: RequestItems
    /// Whether the body is a multipart form (`--multipart`, or `name@file` items).
    let sendsMultipart: Bool
    /// A body piped in (or an `@file` that is not a regular file) larger than is held in memory: sent as it is read
    /// (chunked), with the exchange.
    let streamedBody: StreamedBody?
    /// An `@file` body that is a regular file larger than is held in memory: sent from the disk as it is read, with
    /// its length, by the exchange.
    let bodyFile: URL?
    /// What is printed of the final exchange (`HBhbm`), and of each one followed before it (`--all`).
    let parts: Set<Character>
    let historyParts: Set<Character>
    let printer: Output
    /// Whether a request is shown as its exact bytes (CRLF line ends, no URL comment): when not on a terminal.
    let showsExactBytes: Bool
    /// The credential that answers a Digest (or Basic) challenge, for `--auth-type digest`.
    let challengeCredential: URLCredential?
    /// `--session`: the file, and the credentials given on this command line (which it keeps).
    let sessionFile: SessionFile?
    let givenAuth: SessionFile.StoredAuth?
    /// Cookies for this run: in memory, from and back to the session file if there is one.
    let cookieStorage: HTTPCookieStorage

    init(_ options: RequestCommand, console: Console) throws {
        self.options = options
        var words = options.words
        let methodWord = RequestCommand.methodWord(in: words)
        if methodWord != nil { words.removeFirst() }
        guard !words.isEmpty else { throw ValidationError("Give a URL after the method") }
        let expanded = Self.expandURL(words.removeFirst(), defaultScheme: options.exchange.defaultScheme.lowercased())
        let url = options.exchange.pathAsIs ? expanded : Self.squashingDotSegments(expanded)
        do { items = try RequestItems(words, in: console) } catch { throw ValidationError("\(error)") }
        let hasItemBody = !items.fields.isEmpty || !items.files.isEmpty
        let body = options.body
        if body.json, !body.form, !body.multipart, let (name, _) = items.files.first {
            // httpie's rule: a file part needs a form; `--json` does not quietly become one.
            throw CommandExit.usage("Invalid file fields (perhaps you meant --form?): \(name)")
        }
        if body.raw != nil, hasItemBody {
            throw ValidationError("--raw is the whole body: it cannot be mixed with data items (key=value)")
        }
        // httpie's rule: a body piped in is the request body, unless --ignore-stdin; with data items too, it is an
        // error, never silently dropped. `--raw` is the body as given, as a piped one would be.
        // A large piped body is not held whole: its first MiB is read (to tell it is there), the rest streamed.
        var piped: Data?
        var streamed: StreamedBody?
        switch body.ignoreStdin || body.raw != nil ? nil : console.input.readBody() {
        case let .whole(data)?: piped = data
        case let .streamed(prefix, stream)?: (piped, streamed) = (prefix, StreamedBody(prefix: prefix, stream: stream))
        case nil: break
        }
        var givenBody = body.raw.map { Data($0.utf8) } ?? (piped?.isEmpty == false ? piped : nil)
        var bodyFile: URL?
        if givenBody != nil, hasItemBody {
            throw CommandExit.usage(
                "Request body (from stdin) and request data (key=value) cannot be mixed. "
                    + "Pass --ignore-stdin to let key/value take priority.")
        }
        // httpie's `@file`: the file is the body, typed by its extension; one source of body only.
        var bodyType: String?
        if let path = items.bodyFile {
            guard givenBody == nil, !hasItemBody else {
                throw CommandExit.usage(
                    "Request body (from stdin, --raw or a file) and request data (key=value) cannot be mixed. "
                        + "Pass --ignore-stdin to let key/value take priority.")
            }
            // Held whole only when it is small: a large file is sent from the disk, and one that is not a regular
            // file (a FIFO, a device such as /dev/zero) as it is read, as a large piped body is.
            let file = console.file(path)
            let descriptor = open(file.path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw CommandExit.usage("'@\(path)': cannot read \(file.path) (\(String(cString: strerror(errno))))")
            }
            let isRegular = Self.isRegularFile(descriptor)
            switch ConsoleInput.descriptor(descriptor).readBody() {
            case nil:
                close(descriptor)
                givenBody = Data()
            case let .whole(data)?:
                close(descriptor)
                givenBody = data
            case let .streamed(prefix, _)? where isRegular:
                // The descriptor is read no further: the upload opens the file itself.
                close(descriptor)
                givenBody = prefix
                bodyFile = file
            case let .streamed(prefix, stream)?:
                // Read as the request is sent; the descriptor lives as long as the process, which is one command.
                givenBody = prefix
                streamed = StreamedBody(prefix: prefix, stream: stream)
            }
            bodyType = Self.mediaType(ofFile: path)
        }
        sendsMultipart = body.multipart || !items.files.isEmpty
        let exchange = options.exchange
        var mode: Mode =
            exchange.offline && !exchange.cache
            ? .offline
            : sendsMultipart
                ? .exchange
                : options.download.savesToFile ? .download : options.download.stream ? .stream : .exchange

        let printing = options.printing
        showsExactBytes = !console.outputIsTerminal
        parts = Self.parts(printing, offline: mode == .offline, toTerminal: console.outputIsTerminal)
        historyParts = printing.historyPrint.map(Set.init) ?? parts
        let prettiness = printing.pretty ?? (console.outputIsTerminal ? .all : PrettyStyle.none)
        // Only the response's head and raw body are printed (`bonnet URL > file`, `-h`): they stream, in bounded
        // memory and whatever the body's size, rather than wait for the whole exchange. A GET with a body is sent as
        // an upload by the exchange (the library refuses a GET whose URLRequest carries a body), so it does not stream.
        let getWithBody = methodWord?.uppercased() == "GET" && (hasItemBody || givenBody != nil)
        if mode == .exchange, streamed == nil, bodyFile == nil, !sendsMultipart, !exchange.offline,
            !options.body.chunked, !printing.all, !getWithBody,
            !printing.timeline,
            !printing.curl, parts.isSubset(of: ["h", "b"]),
            !parts.contains("b") || (!console.outputIsTerminal && prettiness == .none)
        {
            mode = .stream
        }
        self.mode = mode
        // Only the exchange sends a stream; a download, `--stream` and `--offline` take the body whole, up to a bound.
        let holdsBodyWhole = mode != .exchange
        if let body = streamed, holdsBodyWhole {
            switch body.readWhole() {
            case let .read(whole): givenBody = whole
            case .failed: throw CommandExit(status: 1, message: "cannot read the request body")
            case .tooLarge: throw Self.bodyTooLarge
            }
            streamed = nil
        }
        // `-x` deflates a body it holds whole, as httpie does, so a large file is read (up to the bound) for it.
        if let file = bodyFile, holdsBodyWhole || body.compress > 0 {
            let size = (try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int) ?? nil
            guard let size, size <= StreamedBody.heldWholeAtMost else { throw Self.bodyTooLarge }
            guard let whole = FileManager.default.contents(atPath: file.path) else {
                throw CommandExit(status: 1, message: "cannot read \(file.path)")
            }
            givenBody = whole
            bodyFile = nil
        }
        streamedBody = streamed
        self.bodyFile = bodyFile
        var printer = Output(
            colored: !printing.noColor && (prettiness == .all || prettiness == .colors),
            formats: prettiness == .all || prettiness == .format, toTerminal: console.outputIsTerminal,
            sorts: !printing.unsorted, environment: console.environment)
        printer.mimeType = printing.responseMime
        printer.charset = printing.responseCharset
        printer.style = printing.style
        printer.formatOptions = (try? FormatOptions(printing.formatOptions)) ?? FormatOptions()
        self.printer = printer

        let method = HTTPMethod(
            rawValue: methodWord?.uppercased() ?? (hasItemBody || givenBody != nil ? "POST" : "GET"))
        var request: URLRequest
        do {
            request = try Self.request(
                url: url, method: method, items: items, body: streamed == nil && bodyFile == nil ? givenBody : nil,
                bodyType: bodyType,
                options: options,
                multipart: sendsMultipart)
            if streamed != nil || bodyFile != nil, let prefix = givenBody,
                request.value(forHTTPHeaderField: "Content-Type") == nil
            {
                // Typed as a body held whole is: an `@file` by its extension, else from what its first MiB shows, a
                // form, or JSON when it opens like it.
                if let bodyType {
                    request.setValue(bodyType, forHTTPHeaderField: "Content-Type")
                } else if options.body.form {
                    request.setValue(
                        "application/x-www-form-urlencoded; charset=utf-8", forHTTPHeaderField: "Content-Type")
                } else if StreamedBody.opensLikeJSON(prefix) {
                    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                }
            }
        } catch {
            throw CommandExit.failure(error)
        }

        let (authentication, sessions) = (options.authentication, options.sessions)
        var sessionFile: SessionFile?
        if let name = sessions.sessionName ?? sessions.sessionReadOnly {
            guard let target = request.url else { throw ValidationError("--session needs a URL with a host") }
            do {
                sessionFile = try SessionFile(name, for: target, in: console)
            } catch {
                throw ValidationError("\(error)")
            }
        }
        // The session's headers go along unless this request sets or removes them.
        for (name, value) in sessionFile?.headers ?? [:]
        where request.value(forHTTPHeaderField: name) == nil
            && !items.removedHeaders.contains(where: { $0.caseInsensitiveCompare(name) == .orderedSame })
        {
            request.setValue(value, forHTTPHeaderField: name)
        }
        givenAuth = authentication.auth.map { SessionFile.StoredAuth(type: authentication.authType.rawValue, raw: $0) }
        var challengeCredential: URLCredential?
        if let auth = givenAuth ?? sessionFile?.auth {
            guard let type = AuthType(rawValue: auth.type) else {
                throw ValidationError("--session: unknown auth type \(auth.type)")
            }
            do {
                switch try AuthOption(auth.raw, type: type, askPassword: console.askPassword) {
                case let .header(header) where request.value(forHTTPHeaderField: "Authorization") == nil:
                    request.headers.add(header)
                case .header:
                    break
                case let .challenge(credential):
                    challengeCredential = credential
                }
            } catch {
                throw ValidationError("\(error)")
            }
        }
        // Credentials in the URL (`http://user:pass@host/`) are sent as Basic, as httpie sends them, unless --auth,
        // the session or an `Authorization` item says otherwise.
        if givenAuth == nil, sessionFile?.auth == nil, request.value(forHTTPHeaderField: "Authorization") == nil,
            let target = request.url, let components = URLComponents(url: target, resolvingAgainstBaseURL: false),
            let user = components.user
        {
            request.headers.add(.authorization(username: user, password: components.password ?? ""))
        }
        // Else `.netrc`'s credentials for the host, as httpie sends them, unless --ignore-netrc.
        if givenAuth == nil, sessionFile?.auth == nil, request.value(forHTTPHeaderField: "Authorization") == nil,
            let header = authentication.netrcHeader(for: request.url, in: console)
        {
            request.headers.add(header)
        }
        self.challengeCredential = challengeCredential
        // Cookies live in memory for the run unless a --session keeps them: nothing is written behind the user's back.
        cookieStorage = URLSessionConfiguration.ephemeral.httpCookieStorage ?? HTTPCookieStorage.shared
        do { try sessionFile?.loadCookies(into: cookieStorage) } catch { throw ValidationError("\(error)") }
        // A `Cookie:` item joins the session's cookies for this URL, as httpie sends them (the jar's first, a cookie
        // typed again by name replaced by the typed one), rather than hiding them.
        if sessionFile != nil, let typed = request.value(forHTTPHeaderField: "Cookie"), let target = request.url {
            let typedNames = Set(SessionFile.cookiePairs(typed).map(\.name))
            let stored = cookieStorage.af.cookies(for: target).filter { !typedNames.contains($0.name) }
            if !stored.isEmpty {
                request.setValue(
                    (stored.map { "\($0.name)=\($0.value)" } + [typed]).joined(separator: "; "),
                    forHTTPHeaderField: "Cookie")
            }
        }
        self.sessionFile = sessionFile
        if exchange.offline, exchange.cache {
            // `--offline --cache`: answered by the cache alone: a miss fails rather than reaching the network.
            request.cachePolicy = .returnCacheDataDontLoad
        }
        urlRequest = request
    }

    /// A body too large to hold whole, where the request's body must be: the user's way around it.
    static let bodyTooLarge = CommandExit(
        status: 1,
        message: "the request body is larger than the \(StreamedBody.heldWholeAtMost >> 20) MiB bonnet holds whole for "
            + "--offline, --download or --stream; without them it is streamed, whatever its size")

    /// Whether `descriptor` is a regular file (not a FIFO, a device or a socket).
    static func isRegularFile(_ descriptor: Int32) -> Bool {
        var status = stat()
        return fstat(descriptor, &status) == 0 && (status.st_mode & S_IFMT) == S_IFREG
    }

    /// The media type of an `@file` body from its extension, as httpie guesses it (Python's `mimetypes`), for the
    /// common ones; `nil` for any other, which is then typed as a piped body is.
    static func mediaType(ofFile path: String) -> String? {
        let types = [
            "txt": "text/plain", "text": "text/plain", "html": "text/html", "htm": "text/html", "css": "text/css",
            "csv": "text/csv", "xml": "text/xml", "json": "application/json", "js": "text/javascript",
            "pdf": "application/pdf", "zip": "application/zip", "bin": "application/octet-stream",
            "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "svg": "image/svg+xml",
        ]
        return types[(path as NSString).pathExtension.lowercased()]
    }

    /// The session's default headers, sent with every request unless the items removed them (`Header:`): the
    /// library's `User-Agent` and `Accept-Encoding`, but not its `Accept-Language`, which httpie never sends and which
    /// would ask servers for the locale Foundation guesses (`en-001` on Linux) rather than one the user chose.
    var sessionHeaders: HTTPHeaders {
        var defaults = HTTPHeaders.default
        defaults.remove(name: "Accept-Language")
        for name in items.removedHeaders { defaults.remove(name: name) }
        return defaults
    }

    /// The parts to print, from --print, -v, -h, -b, --offline and whether the output is a terminal.
    static func parts(_ printing: PrintOptions, offline: Bool, toTerminal: Bool) -> Set<Character> {
        if printing.quiet > 0 { return [] }
        if let printSpec = printing.printSpec { return Set(printSpec) }
        if offline { return ["H", "B"] }
        if printing.verbose { return ["H", "B", "h", "b"] }
        if printing.headers { return ["h"] }
        if printing.body { return ["b"] }
        if printing.meta { return ["m"] }
        return toTerminal ? ["h", "b"] : ["b"]
    }

    /// The request the items make: headers, query, and a body from standard input, `--raw` or the data items (a
    /// multipart form is built when it is sent).
    private static func request(
        url: String, method: HTTPMethod, items: RequestItems, body: Data?, bodyType: String?, options: RequestCommand,
        multipart: Bool
    ) throws -> URLRequest {
        var request = try URLRequest(url: url, method: method, headers: items.headers)
        if let timeout = options.exchange.timeout { request.timeoutInterval = timeout }
        if !items.query.isEmpty,
            var components = request.url.flatMap({ URLComponents(url: $0, resolvingAgainstBaseURL: false) })
        {
            // A `?` typed with nothing after it adds nothing: `/get?` and `q==1` make `/get?q=1`.
            components.percentEncodedQuery = [components.percentEncodedQuery, items.encodedQuery].compactMap { $0 }
                .filter { !$0.isEmpty }.joined(separator: "&")
            request.url = components.url
        }
        if let body {
            request.httpBody = body
            // As httpie types a body it did not build: a form with --form, JSON when it parses as JSON (and then
            // JSON is asked for too, as for data items).
            if request.value(forHTTPHeaderField: "Content-Type") == nil {
                if let bodyType {
                    request.setValue(bodyType, forHTTPHeaderField: "Content-Type")
                    if bodyType == "application/json", request.value(forHTTPHeaderField: "Accept") == nil {
                        request.setValue("application/json, */*;q=0.5", forHTTPHeaderField: "Accept")
                    }
                } else if options.body.form {
                    request.setValue(
                        "application/x-www-form-urlencoded; charset=utf-8", forHTTPHeaderField: "Content-Type")
                } else if JSONValidator.isValid(body) {
                    request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                    if request.value(forHTTPHeaderField: "Accept") == nil {
                        request.setValue("application/json, */*;q=0.5", forHTTPHeaderField: "Accept")
                    }
                }
            }
        } else if !items.fields.isEmpty, !multipart {
            request = try encodeFields(items.fields, form: options.body.form, into: request)
        }
        // httpie's `--json` says JSON both ways even with nothing to send, and `--form` names its type even for an
        // empty form.
        if options.body.json, !options.body.form, !multipart {
            if request.value(forHTTPHeaderField: "Accept") == nil {
                request.setValue("application/json, */*;q=0.5", forHTTPHeaderField: "Accept")
            }
            if request.value(forHTTPHeaderField: "Content-Type") == nil {
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            }
        } else if options.body.form, !multipart, request.value(forHTTPHeaderField: "Content-Type") == nil {
            request.setValue("application/x-www-form-urlencoded; charset=utf-8", forHTTPHeaderField: "Content-Type")
        }
        return request
    }

    static func encodeFields(_ fields: [(String, any Sendable)], form: Bool, into request: URLRequest) throws
        -> URLRequest
    {
        var request = request
        if form {
            // Every field, repeated ones too, in the order given: a dictionary would keep the last and sort them.
            // Escaped as httpie escapes them (a space as `+`).
            let body = fields.map { name, value in
                RequestItems.formEscaped(name) + "=" + RequestItems.formEscaped(RequestItems.text(of: value))
            }.joined(separator: "&")
            request.httpBody = Data(body.utf8)
            if request.value(forHTTPHeaderField: "Content-Type") == nil {
                request.setValue("application/x-www-form-urlencoded; charset=utf-8", forHTTPHeaderField: "Content-Type")
            }
            return request
        }
        let body = try NestedJSON.build(fields.map { name, value in (name, value) })
        request.httpBody = try NestedJSON.data(body)
        if request.value(forHTTPHeaderField: "Content-Type") == nil {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if request.value(forHTTPHeaderField: "Accept") == nil {
            request.setValue("application/json, */*;q=0.5", forHTTPHeaderField: "Accept")
        }
        return request
    }

    /// The `boundary` parameter of a `Content-Type` value, unquoted; `nil` when it has none.
    static func boundaryParameter(of contentType: String) -> String? {
        for parameter in contentType.split(separator: ";").dropFirst() {
            let pair = parameter.split(separator: "=", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "boundary" else {
                continue
            }
            var value = pair[1].trimmingCharacters(in: .whitespaces)
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast())
            }
            return value.isEmpty ? nil : value
        }
        return nil
    }

    /// The data items as fields, the `name@file` items as file parts (their paths relative to `directory`).
    func appendParts(to form: MultipartFormData, in console: Console) {
        for (name, value) in items.fields {
            form.append(Data(RequestItems.text(of: value).utf8), withName: name)
        }
        for (name, item) in items.files {
            // httpie's `name@file;type=MIME` names the part's type; without it, the file's extension does.
            var path = item
            var type: String?
            if let marker = item.range(of: ";type=", options: .backwards) {
                path = String(item[..<marker.lowerBound])
                type = String(item[marker.upperBound...]).trimmingCharacters(in: .whitespaces)
            }
            let fileURL = console.file(path)
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

    /// httpie's shorthands: `:8080/get` is `http://localhost:8080/get`, a bare host gets `http://` (or
    /// `defaultScheme`, `--default-scheme`).
    static func expandURL(_ word: String, defaultScheme: String = "http") -> String {
        var url: String
        if word.hasPrefix(":") {
            url = "\(defaultScheme)://localhost" + word
        } else if word.range(of: "^[A-Za-z][A-Za-z0-9+.-]*://", options: .regularExpression) != nil {
            url = word
        } else {
            // `localhost:8095/redirect-to?url=http://x/` has a `://` too, but not as its scheme.
            url = "\(defaultScheme)://" + word
        }
        // The host as URLs spell it, in lowercase (`LOCALHOST` is `localhost`), as httpie sends it; the user name
        // and password before an `@` are left as typed.
        if let authority = url.range(of: "://") {
            let rest = url[authority.upperBound...]
            let end = rest.firstIndex { "/?#".contains($0) } ?? rest.endIndex
            let hostStart = rest[..<end].lastIndex(of: "@").map { rest.index(after: $0) } ?? rest.startIndex
            url.replaceSubrange(hostStart..<end, with: url[hostStart..<end].lowercased())
        }
        return escapingWhatNeedsEscaping(url)
    }

    /// `url` with what may not stand in a URL's path, query or fragment percent-encoded (spaces, non-ASCII as UTF-8,
    /// a `%` that begins no escape), and every escape already there kept as typed: `/a%20b/ü` is `/a%20b/%C3%BC`, not
    /// `/a%2520b/...` as Foundation makes it once anything needs escaping. The scheme and authority are left alone.
    static func escapingWhatNeedsEscaping(_ url: String) -> String {
        let bytes = Array(url.utf8)
        let authorityStart =
            url.range(of: "://").map { url.utf8.distance(from: url.startIndex, to: $0.upperBound) } ?? 0
        let restStart =
            bytes[authorityStart...].firstIndex {
                $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#")
            }
            ?? bytes.count
        var escaped = Array(bytes[..<restStart])
        var index = restStart
        func isHex(_ byte: UInt8) -> Bool {
            (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) || (0x61...0x66).contains(byte)
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                let isEscape = index + 2 < bytes.count && isHex(bytes[index + 1]) && isHex(bytes[index + 2])
                escaped += isEscape ? [byte] : Array("%25".utf8)
            } else if byte < 0x80, byte > 0x20, byte != 0x7F, !Self.escapedASCII.contains(byte) {
                escaped.append(byte)
            } else {
                escaped += Array(String(format: "%%%02X", byte).utf8)
            }
            index += 1
        }
        return String(decoding: escaped, as: UTF8.self)
    }

    /// ASCII characters a URL never holds as they are (RFC 3986 allows none of them), beside controls and space.
    private static let escapedASCII: Set<UInt8> = Set("\"<>\\^`{|}".utf8)

    /// `url` with the `.` and `..` segments of its path resolved (RFC 3986, 5.2.4), as httpie sends it unless
    /// `--path-as-is`; the query and fragment are left alone.
    static func squashingDotSegments(_ url: String) -> String {
        guard var components = URLComponents(string: url), !components.percentEncodedPath.isEmpty else { return url }
        let path = components.percentEncodedPath
        let absolute = path.hasPrefix("/")
        var segments = path.split(separator: "/", omittingEmptySubsequences: false)
        if absolute { segments.removeFirst() }
        var output: [Substring] = []
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
        components.percentEncodedPath = (absolute ? "/" : "") + output.joined(separator: "/")
        return components.string ?? url
    }
}

/// A piped body sent as it is read: `@unchecked Sendable` because its stream is handed to the one upload that reads
/// it, from one thread at a time, and nothing else touches it.
final class StreamedBody: @unchecked Sendable {
    let prefix: Data
    let stream: InputStream

    init(prefix: Data, stream: InputStream) {
        self.prefix = prefix
        self.stream = stream
    }

    /// The most of a body held whole where a command needs it whole (`--offline`, `--download`, `--stream`): 256 MiB.
    static let heldWholeAtMost = 256 << 20

    /// Whether a body that starts with `prefix` opens as a JSON object or array does.
    static func opensLikeJSON(_ prefix: Data) -> Bool {
        let first = prefix.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
        return first == UInt8(ascii: "{") || first == UInt8(ascii: "[")
    }

    /// What reading the whole body gave.
    enum Whole: Equatable {
        case read(Data)
        /// Reading failed: never a body cut short.
        case failed
        /// More than the bound: `/dev/zero` never ends.
        case tooLarge
    }

    /// All of the body, read to its end, if it ends within `limit` bytes.
    func readWhole(atMost limit: Int = StreamedBody.heldWholeAtMost) -> Whole {
        var whole = Data()
        stream.open()
        defer { stream.close() }
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = stream.read(&buffer, maxLength: buffer.count)
            if count < 0 { return .failed }
            if count == 0 { return .read(whole) }
            guard whole.count + count <= limit else { return .tooLarge }
            whole.append(contentsOf: buffer[..<count])
        }
    }
}
