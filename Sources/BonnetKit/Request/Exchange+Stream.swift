import Bluebonnet
import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension Exchange {
    /// `--stream`: the head, then the body as it arrives, written piece by piece (Server-Sent Events included). Also
    /// whenever only the response's head and raw body are printed (`bonnet URL > file`, `-h`), so that output of any
    /// size streams in bounded memory; a body that is not printed is read to its end (an error in it still fails the
    /// command) and dropped.
    func stream() async throws {
        let request = session.streamRequest(plan.urlRequest)
        if let credential = plan.challengeCredential { request.authenticate(with: credential) }
        let (parts, printer, output) = (plan.parts, plan.printer, console.output)
        let maxHeaders = plan.options.exchange.maxHeaders
        var printedHead = false
        func printHead() throws {
            guard !printedHead, let http = request.response else { return }
            printedHead = true
            // `-v`: the request as sent, before its response.
            try ExchangePrinter(plan: plan, console: console).printSentRequest(
                request.request ?? plan.urlRequest, parts: parts, protocolName: nil, exact: plan.showsExactBytes)
            if maxHeaders > 0, http.headers.count > maxHeaders {
                throw CommandExit(
                    status: 1,
                    message:
                        "the response has \(http.headers.count) header fields, more than --max-headers \(maxHeaders)")
            }
            guard parts.contains("h") else { return }
            let protocolName = request.taskMetrics?.transactionMetrics.last?.networkProtocolName
            try output.write(line: printer.statusLine(http, protocolName: protocolName))
            try output.write(line: printer.headers(http) + (parts.contains("b") ? "\n" : ""))
        }
        // Piped, the bytes go out exactly as they came; on a terminal, as text with a character split across two
        // chunks kept whole and control characters shown escaped.
        var pending = Data()
        for await event in request.streamTask().streamingData() {
            switch event.event {
            case let .stream(.success(chunk)):
                do {
                    try printHead()
                    guard parts.contains("b") else { continue }
                    if !printer.toTerminal {
                        try output.write(chunk)
                        continue
                    }
                    pending.append(chunk)
                    let keep = Self.incompleteUTF8Suffix(pending)
                    try output.write(printer.sanitized(String(decoding: pending.dropLast(keep), as: UTF8.self)))
                    pending = Data(pending.suffix(keep))
                } catch {
                    // The reader went away: nothing more is wanted of this stream.
                    request.cancel()
                    throw error
                }
            case let .complete(completion):
                try printHead()
                if !pending.isEmpty {
                    try output.write(printer.sanitized(String(decoding: pending, as: UTF8.self)))
                }
                if let error = completion.error { throw CommandExit.failure(error) }
                if let http = completion.response {
                    try ExchangePrinter(plan: plan, console: console).checkStatus(of: http)
                }
            }
        }
    }

    /// How many bytes at the end of `bytes` begin a UTF-8 sequence the next chunk completes (at most 3).
    static func incompleteUTF8Suffix(_ bytes: Data) -> Int {
        var count = 0
        for byte in bytes.reversed() {
            count += 1
            if byte & 0xC0 == 0x80 {
                if count == 4 { return 0 }
                continue
            }
            let needed = byte >= 0xF0 ? 4 : byte >= 0xE0 ? 3 : byte >= 0xC0 ? 2 : 1
            return needed > count ? count : 0
        }
        return 0
    }
}
