// HeaderNameCanonicalisation: what FoundationNetworking's `HTTPURLResponse.init` costs per header field, against an
// ASCII fast path giving the same results (issue 47, item 3).
//
//   HeaderNameCanonicalisation <current|fast|init> <iterations> [nginx|api|none]
//       First checks the fast path against the current code on the corpus (exits 1 on any difference), then runs the
//       arm `iterations` times over the head (default nginx). Count instructions with callgrind at two iteration
//       counts: the difference over the difference in iterations is one head, over its fields one field.
//   HeaderNameCanonicalisation verify
//       The corpus check, then every ASCII name of up to two bytes and every printable ASCII name of three.

import Foundation
import FoundationNetworking

/// Whether the fast path and the current code agree on a name; prints the difference when they do not.
func checkName(_ name: String) -> Bool {
    let current = currentCanonicalName(name)
    let fast = fastCanonicalName(name)
    if current != fast {
        print(
            "MISMATCH for \(name.debugDescription): current \(current.debugDescription), fast \(fast.debugDescription)")
        return false
    }
    return true
}

/// The fast path, the current code and the real initializer over one head: the same fields, the same look-ups.
func checkHead(_ head: [String: String], label: String) -> Bool {
    let current = currentSanitize(head)
    let fast = fastSanitize(head)
    var ok = true
    if current != fast {
        print("MISMATCH on head \(label): current \(current), fast \(fast)")
        ok = false
    }
    let url = URL(string: "https://example.com/")!
    guard let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: head) else {
        print("HTTPURLResponse.init returned nil on head \(label)")
        return false
    }
    var real: [String: String] = [:]
    for (key, value) in response.allHeaderFields {
        real[key as! String] = (value as! String)
    }
    if real != current.fields {
        print("MISMATCH on head \(label): HTTPURLResponse.allHeaderFields \(real), current \(current.fields)")
        ok = false
    }
    let expectedLength = current.contentLength.flatMap { Int64($0) } ?? -1
    if response.expectedContentLength != expectedLength {
        print(
            "MISMATCH on head \(label): expectedContentLength \(response.expectedContentLength), look-up \(expectedLength)"
        )
        ok = false
    }
    if (response.mimeType == nil) != (current.contentType == nil) {
        print(
            "MISMATCH on head \(label): mimeType \(response.mimeType.debugDescription), look-up \(current.contentType.debugDescription)"
        )
        ok = false
    }
    return ok
}

/// The corpus check every run starts with. Returns the number of names checked, or nil on a mismatch.
func checkCorpus() -> Int? {
    let names = spellings(of: registeredNames + edgeNames + nonASCIINames)
    var ok = true
    for name in names {
        ok = checkName(name) && ok
    }
    // Heads: the realistic ones, every spelling of the registered names in one head and in heads of eight, the
    // edge and non-ASCII names with `Content-Length` and `Content-Type` in odd spellings.
    for head in Head.allCases {
        ok = checkHead(head.dictionary, label: head.rawValue) && ok
    }
    let registered = spellings(of: registeredNames)
    var everything: [String: String] = [:]
    for (index, name) in registered.enumerated() {
        everything[name] = "\(index)"
    }
    ok = checkHead(everything, label: "every registered spelling") && ok
    var start = 0
    while start < registered.count {
        var chunk: [String: String] = [:]
        for index in start..<min(start + 8, registered.count) {
            chunk[registered[index]] = "\(index)"
        }
        ok = checkHead(chunk, label: "registered spellings from \(start)") && ok
        start += 8
    }
    for (index, name) in spellings(of: edgeNames + nonASCIINames).enumerated() {
        let head = [name: "edge", "CONTENT-length": "\(index)", "content-TYPE": "text/plain; charset=utf-8"]
        ok = checkHead(head, label: "edge \(name.debugDescription)") && ok
    }
    return ok ? names.count : nil
}

/// Every ASCII name of up to two bytes and every printable ASCII name of three, name by name.
func checkExhaustive() -> Int? {
    var checked = 0
    var ok = true
    let all = (0..<128).map { String(UnicodeScalar(UInt8($0))) }
    let printable = (0x20..<0x7F).map { String(UnicodeScalar(UInt8($0))) }
    for first in all {
        ok = checkName(first) && ok
        checked += 1
        for second in all {
            ok = checkName(first + second) && ok
            checked += 1
        }
    }
    for first in printable {
        for second in printable {
            for third in printable {
                ok = checkName(first + second + third) && ok
                checked += 1
            }
        }
        if !ok { break }
    }
    return ok ? checked : nil
}

/// The arm under measurement, over `head`, `iterations` times; a checksum keeps the work from being optimised away.
@inline(never)
func runArm(_ arm: String, head: [String: String], iterations: Int) -> Int {
    var checksum = 0
    switch arm {
    case "current":
        for _ in 0..<iterations {
            let sanitized = currentSanitize(head)
            checksum &+= sanitized.fields.count &+ (sanitized.contentLength?.utf8.count ?? 0)
        }
    case "fast":
        for _ in 0..<iterations {
            let sanitized = fastSanitize(head)
            checksum &+= sanitized.fields.count &+ (sanitized.contentLength?.utf8.count ?? 0)
        }
    case "init":
        let url = URL(string: "https://example.com/json-array/10")!
        for _ in 0..<iterations {
            let response = HTTPURLResponse(url: url, statusCode: 200, httpVersion: "HTTP/1.1", headerFields: head)
            checksum &+= response?.statusCode ?? 0
        }
    default:
        fatalError("unknown arm \(arm)")
    }
    return checksum
}

func main() -> Int32 {
    let arguments = CommandLine.arguments
    let usage =
        "usage: HeaderNameCanonicalisation <current|fast|init> <iterations> [nginx|api|none]\n"
        + "       HeaderNameCanonicalisation verify"
    guard arguments.count >= 2 else {
        print(usage)
        return 2
    }
    guard let corpusCount = checkCorpus() else {
        print("equality check FAILED")
        return 1
    }
    print("equality check passed: \(corpusCount) names, fast path == current code == HTTPURLResponse")
    if arguments[1] == "verify" {
        guard let exhaustiveCount = checkExhaustive() else {
            print("exhaustive check FAILED")
            return 1
        }
        print("exhaustive check passed: \(exhaustiveCount) ASCII names")
        return 0
    }
    let arm = arguments[1]
    guard ["current", "fast", "init"].contains(arm), arguments.count >= 3, let iterations = Int(arguments[2]),
        iterations >= 0
    else {
        print(usage)
        return 2
    }
    let headName = arguments.count >= 4 ? arguments[3] : "nginx"
    guard let head = Head(rawValue: headName) else {
        print(usage)
        return 2
    }
    let fields = head.dictionary
    let clock = ContinuousClock()
    var checksum = 0
    let elapsed = clock.measure {
        checksum = runArm(arm, head: fields, iterations: iterations)
    }
    let nanoseconds = Double(elapsed.components.seconds) * 1e9 + Double(elapsed.components.attoseconds) / 1e9
    let perHead = iterations > 0 ? nanoseconds / Double(iterations) : 0
    let perField = fields.isEmpty ? 0 : perHead / Double(fields.count)
    print(
        "\(arm) \(headName) (\(fields.count) fields) × \(iterations): \(String(format: "%.0f", perHead)) ns a head, "
            + "\(String(format: "%.0f", perField)) ns a field (wall time, a cross-check only); checksum \(checksum)")
    return 0
}

exit(main())
