@testable import BluebonnetTestServer
import Foundation

/// What one program did in one case.
struct OracleRun: Sendable {
    /// Each step's exit status, standard output and standard error.
    var statuses: [Int32] = []
    var outputs: [Data] = []
    var errors: [String] = []
    /// The requests the echo server received, in order.
    var requests: [WireRequest] = []
    /// The regular files left in the working folder, by path relative to it.
    var files: [String: Data] = [:]
    /// How long its steps took, for the report.
    var seconds: Double = 0
}

/// What a program sends of its own accord, which the normalisations take out when it is sent unchanged.
struct OracleDefaults: Sendable {
    var userAgent: String?
    var acceptEncoding: String?
}

/// One way two runs differ, with each side shown.
struct OracleFinding: CustomStringConvertible {
    let aspect: OracleAspect
    let httpie: String
    let bonnet: String

    var description: String { "\(aspect):\n      httpie: \(httpie)\n      bonnet: \(bonnet)" }
}

/// Compares the runs of a case after the normalisations listed.
struct OracleComparison {
    let normalisations: Set<OracleNormalisation>
    let httpieDefaults: OracleDefaults
    let bonnetDefaults: OracleDefaults

    /// A request with the differences by nature taken out.
    struct Normalised {
        var line: String
        var headers: [(name: String, value: String)]
        var body: Data
    }

    func findings(for oracleCase: OracleCase, arguments: [[String]], httpie: OracleRun, bonnet: OracleRun)
        -> [OracleFinding]
    {
        var findings: [OracleFinding] = []
        for (step, words) in arguments.enumerated() {
            let (left, right) = (httpie.statuses[safe: step], bonnet.statuses[safe: step])
            if left != right {
                findings.append(
                    OracleFinding(
                        aspect: .status, httpie: "step \(step + 1) exit \(left.map(String.init) ?? "-")",
                        bonnet: "step \(step + 1) exit \(right.map(String.init) ?? "-")"))
            }
            let (leftOutput, rightOutput) = (httpie.outputs[safe: step] ?? Data(), bonnet.outputs[safe: step] ?? Data())
            if OracleCase.isOffline(words) {
                findings += offlineFindings(leftOutput, rightOutput)
            } else if !oracleCase.terminal, OracleCase.printsBodyOnly(words), leftOutput != rightOutput {
                findings.append(
                    OracleFinding(aspect: .output, httpie: Self.shown(leftOutput), bonnet: Self.shown(rightOutput)))
            }
        }
        if httpie.requests.count != bonnet.requests.count {
            findings.append(
                OracleFinding(
                    aspect: .requests, httpie: Self.summary(httpie.requests), bonnet: Self.summary(bonnet.requests)))
        }
        for (left, right) in zip(httpie.requests, bonnet.requests) {
            findings += requestFindings(normalise(left), normalise(right))
        }
        findings += fileFindings(httpie.files, bonnet.files)
        return findings
    }

    /// `--offline`: standard output is the request; compared as one when both read as one, else as bytes.
    private func offlineFindings(_ left: Data, _ right: Data) -> [OracleFinding] {
        if case let .request(leftRequest, _) = WireRequest.parse([UInt8](left), lenient: true),
            case let .request(rightRequest, _) = WireRequest.parse([UInt8](right), lenient: true)
        {
            return requestFindings(normalise(leftRequest), normalise(rightRequest))
        }
        let trimmed = { (data: Data) in Data(data.reversed().drop { $0 == 0x0A || $0 == 0x0D }.reversed()) }
        let (leftBody, rightBody) = (trimmed(left), trimmed(right))
        if normalisations.contains(.jsonLayout), let leftJSON = JSONTokens.canonical(leftBody),
            let rightJSON = JSONTokens.canonical(rightBody)
        {
            return leftJSON == rightJSON
                ? [] : [OracleFinding(aspect: .output, httpie: Self.shown(leftJSON), bonnet: Self.shown(rightJSON))]
        }
        return leftBody == rightBody
            ? [] : [OracleFinding(aspect: .output, httpie: Self.shown(leftBody), bonnet: Self.shown(rightBody))]
    }

    private func requestFindings(_ left: Normalised, _ right: Normalised) -> [OracleFinding] {
        var findings: [OracleFinding] = []
        if left.line != right.line {
            findings.append(OracleFinding(aspect: .line, httpie: left.line, bonnet: right.line))
        }
        let fold = { (name: String) in normalisations.contains(.headerNameCase) ? name.lowercased() : name }
        var names: [String] = []
        for (name, _) in left.headers + right.headers where !names.contains(fold(name)) { names.append(fold(name)) }
        for name in names {
            let values = { (headers: [(name: String, value: String)]) in
                headers.filter { fold($0.name) == name }.map(\.value)
            }
            let (leftValues, rightValues) = (values(left.headers), values(right.headers))
            if leftValues != rightValues {
                let shown = { (values: [String]) in
                    values.isEmpty ? "(absent)" : values.map { "\"\($0)\"" }.joined(separator: ", ")
                }
                findings.append(
                    OracleFinding(
                        aspect: .header(name.lowercased()), httpie: shown(leftValues), bonnet: shown(rightValues)))
            }
        }
        if !normalisations.contains(.headerOrder) {
            let order = { (headers: [(name: String, value: String)]) in headers.map { fold($0.name) } }
            if order(left.headers) != order(right.headers), findings.isEmpty {
                findings.append(
                    OracleFinding(
                        aspect: .header("(order)"), httpie: order(left.headers).joined(separator: ", "),
                        bonnet: order(right.headers).joined(separator: ", ")))
            }
        }
        if left.body != right.body {
            findings.append(OracleFinding(aspect: .body, httpie: Self.shown(left.body), bonnet: Self.shown(right.body)))
        }
        return findings
    }

    /// `request` with the listed differences by nature taken out. A program's own defaults are either program's
    /// (a step of bonnet's run can be httpie's, when it makes or reads a session file).
    func normalise(_ request: WireRequest) -> Normalised {
        var headers = request.headers
        var body = request.body
        let named = { (field: (name: String, value: String), name: String) in
            field.name.caseInsensitiveCompare(name) == .orderedSame
        }
        let defaults = [httpieDefaults, bonnetDefaults]
        if normalisations.contains(.userAgent) {
            let agents = defaults.compactMap(\.userAgent)
            headers.removeAll { named($0, "User-Agent") && agents.contains($0.value) }
        }
        if normalisations.contains(.acceptEncoding) {
            let encodings = defaults.compactMap(\.acceptEncoding)
            headers.removeAll { named($0, "Accept-Encoding") && encodings.contains($0.value) }
        }
        if normalisations.contains(.emptyContentLength), request.body.isEmpty, !request.chunked, request.bodyShown {
            headers.removeAll { named($0, "Content-Length") && $0.value == "0" }
        }
        if normalisations.contains(.keepAlive) {
            headers.removeAll { named($0, "Connection") && $0.value.lowercased() == "keep-alive" }
        }
        if normalisations.contains(.acceptAnything) {
            headers.removeAll { named($0, "Accept") && $0.value == "*/*" }
        }
        let contentType = request.value("Content-Type") ?? ""
        if normalisations.contains(.multipartBoundary), contentType.lowercased().hasPrefix("multipart/"),
            let range = contentType.range(of: "boundary=")
        {
            let boundary = contentType[range.upperBound...].prefix { $0 != ";" }
                .trimmingCharacters(in: CharacterSet(charactersIn: "\" "))
            if !boundary.isEmpty {
                for index in headers.indices where named(headers[index], "Content-Type") {
                    headers[index].value = headers[index].value.replacingOccurrences(of: boundary, with: "BOUNDARY")
                }
                body = Self.replacing(Array(boundary.utf8), with: Array("BOUNDARY".utf8), in: body)
            }
        }
        if normalisations.contains(.deflatedBody), request.value("Content-Encoding")?.lowercased() == "deflate",
            let inflater = Zlib.Inflater(format: .zlib), let inflated = inflater.inflate(body)
        {
            body = inflated
        }
        let opensLikeJSON = body.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }.map { $0 == 0x7B || $0 == 0x5B }
        if normalisations.contains(.jsonLayout), contentType.lowercased().contains("json") || opensLikeJSON == true,
            let canonical = JSONTokens.canonical(body)
        {
            body = canonical
        }
        if normalisations.contains(.contentLength) {
            for index in headers.indices where named(headers[index], "Content-Length") {
                let declared = headers[index].value
                headers[index].value =
                    !request.bodyShown
                    ? "(its body is not shown)"
                    : Int(declared) == request.body.count
                        ? String(body.count) : "\(declared) (the body sent has \(request.body.count) bytes)"
            }
        }
        if normalisations.contains(.digestParameters) {
            for index in headers.indices where named(headers[index], "Authorization") {
                headers[index].value = Self.canonicalDigest(headers[index].value)
            }
        }
        if normalisations.contains(.headerNameCase) {
            headers = headers.map { ($0.name.lowercased(), $0.value) }
        }
        if normalisations.contains(.headerOrder) {
            headers = headers.enumerated().sorted {
                ($0.element.name.lowercased(), $0.offset) < ($1.element.name.lowercased(), $1.offset)
            }.map(\.element)
        }
        return Normalised(line: request.line, headers: headers, body: body)
    }

    /// A Digest answer's parameters in name order, quotes taken off, its fresh `cnonce` and `response` blanked.
    static func canonicalDigest(_ value: String) -> String {
        guard value.hasPrefix("Digest ") else { return value }
        var parameters: [(String, String)] = []
        var rest = Substring(value.dropFirst("Digest ".count))
        while !rest.isEmpty {
            rest = rest.drop { $0 == " " || $0 == "," }
            guard let equals = rest.firstIndex(of: "=") else { break }
            let name = rest[..<equals].trimmingCharacters(in: .whitespaces).lowercased()
            rest = rest[rest.index(after: equals)...]
            var parameter = ""
            if rest.first == "\"" {
                rest = rest.dropFirst()
                let end = rest.firstIndex(of: "\"") ?? rest.endIndex
                parameter = String(rest[..<end])
                rest = end < rest.endIndex ? rest[rest.index(after: end)...] : ""
            } else {
                let end = rest.firstIndex(of: ",") ?? rest.endIndex
                parameter = rest[..<end].trimmingCharacters(in: .whitespaces)
                rest = rest[end...]
            }
            parameters.append((name, ["cnonce", "response"].contains(name) ? "…" : parameter))
        }
        return "Digest " + parameters.sorted { $0.0 < $1.0 }.map { "\($0.0)=\($0.1)" }.joined(separator: ", ")
    }

    /// The files each side left: by path, and session files (httpie's layout) by their content without `__meta__`.
    private func fileFindings(_ left: [String: Data], _ right: [String: Data]) -> [OracleFinding] {
        var findings: [OracleFinding] = []
        for path in Set(left.keys).union(right.keys).sorted() {
            let (leftData, rightData) = (left[path], right[path])
            if leftData == rightData { continue }
            let layout = normalisations.contains(.sessionLayout)
            if let leftData, let rightData, let leftSession = Self.sessionContent(leftData, byMeaning: layout),
                let rightSession = Self.sessionContent(rightData, byMeaning: layout)
            {
                if leftSession != rightSession {
                    findings.append(
                        OracleFinding(
                            aspect: .files, httpie: "\(path): \(leftSession)", bonnet: "\(path): \(rightSession)"))
                }
                continue
            }
            findings.append(
                OracleFinding(
                    aspect: .files, httpie: "\(path): " + (leftData.map(Self.shown) ?? "(absent)"),
                    bonnet: "\(path): " + (rightData.map(Self.shown) ?? "(absent)")))
        }
        return findings
    }

    /// A session file's content, canonical (keys sorted), without `__meta__`; `nil` when it is not one. By meaning:
    /// headers and cookies as lists (httpie 2 kept them by name), in order, and the credentials as one type and one
    /// raw value (`raw_auth`, or `username` and `password`).
    static func sessionContent(_ data: Data, byMeaning: Bool) -> String? {
        guard var object = try? JSONSerialization.jsonObject(with: data) as? [String: Any], object["__meta__"] != nil
        else { return nil }
        object["__meta__"] = nil
        if byMeaning {
            var headers = object["headers"] as? [[String: Any]] ?? []
            if let byName = object["headers"] as? [String: Any] {
                headers = byName.map { ["name": $0.key, "value": $0.value] }
            }
            object["headers"] = headers.sorted { "\($0["name"] ?? "")" < "\($1["name"] ?? "")" }
            var cookies = object["cookies"] as? [[String: Any]] ?? []
            if let byName = object["cookies"] as? [String: [String: Any]] {
                cookies = byName.map { $0.value.merging(["name": $0.key, "domain": $0.value["domain"] ?? ""]) { $1 } }
            }
            object["cookies"] = cookies.sorted {
                ("\($0["domain"] ?? "")", "\($0["path"] ?? "")", "\($0["name"] ?? "")")
                    < ("\($1["domain"] ?? "")", "\($1["path"] ?? "")", "\($1["name"] ?? "")")
            }
            let auth = object["auth"] as? [String: Any] ?? [:]
            let type = auth["type"] as? String
            let raw =
                auth["raw_auth"] as? String
                ?? (auth["username"] as? String).map { "\($0):\(auth["password"] as? String ?? "")" }
            object["auth"] = ["type": type ?? "", "raw": raw ?? ""]
        }
        guard
            let canonical = try? JSONSerialization.data(
                withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { return nil }
        return String(decoding: canonical, as: UTF8.self)
    }

    private static func replacing(_ needle: [UInt8], with replacement: [UInt8], in data: Data) -> Data {
        let bytes = [UInt8](data)
        var output: [UInt8] = []
        var index = 0
        while let found = WireRequest.find(needle, in: bytes, from: index) {
            output += bytes[index..<found] + replacement
            index = found + needle.count
        }
        output += bytes[index...]
        return Data(output)
    }

    /// Bytes as escaped text, cut to a length a report can hold.
    static func shown(_ data: Data) -> String {
        let limit = 600
        let text = WireRequest.escaped(data.prefix(limit)).replacingOccurrences(of: "\\x0D\\x0A", with: "⏎")
        return data.count > limit ? text + "… (\(data.count) bytes)" : text
    }

    private static func summary(_ requests: [WireRequest]) -> String {
        requests.isEmpty ? "none" : "\(requests.count): " + requests.map(\.line).joined(separator: " | ")
    }
}

extension Array {
    fileprivate subscript(safe index: Int) -> Element? { indices.contains(index) ? self[index] : nil }
}
