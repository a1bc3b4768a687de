import Bluebonnet
import Foundation
import Synchronization
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Sends a planned request on a session made for it: redirects as asked, `--timeout` as the idle timeout, the
/// connection's proxy and TLS choices, `-x`'s compressor, the cache with `--cache`.
struct Exchange {
    /// What one request came back with, and what it went through on the way.
    struct Outcome {
        let request: DataRequest
        let response: AFDataResponse<Data?>
        /// With `--all`, each response followed before the final one (a redirect, an answered challenge), with the
        /// request that got it and its body.
        let history: [(request: URLRequest, response: HTTPURLResponse, data: Data?)]
    }

    let plan: RequestPlan
    let console: Console
    let session: Session

    init(plan: RequestPlan, console: Console) throws {
        self.plan = plan
        self.console = console
        let options = plan.options
        let configuration = URLSessionConfiguration.af.default
        configuration.httpCookieStorage = plan.cookieStorage
        configuration.urlCache =
            options.exchange.cache
            ? Session.HTTPCache(
                memoryCapacity: 8 << 20, diskCapacity: 256 << 20, directory: Self.cacheDirectory(in: console))
            : nil
        if let timeout = options.exchange.timeout, timeout > 0 { configuration.timeoutIntervalForRequest = timeout }
        configuration.headers = plan.sessionHeaders
        let redirector = Redirector(
            behavior: options.exchange.noFollow ? .doNotFollow : .follow,
            maximumRedirects: options.exchange.maxRedirects ?? 16)
        configuration.connectionProxyDictionary = try options.connection.proxyDictionary(
            environment: console.environment)
        var (trustManager, tls) = try options.connection.tlsChoices(in: console)
        if options.exchange.http1 { tls.allowsHTTP2 = false }
        session = Session(
            configuration: configuration, interceptor: Self.compressor(options.body.compress),
            serverTrustManager: trustManager, tls: tls, redirectHandler: redirector)
    }

    /// `-x`: deflate the body when that makes it smaller, as httpie does; `-xx`: always. A multipart form or a piped
    /// body that streams is deflated as it is sent.
    static func compressor(_ level: Int) -> DeflateRequestCompressor? {
        guard level > 0 else { return nil }
        let always = level > 1
        return DeflateRequestCompressor(
            duplicateHeaderBehavior: .skip, shouldCompressBodyData: { always || Deflated.isSmaller($0) })
    }

    /// Where `--cache` keeps responses: `$BONNET_CACHE_DIR`, else `$XDG_CACHE_HOME/bonnet`, else `~/.cache/bonnet`.
    static func cacheDirectory(in console: Console) -> URL {
        if let directory = console.environment["BONNET_CACHE_DIR"], !directory.isEmpty {
            return console.file(directory)
        }
        if let xdg = console.environment["XDG_CACHE_HOME"], !xdg.isEmpty {
            return console.file(xdg).appendingPathComponent("bonnet")
        }
        return console.homeDirectory.appendingPathComponent(".cache/bonnet")
    }

    /// The multipart form of the data and file items: its boundary `--boundary`'s, or the one a given
    /// `Content-Type` names, else a random one; a given `Content-Type` kept as typed, with the boundary added as httpie
    /// adds it.
    private func multipartForm() -> MultipartFormData {
        let given = plan.urlRequest.value(forHTTPHeaderField: "Content-Type")?.trimmingCharacters(in: .whitespaces)
        let named = given.flatMap(RequestPlan.boundaryParameter(of:))
        let form = MultipartFormData(boundary: named ?? plan.options.body.boundary)
        if let given, !given.isEmpty {
            form.contentType = named == nil ? "\(given); boundary=\(form.boundary)" : given
        }
        plan.appendParts(to: form, in: console)
        return form
    }

    /// The bytes of `form`; a form of no parts is its closing delimiter alone, as httpie sends it (RFC 2046 §5.1.1
    /// asks for at least one part, and a form of none encodes to nothing, which is not a multipart body at all).
    private func encoded(_ form: MultipartFormData) throws -> Data {
        guard plan.items.fields.isEmpty, plan.items.files.isEmpty else { return try form.encode() }
        return Data("--\(form.boundary)--\r\n".utf8)
    }

    /// `--offline`: the exact request, multipart body included and deflated as `-x` would send it, so that it can be
    /// replayed (`| nc host port`).
    func showOffline() async throws {
        var request = plan.urlRequest
        if plan.sendsMultipart {
            let form = multipartForm()
            do { request.httpBody = try encoded(form) } catch { throw CommandExit.failure(error) }
            request.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
        }
        if let compressor = Self.compressor(plan.options.body.compress) {
            let plain = request
            let session = session
            request = await withCheckedContinuation { continuation in
                compressor.adapt(plain, for: session) { result in
                    continuation.resume(returning: (try? result.get()) ?? plain)
                }
            }
        }
        try ExchangePrinter(plan: plan, console: console).printSentRequest(
            request, parts: plan.parts, protocolName: nil, exact: true)
    }

    /// Sends the request (a multipart form, a chunked stream, or a plain body), with `--curl`'s command printed once
    /// the request exists and an upload's progress on standard error, and waits for the response.
    func send() async throws -> Outcome {
        let urlRequest = plan.urlRequest
        let options = plan.options
        let request: DataRequest
        if let file = plan.bodyFile {
            // A large `@file`, sent from the disk with its length (chunked when asked): never whole in memory.
            if options.body.chunked {
                guard let stream = InputStream(url: file) else {
                    throw CommandExit(status: 1, message: "cannot read \(file.path)")
                }
                request = session.upload(stream, with: urlRequest)
            } else {
                request = session.upload(file, with: urlRequest)
            }
        } else if let streamed = plan.streamedBody {
            // A large piped body, sent as it is read (chunked): never whole in memory.
            request = session.upload(streamed.stream, with: urlRequest)
        } else if plan.sendsMultipart, options.body.chunked {
            // The form encoded, then sent as a stream of unknown length: chunked.
            var formRequest = urlRequest
            let form = multipartForm()
            formRequest.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
            do {
                request = session.upload(InputStream(data: try encoded(form)), with: formRequest)
            } catch {
                throw CommandExit.failure(error)
            }
        } else if plan.sendsMultipart, plan.items.fields.isEmpty, plan.items.files.isEmpty {
            // A form of no parts: its closing delimiter, which the library's form does not make.
            var formRequest = urlRequest
            let form = multipartForm()
            formRequest.setValue(form.contentType, forHTTPHeaderField: "Content-Type")
            do {
                request = session.upload(try encoded(form), with: formRequest)
            } catch {
                throw CommandExit.failure(error)
            }
        } else if plan.sendsMultipart {
            request = session.upload(multipartFormData: multipartForm(), with: urlRequest)
        } else if options.body.chunked, let body = urlRequest.httpBody {
            var bodiless = urlRequest
            bodiless.httpBody = nil
            request = session.upload(InputStream(data: body), with: bodiless)
        } else if urlRequest.method == .get, let body = urlRequest.httpBody {
            // httpie sends a GET with a body (`GET URL a=1`); the library refuses a GET URLRequest carrying one, as
            // Alamofire does, but not an upload of the same bytes.
            var bodiless = urlRequest
            bodiless.httpBody = nil
            request = session.upload(body, with: bodiless)
        } else {
            request = session.request(urlRequest)
        }
        if let credential = plan.challengeCredential { request.authenticate(with: credential) }
        if options.printing.curl {
            // Once the URLRequest exists, in single quotes: a command line is pasted into a shell.
            await withCheckedContinuation { continuation in
                request.cURLDescription(calling: { _ in continuation.resume() })
            }
            do {
                try console.output.write(line: request.cURLDescription(quoting: .shellSafe))
            } catch {
                request.cancel()
                throw error
            }
        }
        // Updates and the final newline go through one serial queue, so the newline comes after the last redraw.
        let barQueue = DispatchQueue(label: "bonnet.progress")
        let uploadBar =
            plan.sendsMultipart && options.printing.quiet == 0 ? ProgressBar(label: "upload", console: console) : nil
        if let uploadBar, let upload = request as? UploadRequest {
            upload.uploadProgress(queue: barQueue) {
                uploadBar.update(completed: $0.completedUnitCount, total: $0.totalUnitCount)
            }
        }
        // With --all, each response followed (and the request that got it) is kept, to be shown before the final one.
        let historyQueue = DispatchQueue(label: "bonnet.history")
        let history = Mutex<[(request: URLRequest, response: HTTPURLResponse, data: Data?)]>([])
        if options.printing.all {
            request.onFollowedResponse(on: historyQueue) { sent, response, data in
                history.withLock { $0.append((sent, response, data)) }
            }
        }
        let response = await request.serializingResponse().response
        // Every exchange followed was handed over before the response; the last may still be on its way in.
        historyQueue.sync {}
        if let uploadBar { barQueue.sync { uploadBar.finish() } }
        return Outcome(request: request, response: response, history: history.withLock { $0 })
    }

    /// Saves what `--session` keeps (headers, credentials, cookies), unless it is read-only; a failure is a warning.
    func keepSession() {
        guard plan.options.sessions.sessionReadOnly == nil, var file = plan.sessionFile else { return }
        do {
            try file.update(
                headers: plan.urlRequest.headers, auth: plan.givenAuth, cookies: plan.cookieStorage,
                typedCookies: plan.items.headers.value(for: "Cookie"))
            try file.save()
        } catch {
            if plan.options.printing.quiet < 2 { console.warn("warning: \(error)") }
        }
    }
}
