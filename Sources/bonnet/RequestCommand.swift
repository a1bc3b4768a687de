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
        abstract: "Send one HTTP request (the default command)."
    )

    @Argument(help: "An optional METHOD, then the URL, then items: Header:value, name=value, name:=json, name==query, name@file.")
    var words: [String] = []

    @Flag(name: [.customShort("f"), .long], help: "Send data items as a URL-encoded form instead of JSON (multipart when there are name@file items).")
    var form = false

    @Flag(name: .long, help: "Send data and file items as a multipart/form-data form.")
    var multipart = false

    @Flag(name: [.customShort("v"), .long], help: "Print the request as well as the response.")
    var verbose = false

    @Flag(name: .long, help: "Print only the response headers.")
    var headers = false

    @Flag(name: [.customShort("b"), .long], help: "Print only the response body.")
    var body = false

    @Flag(name: .long, help: "Print the request's Timeline after the response.")
    var timeline = false

    @Flag(name: .long, help: "Print the request as a cURL command instead of only sending it.")
    var curl = false

    @Flag(name: .long, help: "Exit with 3, 4 or 5 for a 3xx, 4xx or 5xx response.")
    var checkStatus = false

    @Flag(name: .long, help: "Do not follow redirects.")
    var noFollow = false

    @Flag(name: .long, help: "Never colour the output.")
    var noColor = false

    @Option(name: .long, help: "Seconds of silence allowed from the server.")
    var timeout: Double?

    @Option(name: [.customShort("a"), .long], help: ArgumentHelp(
        "USER[:PASSWORD], or TOKEN for --auth-type bearer. Without :PASSWORD, it is asked for on the terminal.",
        valueName: "credentials"))
    var auth: String?

    @Option(name: [.customShort("A"), .customLong("auth-type")], help: ArgumentHelp(
        "basic (sent up front, as httpie does), digest (answers the server's Digest or Basic challenge) or bearer.",
        valueName: "type"))
    var authType: AuthType = .basic

    func validate() throws {
        guard !words.isEmpty else { throw ValidationError("Give a URL, e.g. bonnet GET http://127.0.0.1:8080/get") }
    }

    func run() async throws {
        var words = self.words
        let methodWord = words.count > 1 && words[0].allSatisfy { $0.isLetter && $0.isUppercase } ? words.removeFirst() : nil
        let url = Self.expandURL(words.removeFirst())
        let items: RequestItems
        do { items = try RequestItems(words) } catch { throw ValidationError("\(error)") }
        let method = HTTPMethod(rawValue: methodWord ?? (items.fields.isEmpty && items.files.isEmpty ? "GET" : "POST"))
        let sendsMultipart = multipart || !items.files.isEmpty
        let output = Output(colored: noColor ? false : nil)

        var urlRequest: URLRequest
        do {
            urlRequest = try URLRequest(url: url, method: method, headers: items.headers)
            if let timeout { urlRequest.timeoutInterval = timeout }
            if !items.query.isEmpty {
                urlRequest = try URLEncoding.queryString.encode(urlRequest, with: Dictionary(items.query, uniquingKeysWith: { $1 }))
            }
            if !items.fields.isEmpty, !sendsMultipart {
                urlRequest = try Self.encodeFields(items.fields, form: form, into: urlRequest)
            }
        } catch {
            Self.fail(error)
        }

        var challengeCredential: URLCredential?
        if let auth {
            do {
                switch try AuthOption(auth, type: authType) {
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

        let session = noFollow ? Session(redirectHandler: Redirector.doNotFollow) : AF
        let request = sendsMultipart ? Self.multipartUpload(items, with: urlRequest, on: session) : session.request(urlRequest)
        if let challengeCredential { request.authenticate(with: challengeCredential) }
        if curl {
            let command = await withCheckedContinuation { continuation in
                request.cURLDescription(calling: { continuation.resume(returning: $0) })
            }
            print(command)
        }
        // Updates and the final newline go through one serial queue, so the newline comes after the last redraw.
        let barQueue = DispatchQueue(label: "bonnet.progress")
        let uploadBar = sendsMultipart ? ProgressBar(label: "upload") : nil
        if let uploadBar, let upload = request as? UploadRequest {
            upload.uploadProgress(queue: barQueue) { uploadBar.update(completed: $0.completedUnitCount, total: $0.totalUnitCount) }
        }
        let response = await request.serializingResponse().response
        if let uploadBar { barQueue.sync { uploadBar.finish() } }
        if verbose, let sent = response.request {
            print(output.paint("\(sent.httpMethod ?? "GET") \(sent.url.map(Self.withoutPassword) ?? "")", "1"))
            for header in sent.headers.sorted() { print(output.paint(header.name, "36") + ": " + header.value) }
            if let body = sent.httpBody { print("\n" + String(decoding: body, as: UTF8.self)) }
            if sendsMultipart {
                print("\n" + output.paint("[multipart form: \(items.fields.count) field(s), \(items.files.count) file(s)]", "2"))
            }
            print("")
        }
        guard let http = response.response else {
            Self.fail(response.error ?? AFError.explicitlyCancelled)
        }
        if !body {
            print(output.statusLine(http))
            print(output.headers(http))
        }
        if !headers {
            if !body { print("") }
            let text = output.body(response.data, contentType: http.value(forHTTPHeaderField: "Content-Type"))
            if !text.isEmpty { print(text) }
        }
        if timeline {
            print("")
            print(output.paint(response.timeline.description, "2"))
        }
        if checkStatus, http.statusCode >= 300 {
            throw ExitCode(Int32(http.statusCode / 100))
        }
    }

    static func encodeFields(_ fields: [(String, any Sendable)], form: Bool, into request: URLRequest) throws -> URLRequest {
        if form {
            let pairs: [(String, String)] = fields.map { name, value in
                let text = (value as? SendableJSON).map { "\($0.value)" } ?? "\(value)"
                return (name, text)
            }
            let parameters: Parameters = Dictionary(pairs, uniquingKeysWith: { $1 })
            return try URLEncoding.httpBody.encode(request, with: parameters)
        }
        var object: [String: Any] = [:]
        for (name, value) in fields { object[name] = (value as? SendableJSON)?.value ?? value }
        var request = request
        request.httpBody = try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])
        if request.value(forHTTPHeaderField: "Content-Type") == nil {
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        if request.value(forHTTPHeaderField: "Accept") == nil {
            request.setValue("application/json, */*;q=0.5", forHTTPHeaderField: "Accept")
        }
        return request
    }

    /// Sends data items as fields and `name@file` items as file parts, named and typed from the file's extension.
    static func multipartUpload(_ items: RequestItems, with urlRequest: URLRequest, on session: Session) -> UploadRequest {
        session.upload(multipartFormData: { form in
            for (name, value) in items.fields {
                let text = (value as? SendableJSON).map { "\($0.value)" } ?? "\(value)"
                form.append(Data(text.utf8), withName: name)
            }
            for (name, path) in items.files {
                let fileURL = URL(fileURLWithPath: (path as NSString).expandingTildeInPath)
                if fileURL.pathExtension.isEmpty {
                    form.append(fileURL, withName: name, fileName: fileURL.lastPathComponent, mimeType: "application/octet-stream")
                } else {
                    form.append(fileURL, withName: name)
                }
            }
        }, with: urlRequest)
    }

    /// httpie's shorthands: `:8080/get` is `http://localhost:8080/get`, a bare host gets `http://`.
    static func expandURL(_ word: String) -> String {
        if word.hasPrefix(":") { return "http://localhost" + word }
        if word.contains("://") { return word }
        return "http://" + word
    }

    /// `url` with its password, if any, shown as `***`.
    static func withoutPassword(_ url: URL) -> String {
        guard url.password != nil, var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return url.absoluteString }
        components.password = "***"
        return components.string ?? url.absoluteString
    }

    static func fail(_ error: any Error) -> Never {
        var standardError = FileHandle.standardError
        print("bonnet: error: \(error.localizedDescription)", to: &standardError)
        Foundation.exit(1)
    }
}

extension FileHandle: @retroactive TextOutputStream {
    /// Writes `string` as UTF-8.
    public func write(_ string: String) {
        write(Data(string.utf8))
    }
}
