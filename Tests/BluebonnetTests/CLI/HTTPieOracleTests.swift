import Bluebonnet
import BonnetKit
import Foundation
import XCTest

/// httpie 3.2.4 as bonnet's oracle (issue 43): every command line of `HTTPieOracle.corpus` is run by httpie and by
/// bonnet, each against the case's own raw echo server, and what they send (after the normalisations the reviewed
/// list names), how they exit, the body they print and the files they leave must agree, but for the differences the
/// list names with a reason. An entry of the list no case needs any more fails too, so the list stays true.
///
/// httpie runs first, every case, in two Python processes that call httpie in-process command after command; then
/// bonnet runs every case in this process, a few at a time. A case's server answers both runs the same way, from
/// the first of its canned responses.
final class HTTPieOracleTests: XCTestCase {
    /// How many cases bonnet runs at once.
    private static let bonnetWidth = 4
    /// How many httpie processes share the corpus.
    private static let httpieBatches = 2

    func testEveryCommandLineSendsWhatHTTPieSends() async throws {
        let started = ContinuousClock.now
        let root = try TemporaryDirectory()
        let driver = try HTTPieDriver.located(in: root.url)
        let corpus = HTTPieOracle.corpus
        let servers = try await startServers(for: corpus)
        defer { Task { for server in servers { await server.stop() } } }
        let arguments = try corpus.indices.map { index in
            try corpus[index].steps.indices.map { try corpus[index].arguments(step: $0, port: servers[index].port) }
        }
        let httpieFolders = try prepare(corpus, side: "httpie", in: root.url, servers: servers)
        let bonnetFolders = try prepare(corpus, side: "bonnet", in: root.url, servers: servers)

        let (httpieRuns, httpie) = try await runHTTPie(
            corpus, arguments: arguments, folders: httpieFolders, servers: servers, driver: driver)
        guard httpie.version == "3.2.4" else {
            return XCTFail(
                "the oracle is httpie 3.2.4 (the list of differences is its), BLUEBONNET_HTTPIE is \(httpie.version)")
        }
        let httpieDone = ContinuousClock.now
        let bonnetRuns = try await runBonnet(
            corpus, arguments: arguments, folders: bonnetFolders, servers: servers, driver: driver)
        let bonnetDone = ContinuousClock.now

        let comparison = OracleComparison(
            normalisations: Set(HTTPieOracle.differences.compactMap(\.normalisation)),
            httpieDefaults: httpie.defaults,
            bonnetDefaults: OracleDefaults(
                userAgent: HTTPHeaders.default.value(for: "User-Agent"),
                acceptEncoding: HTTPHeaders.default.value(for: "Accept-Encoding")))
        let (unexpected, differing) = judge(
            corpus, arguments: arguments, httpie: httpieRuns, bonnet: bonnetRuns, comparison: comparison)
        for message in unexpected { XCTFail(message) }

        let slowest = { (runs: [OracleRun]) in
            runs.indices.sorted { runs[$0].seconds > runs[$1].seconds }.prefix(5).map {
                "\(corpus[$0].name) \(String(format: "%.2f", runs[$0].seconds)) s"
            }.joined(separator: ", ")
        }
        let counts = OracleDifference.Category.allCases.map { category in
            "\(category.rawValue) \(HTTPieOracle.differences.filter { $0.category == category }.count)"
        }
        print(
            "httpie oracle: \(corpus.count) cases, \(differing) with listed differences, \(unexpected.count) unexpected;"
                + " list: \(counts.joined(separator: ", ")); httpie \(httpieDone - started),"
                + " bonnet \(bonnetDone - httpieDone), all \(ContinuousClock.now - started);"
                + " slowest for httpie: \(slowest(httpieRuns)); for bonnet: \(slowest(bonnetRuns))")
    }

    /// Every case named in the list exists, and each (case, aspect) is listed once.
    func testTheListOfDifferencesNamesCasesOfTheCorpusOnce() {
        let names = HTTPieOracle.corpus.map(\.name)
        XCTAssertEqual(names.count, Set(names).count, "case names are unique")
        XCTAssertGreaterThanOrEqual(names.count, 300)
        var seen = Set<String>()
        for difference in HTTPieOracle.differences {
            XCTAssertFalse(difference.reason.isEmpty)
            if difference.category == .nature {
                XCTAssertNotNil(difference.normalisation, difference.reason)
                continue
            }
            XCTAssertFalse(difference.cases.isEmpty, difference.reason)
            for name in difference.cases {
                XCTAssertTrue(names.contains(name), "\(name) is not a case of the corpus (\(difference.reason))")
                for aspect in difference.aspects {
                    XCTAssertTrue(seen.insert("\(name) \(aspect)").inserted, "\(name) \(aspect) is listed twice")
                }
            }
        }
    }

    /// The normalisations take out only what they name: order, repeated keys and spelled numbers of JSON stay.
    func testTheNormalisationsTakeOutOnlyWhatTheyName() {
        XCTAssertEqual(
            JSONTokens.canonical(Data(#"{"a": "\u00fc", "b": [1.0, 2]}"#.utf8)),
            JSONTokens.canonical(Data(#"{"a":"ü","b":[1.0,2]}"#.utf8)))
        XCTAssertNotEqual(
            JSONTokens.canonical(Data(#"{"a": 1.0}"#.utf8)), JSONTokens.canonical(Data(#"{"a": 1}"#.utf8)))
        XCTAssertNotEqual(
            JSONTokens.canonical(Data(#"{"a":1,"b":2}"#.utf8)), JSONTokens.canonical(Data(#"{"b":2,"a":1}"#.utf8)))
        XCTAssertNil(JSONTokens.canonical(Data("hello world".utf8)))
        let chunked = Array(
            "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n".utf8)
        guard case let .request(request, length) = WireRequest.parse(chunked) else { return XCTFail("not parsed") }
        XCTAssertEqual(request.body, Data("abcde".utf8))
        XCTAssertEqual(length, chunked.count)
        if case .request = WireRequest.parse(Array("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nabc".utf8)) {
            XCTFail("a body shorter than its length is not whole")
        }
        let comparison = OracleComparison(
            normalisations: Set(OracleNormalisation.allCases), httpieDefaults: OracleDefaults(),
            bonnetDefaults: OracleDefaults())
        let form = { (boundary: String) in
            let body = Data("--\(boundary)\r\nx\r\n--\(boundary)--".utf8)
            return WireRequest(
                line: "POST / HTTP/1.1",
                headers: [
                    ("Content-Type", "multipart/form-data; boundary=\(boundary)"), ("Content-Length", "\(body.count)"),
                ],
                body: body)
        }
        let (left, right) = (
            comparison.normalise(form("abc")), comparison.normalise(form("bluebonnet.boundary.1234"))
        )
        XCTAssertEqual(left.body, right.body)
        XCTAssertEqual(left.headers.map(\.value), right.headers.map(\.value))
        XCTAssertEqual(try ShellWords.split(#"a 'b c' "d\"e" $'f\ng' h\ i"#), ["a", "b c", "d\"e", "f\ng", "h i"])
    }

    // MARK: - Running the sides

    private struct Folders: Sendable {
        let work: URL
        let home: URL
    }

    private func startServers(for corpus: [OracleCase]) async throws -> [RawEchoServer] {
        var servers: [RawEchoServer] = []
        for oracleCase in corpus {
            servers.append(try await RawEchoServer.start(responses: oracleCase.responses))
        }
        return servers
    }

    /// Each case's working and home folders for one side, with the fixtures it names and its own files in them.
    private func prepare(_ corpus: [OracleCase], side: String, in root: URL, servers: [RawEchoServer]) throws
        -> [Folders]
    {
        try corpus.indices.map { index in
            let base = root.appendingPathComponent(side).appendingPathComponent("\(index)")
            let folders = Folders(
                work: base.appendingPathComponent("work"), home: base.appendingPathComponent("home"))
            for folder in [folders.work, folders.home] {
                try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            }
            let port = servers[index].port
            // The fixtures a command line names (as an item, a download's name or an output), and the case's own.
            let named = HTTPieOracle.fixtures.filter { fixture in
                corpus[index].steps.contains { $0.line.contains(fixture.path) }
            }
            for (path, contents) in named + corpus[index].files {
                let file = folders.work.appendingPathComponent(path)
                try FileManager.default.createDirectory(
                    at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Self.resolved(contents, port: port).write(to: file)
            }
            for (path, contents) in corpus[index].homeFiles {
                let file = folders.home.appendingPathComponent(path)
                try FileManager.default.createDirectory(
                    at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
                try Self.resolved(contents, port: port).write(to: file)
            }
            return folders
        }
    }

    /// A file's contents with the placeholders filled in, when it is text.
    private static func resolved(_ contents: Data, port: Int) -> Data {
        guard let text = String(data: contents, encoding: .utf8), text.contains("{") else { return contents }
        return Data(OracleCase.resolve(text, port: port).utf8)
    }

    private func job(_ oracleCase: OracleCase, arguments: [[String]], folders: Folders, port: Int) -> HTTPieDriver.Job {
        HTTPieDriver.Job(
            name: oracleCase.name, directory: folders.work, home: folders.home, terminal: oracleCase.terminal,
            environment: oracleCase.environment.mapValues { OracleCase.resolve($0, port: port) },
            steps: oracleCase.steps.indices.map { (arguments[$0], oracleCase.steps[$0].stdin) })
    }

    /// httpie's runs of every case, in `httpieBatches` processes, and what the driver says of httpie.
    private func runHTTPie(
        _ corpus: [OracleCase], arguments: [[[String]]], folders: [Folders], servers: [RawEchoServer],
        driver: HTTPieDriver
    ) async throws -> ([OracleRun], HTTPieDriver.Results) {
        let jobs = corpus.indices.map { index in
            job(corpus[index], arguments: arguments[index], folders: folders[index], port: servers[index].port)
        }
        let batches = try await withThrowingTaskGroup(of: HTTPieDriver.Results.self) { group in
            for batch in 0..<Self.httpieBatches {
                let share = stride(from: batch, to: jobs.count, by: Self.httpieBatches).map { jobs[$0] }
                group.addTask { try await driver.run(share, batch: "httpie-\(batch)") }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        var runs = [OracleRun](repeating: OracleRun(), count: corpus.count)
        for index in corpus.indices {
            let name = corpus[index].name
            let steps = batches.lazy.compactMap { $0.steps[name] }.first ?? []
            runs[index].statuses = steps.map(\.status)
            runs[index].outputs = steps.map(\.output)
            runs[index].errors = steps.map(\.errors)
            runs[index].seconds = batches.lazy.compactMap { $0.seconds[name] }.first ?? 0
            // Every httpie process has exited: each request it sent was recorded before it was answered.
            runs[index].requests = servers[index].take()
            runs[index].files = try Self.files(in: folders[index].work)
        }
        guard let first = batches.first else { throw HTTPieDriver.DriverFailure(description: "no batch ran") }
        return (runs, first)
    }

    /// bonnet's runs of every case, `bonnetWidth` at a time in this process.
    private func runBonnet(
        _ corpus: [OracleCase], arguments: [[[String]]], folders: [Folders], servers: [RawEchoServer],
        driver: HTTPieDriver
    ) async throws -> [OracleRun] {
        var runs = [OracleRun](repeating: OracleRun(), count: corpus.count)
        try await withThrowingTaskGroup(of: (Int, OracleRun).self) { group in
            var next = 0
            func addNext() {
                guard next < corpus.count else { return }
                let index = next
                next += 1
                let (oracleCase, words, folder, port) = (
                    corpus[index], arguments[index], folders[index], servers[index].port
                )
                group.addTask {
                    let run = try await Self.runBonnetSide(
                        oracleCase, arguments: words, folders: folder, port: port, driver: driver)
                    return (index, run)
                }
            }
            for _ in 0..<Self.bonnetWidth { addNext() }
            while let (index, run) = try await group.next() {
                runs[index] = run
                addNext()
            }
        }
        for index in corpus.indices {
            runs[index].requests = servers[index].take()
            runs[index].files = try Self.files(in: folders[index].work)
        }
        return runs
    }

    /// Each case's findings against the list: the messages of those it does not name and of the entries no case
    /// needed, and how many cases differed at all.
    private func judge(
        _ corpus: [OracleCase], arguments: [[[String]]], httpie: [OracleRun], bonnet: [OracleRun],
        comparison: OracleComparison
    ) -> (unexpected: [String], differing: Int) {
        let differences = HTTPieOracle.differences
        var used = Set<String>()
        var unexpected: [String] = []
        var differing = 0
        for index in corpus.indices {
            let oracleCase = corpus[index]
            let findings = comparison.findings(
                for: oracleCase, arguments: arguments[index], httpie: httpie[index], bonnet: bonnet[index])
            if !findings.isEmpty { differing += 1 }
            var unlisted: [OracleFinding] = []
            for finding in findings {
                if let entry = differences.firstIndex(where: {
                    $0.cases.contains(oracleCase.name) && $0.aspects.contains(finding.aspect)
                }) {
                    used.insert("\(entry) \(oracleCase.name) \(finding.aspect)")
                } else {
                    unlisted.append(finding)
                }
            }
            guard !unlisted.isEmpty else { continue }
            let lines = oracleCase.steps.map { "bonnet " + $0.line }.joined(separator: "; then ")
            let errors = zip(httpie[index].errors, bonnet[index].errors).map {
                "httpie: \($0.0.trimmingCharacters(in: .whitespacesAndNewlines).suffix(300)) / bonnet: "
                    + "\($0.1.trimmingCharacters(in: .whitespacesAndNewlines).suffix(300))"
            }
            unexpected.append(
                "\(oracleCase.name): \(lines)\n" + unlisted.map { "    \($0)" }.joined(separator: "\n")
                    + "\n    stderr: " + errors.joined(separator: " | "))
        }
        for (entry, difference) in differences.enumerated() where difference.normalisation == nil {
            for name in difference.cases {
                for aspect in difference.aspects where !used.contains("\(entry) \(name) \(aspect)") {
                    unexpected.append(
                        "\(name): the list says it differs in \(aspect) (\(difference.category.rawValue): "
                            + "\(difference.reason)), but it no longer does: take it off the list")
                }
            }
        }
        return (unexpected, differing)
    }

    /// bonnet's run of a case: its steps in order, in-process, but a step httpie must run (a session file it makes
    /// or reads) through the driver.
    private static func runBonnetSide(
        _ oracleCase: OracleCase, arguments: [[String]], folders: Folders, port: Int, driver: HTTPieDriver
    ) async throws -> OracleRun {
        var run = OracleRun()
        let started = ContinuousClock.now
        let environment = oracleCase.environment.mapValues { OracleCase.resolve($0, port: port) }
        for (index, step) in oracleCase.steps.enumerated() {
            if step.tool == .httpie {
                let job = HTTPieDriver.Job(
                    name: oracleCase.name, directory: folders.work, home: folders.home, terminal: oracleCase.terminal,
                    environment: environment, steps: [(arguments[index], step.stdin)])
                let results = try await driver.run([job], batch: "bonnet-side-\(oracleCase.name)-\(index)")
                let result = results.steps[oracleCase.name]?.first ?? (-1, Data(), "no result")
                run.statuses.append(result.status)
                run.outputs.append(result.output)
                run.errors.append(result.errors)
                continue
            }
            let console = Console(
                output: ConsoleStream(capacity: nil), errors: ConsoleStream(capacity: nil),
                input: step.stdin.map(ConsoleInput.bytes) ?? .terminal, outputIsTerminal: oracleCase.terminal,
                errorsIsTerminal: false,
                environment: ["HOME": folders.home.path, "PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"]
                    .merging(environment) { $1 },
                directory: folders.work)
            let words = arguments[index]
            let status = try await withThrowingTaskGroup(of: Int32?.self) { group in
                group.addTask { await BonnetCommandLine.run(arguments: words, console: console) }
                group.addTask {
                    // A hang guard only.
                    try await Task.sleep(for: .seconds(120))
                    return nil
                }
                defer { group.cancelAll() }
                return try await group.next() ?? nil
            }
            run.statuses.append(status ?? -1)
            run.outputs.append(console.output.bytes)
            run.errors.append(status == nil ? "still ran after 120 s" : console.errors.text)
        }
        let elapsed = ContinuousClock.now - started
        run.seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return run
    }

    /// The regular files under `folder`, hidden ones included, by path relative to it.
    private static func files(in folder: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        let base = folder.standardizedFileURL.path
        guard
            let enumerator = FileManager.default.enumerator(
                at: folder, includingPropertiesForKeys: [.isRegularFileKey, .isSymbolicLinkKey])
        else { return files }
        for case let url as URL in enumerator {
            let values = try url.resourceValues(forKeys: [.isRegularFileKey, .isSymbolicLinkKey])
            let path = String(url.standardizedFileURL.path.dropFirst(base.count + 1))
            if values.isSymbolicLink == true {
                files[path] = Data("(symbolic link)".utf8)
            } else if values.isRegularFile == true {
                files[path] = try Data(contentsOf: url)
            }
        }
        return files
    }
}
