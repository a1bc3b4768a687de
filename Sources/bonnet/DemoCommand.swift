import ArgumentParser
import Bluebonnet
import BluebonnetTestServer
import BonnetKit
import Foundation

/// `bonnet demo`: a short tour of Bluebonnet against the embedded test server.
struct DemoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Start the embedded test server and take a short tour of Bluebonnet."
    )

    @Flag(name: .long, help: "Never colour the output.")
    var noColor = false

    struct Slideshow: Decodable, Sendable {
        struct Show: Decodable, Sendable {
            struct Slide: Decodable, Sendable { let title: String }
            let title: String
            let author: String
            let slides: [Slide]
        }
        let slideshow: Show
    }

    struct Greeting: Encodable, Sendable {
        let name: String
        let flowers: [String]
    }

    func run() async throws {
        let console = Console.process
        let output = Output(
            colored: noColor ? false : nil, toTerminal: console.outputIsTerminal, environment: console.environment)
        let server = try await TestServer.start()
        defer { print(output.paint("Test server on \(server.baseURL.absoluteString) stopped.", "2")) }
        print(
            output.paint("Bluebonnet \(bluebonnetVersion) demo: test server on \(server.baseURL.absoluteString)", "1"))

        func section(_ title: String, _ code: String) {
            print("\n" + output.paint("== \(title)", "1;35"))
            print(output.paint(code, "2"))
        }

        section("GET JSON", "await AF.request(url).validate().serializingData().response")
        let get = await AF.request(server.url("/get?flower=bluebonnet")).validate().serializingData().response
        if let http = get.response { print(output.statusLine(http)) }
        print(output.body(get.data, contentType: "application/json"))

        section("The same JSON, decoded", "try await AF.request(url).serializingDecodable(Slideshow.self).value")
        let show = try await AF.request(server.url("/json")).serializingDecodable(Slideshow.self).value
        print(
            "slideshow \"\(show.slideshow.title)\" by \(show.slideshow.author): \(show.slideshow.slides.map(\.title))")

        section("An image, read from its headers", "try await AF.request(url).serializingImage().value")
        let image = try await AF.request(server.url("/image/png")).serializingImage().value
        print(
            "\(image.format.rawValue.uppercased()) \(image.width)×\(image.height), \(image.frameCount) frame(s), \(image.data.count) bytes"
        )

        section(
            "POST JSON with an Encodable",
            "AF.request(url, method: .post, parameters: greeting, encoder: JSONParameterEncoder.default)")
        let greeting = Greeting(name: "Texas", flowers: ["bluebonnet", "indian paintbrush"])
        let post = await AF.request(
            server.url("/post"), method: .post, parameters: greeting, encoder: JSONParameterEncoder.default
        )
        .validate()
        .serializingData()
        .response
        if let data = post.data, let echo = try? JSONSerialization.jsonObject(with: data) as? [String: Any] {
            print(
                "the server received json =",
                output.body(
                    try? JSONSerialization.data(withJSONObject: echo["json"] ?? [:]), contentType: "application/json"))
        }

        section(
            "A multipart upload with progress",
            "AF.upload(multipartFormData: { form in ... }, to: url).uploadProgress { ... }")
        let payload = Data((0..<2_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        let progress = ProgressLog()
        let upload = await AF.upload(
            multipartFormData: { form in
                form.append(Data("bluebonnet".utf8), withName: "flower")
                form.append(payload, withName: "seeds", fileName: "seeds.bin", mimeType: "application/octet-stream")
            }, to: server.url("/post")
        )
        .uploadProgress(queue: .global()) { progress.record($0.fractionCompleted) }
        .validate()
        .serializingData()
        .response
        if let data = upload.data, let echo = try? JSONSerialization.jsonObject(with: data) as? [String: Any] {
            let files = (echo["files"] as? [String: String]) ?? [:]
            print("the server received form =", echo["form"] ?? [:], "and files", files.keys.sorted())
        }
        print("upload progress:", progress.summary)

        section("A 404 caught by validate()", "AF.request(url).validate().responseData { response in ... }")
        let notFound: AFDataResponse<Data> = await withCheckedContinuation { continuation in
            AF.request(server.url("/status/404")).validate().responseData { continuation.resume(returning: $0) }
        }
        print("result:", output.paint(notFound.error?.localizedDescription ?? "unexpected success", "31"))
        print("responseCode:", notFound.error?.responseCode.map(String.init) ?? "none")

        section("A redirect chain, followed hop by hop", "AF.request(\"/redirect/3\")")
        let chain = AF.request(server.url("/redirect/3"))
        let redirected = await chain.serializingString().response
        for (hop, request) in chain.requests.enumerated() {
            print("  hop \(hop): \(request.httpMethod ?? "GET") \(request.url?.path ?? "")")
        }
        print(
            "final status:", redirected.response.map { output.statusLine($0) } ?? "none",
            "after \(chain.redirectCount) redirects")

        section("The Timeline of that request", "response.timeline")
        print(redirected.timeline.debugDescription)

        section("The same request as cURL", "request.cURLDescription()")
        print(chain.cURLDescription())

        await server.stop()
        let allGood =
            get.error == nil && post.error == nil && upload.error == nil && notFound.error?.responseCode == 404
            && redirected.response?.statusCode == 200
        print(
            "\n"
                + output.paint(
                    allGood ? "Demo finished: every step behaved." : "Demo finished with unexpected results.",
                    allGood ? "1;32" : "1;31"))
        if !allGood { throw ExitCode.failure }
    }
}

/// Collects upload fractions from the progress queue for the demo's one-line summary.
final class ProgressLog: @unchecked Sendable {
    // @unchecked: `fractions` is only touched under `lock`.
    private let lock = NSLock()
    private var fractions: [Double] = []

    func record(_ fraction: Double) {
        lock.lock(); defer { lock.unlock() }
        fractions.append(fraction)
    }

    var summary: String {
        lock.lock(); defer { lock.unlock() }
        let shown = fractions.map { String(format: "%.0f%%", $0 * 100) }
        return "\(fractions.count) updates, "
            + (shown.count > 6 ? shown.prefix(3) + ["…"] + shown.suffix(2) : shown[...]).joined(separator: " ")
    }
}
