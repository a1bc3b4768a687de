import Bluebonnet
@testable import BonnetKit
import Foundation
import XCTest

/// httpie's behaviours and flags the differential suite found missing in bonnet (issue 43): each test failed before
/// its fix.
extension BonnetCommandTests {
    /// A home folder of its own, with `files` in it (paths relative to it).
    private func home(_ files: [String: String]) throws -> TemporaryDirectory {
        let home = try TemporaryDirectory()
        for (path, text) in files {
            let file = home.url.appendingPathComponent(path)
            try FileManager.default.createDirectory(
                at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: file)
        }
        return home
    }

    func testMetaPrintsTheMetadataOnly() async throws {
        for flag in ["-m", "--meta"] {
            let run = try await bonnet(["--no-color", flag, url("/get")])
            XCTAssertEqual(run.status, 0, run.errors)
            XCTAssertTrue(run.output.contains("Timeline"), run.output)
            XCTAssertFalse(run.output.contains("\"args\""), run.output)
            XCTAssertFalse(run.output.contains("HTTP/1.1 200"), run.output)
        }
    }

    /// `.netrc` and `config.json` are read back as untrusted: a FIFO is not opened (it would block the command), and a
    /// file larger than such a file can be gives no credentials (`.netrc`) or a clear error (`config.json`).
    func testSettingsFilesThatAreFIFOsOrHugeAreNotRead() async throws {
        let home = try home([:])
        let fifo = home.url.appendingPathComponent("netrc-fifo")
        XCTAssertEqual(mkfifo(fifo.path, 0o600), 0)
        let target = url("/hidden-basic-auth/user/passwd")
        let throughFIFO = try await bonnet(
            ["--check-status", target], environment: ["HOME": home.url.path, "NETRC": fifo.path])
        XCTAssertEqual(throughFIFO.status, 4, throughFIFO.errors + throughFIFO.output)
        let huge = try self.home([
            "n": "default login user password passwd\n" + String(repeating: "# padding\n", count: 110_000)
        ])
        let tooLarge = try await bonnet(
            ["--check-status", target],
            environment: ["HOME": huge.url.path, "NETRC": huge.url.appendingPathComponent("n").path])
        XCTAssertEqual(tooLarge.status, 4, "a netrc over 1 MiB gives no credentials: \(tooLarge.errors)")
        let config = try self.home([
            ".config/httpie/config.json": #"{"default_options": []}"# + String(repeating: " ", count: 1 << 20)
        ])
        let environment = ["HOME": config.url.path, "HTTPIE_CONFIG_DIR": "", "XDG_CONFIG_HOME": ""]
        let refused = try await bonnet(["--offline", url("/get")], environment: environment)
        XCTAssertNotEqual(refused.status, 0)
        XCTAssertTrue(refused.errors.contains("larger than such a file can be"), refused.errors)
    }

    func testNetrcGivesTheHostsCredentialsUnlessIgnored() async throws {
        let host = try XCTUnwrap(URL(string: url("/"))?.host)
        let home = try home([
            ".netrc": "# the test's\nmachine example.org login x password y\nmachine \(host)\n  login user\n"
                + "  password passwd\n"
        ])
        let target = url("/hidden-basic-auth/user/passwd")
        let run = try await bonnet(["--check-status", "-b", target], environment: ["HOME": home.url.path])
        XCTAssertEqual(run.status, 0, run.errors + run.output)
        XCTAssertTrue(run.output.contains("\"authenticated\""), run.output)
        let ignored = try await bonnet(
            ["--check-status", "--ignore-netrc", target], environment: ["HOME": home.url.path])
        XCTAssertEqual(ignored.status, 4, ignored.errors + ignored.output)
        // --auth wins, and $NETRC names another file.
        let given = try await bonnet(
            ["--check-status", "-a", "user:wrong", target], environment: ["HOME": home.url.path])
        XCTAssertEqual(given.status, 4, given.errors + given.output)
        let other = try self.home(["n": "default login user password passwd\n"])
        let named = try await bonnet(
            ["--check-status", target],
            environment: ["HOME": other.url.path, "NETRC": other.url.appendingPathComponent("n").path])
        XCTAssertEqual(named.status, 0, named.errors + named.output)
    }

    func testNetrcIsReadAsItsFormatSays() async throws {
        let home = try home([
            ".netrc": """
            machine a.example login "with space" password p\\"q
            # a comment
            macdef init
            cd /
            quit

            machine b.example account acct password pw
            default login anyone password guest
            """,
            "bad/.netrc": "machine a.example shoe size\n",
        ])
        func authorization(_ host: String, home: URL) async throws -> String? {
            let shown = try await offline(["http://\(host)/"], environment: ["HOME": home.path])
            return field("Authorization", in: shown.head)
        }
        let basic = { (user: String, password: String) in
            "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        }
        let a = try await authorization("a.example", home: home.url)
        XCTAssertEqual(a, basic("with space", "p\"q"))
        let b = try await authorization("b.example", home: home.url)
        XCTAssertEqual(b, basic("acct", "pw"))
        let c = try await authorization("c.example", home: home.url)
        XCTAssertEqual(c, basic("anyone", "guest"))
        let bad = try await authorization("a.example", home: home.url.appendingPathComponent("bad"))
        XCTAssertNil(bad, "a file that does not parse gives nothing")
    }

    func testDownloadWithStandardOutputPipedWritesTheBodyThere() async throws {
        let directory = try TemporaryDirectory()
        for arguments in [["-d"], ["-d", "-o", "-"], ["-o", "-"]] {
            let run = try await bonnet(arguments + [url("/bytes/3000?seed=7")], in: directory.url)
            XCTAssertEqual(run.status, 0, run.errors)
            XCTAssertEqual(run.data.count, 3000, "\(arguments): \(run.errors)")
            XCTAssertTrue(run.errors.contains("HTTP/1.1 200"), run.errors)
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.url.path), [], "\(arguments)")
        }
        let resume = try await bonnet(["-c", "-o", "-", url("/bytes/10")], in: directory.url)
        XCTAssertEqual(resume.status, 1)
        XCTAssertTrue(resume.errors.contains("standard output is not one"), resume.errors)
        // On a terminal, a file, as before.
        let saved = try await bonnet(["-d", url("/bytes/10?seed=7")], in: directory.url, outputIsTerminal: true)
        XCTAssertEqual(saved.status, 0, saved.errors)
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: directory.url.path).count, 1)
    }

    func testSSLAndCiphersAreTakenOnlyWhenHonoured() async throws {
        let negotiate = try await bonnet(["--ssl=ssl2.3", "--check-status", url("/get")])
        XCTAssertEqual(negotiate.status, 0, negotiate.errors)
        let pinned = try await bonnet(["--ssl=tls1.2", url("/get")])
        XCTAssertEqual(pinned.status, 1)
        XCTAssertTrue(pinned.errors.contains("cannot be held to one"), pinned.errors)
        let unknown = try await bonnet(["--ssl=tls9", url("/get")])
        XCTAssertEqual(unknown.status, 1)
        XCTAssertTrue(unknown.errors.contains("choose from ssl2.3, tls1, tls1.1, tls1.2"), unknown.errors)
        let ciphers = try await bonnet(["--ciphers=ECDHE-RSA-AES128-GCM-SHA256", url("/get")])
        XCTAssertEqual(ciphers.status, 1)
        XCTAssertTrue(ciphers.errors.contains("cipher suites"), ciphers.errors)
    }

    func testTracebackPrintsTheErrorInFull() async throws {
        let plain = try await bonnet(["http://127.0.0.1:1/"])
        XCTAssertEqual(plain.status, 1)
        XCTAssertFalse(plain.errors.contains("Traceback"), plain.errors)
        let traced = try await bonnet(["--traceback", "http://127.0.0.1:1/"])
        XCTAssertEqual(traced.status, 1)
        XCTAssertTrue(traced.errors.contains("Traceback"), traced.errors)
        XCTAssertTrue(traced.errors.contains("sessionTaskFailed"), traced.errors)
        XCTAssertTrue(traced.errors.contains("bonnet: error: could not connect"), traced.errors)
        let fine = try await bonnet(["--traceback", "--check-status", url("/get")])
        XCTAssertEqual(fine.status, 0, fine.errors)
    }

    /// Issue 43: an invalid URL was quoted with its password in the error, three times more under `--traceback`.
    func testErrorsAndTracebacksHideTheSecretsTyped() async throws {
        for flags in [[], ["--traceback"], ["--debug"]] {
            let run = try await bonnet(flags + ["http://user:secretpw@[::1", "Authorization:Bearer tok-123456"])
            XCTAssertEqual(run.status, 1, run.errors)
            XCTAssertFalse(run.errors.contains("secretpw"), run.errors)
            XCTAssertFalse(run.errors.contains("tok-123456"), run.errors)
            XCTAssertTrue(run.errors.contains("user:(hidden)@"), run.errors)
            XCTAssertEqual(run.errors.contains("Traceback"), !flags.isEmpty, run.errors)
        }
    }

    func testSecretRedactionHidesEachSecretTheCommandWasGiven() {
        let redaction = SecretRedaction(
            words: ["GET", "http://u%40x:p%2Fw1@h/", "Cookie:a=cookie1; b=cookie2", "proxy-authorization:Basic pa55"],
            auth: "me:authpw", proxies: ["http:http://pu:proxypw@p:1"], certKeyPass: "keypass",
            environment: ["HTTPS_PROXY": "http://eu:envpw@e:2", "http_proxy": "http://x:ab@e:3"])
        let basic = Data("me:authpw".utf8).base64EncodedString()
        let text = [
            "p%2Fw1 p/w1 cookie1 cookie2 pa55 authpw \(basic) proxypw keypass envpw",
            #"["Authorization": "Digest secret-digest", "Accept": "*/*"]"#,
            "  - key: \"Cookie\"\n    - value: \"unknown-cookie\"",
            "Proxy-Authorization: Basic unknown-token",
            "ftp://someone:elsewhere@host/ and http://x:ab@e:3/",
        ].joined(separator: "\n")
        let hidden = redaction.apply(to: text)
        for secret in [
            "p%2Fw1", "p/w1", "cookie1", "cookie2", "pa55", "authpw", basic, "proxypw", "keypass", "envpw",
            "secret-digest", "unknown-cookie", "unknown-token", "elsewhere", "x:ab",
        ] {
            XCTAssertFalse(hidden.contains(secret), "\(secret) in \(hidden)")
        }
        XCTAssertTrue(hidden.contains(#""Accept": "*/*""#), hidden)
        XCTAssertTrue(hidden.contains("ftp://someone:(hidden)@host/"), hidden)
        XCTAssertTrue(hidden.contains("http://x:(hidden)@e:3/"), hidden)
        XCTAssertEqual(SecretRedaction(secrets: ["ab", "abc"]).apply(to: "ab abc abcd"), "ab (hidden) (hidden)d")
    }

    func testDebugPrintsWhatABugReportNeeds() async throws {
        let run = try await bonnet(["--debug", "--offline", url("/post"), "a=1", "Authorization:secret"])
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertTrue(run.errors.contains("bonnet \(bluebonnetVersion)"), run.errors)
        XCTAssertTrue(run.errors.contains(">>> POST \(url("/post"))"), run.errors)
        XCTAssertFalse(run.errors.contains("secret"), run.errors)
        // A password in the URL is not in the report either (it is sent as Basic, which is hidden too).
        let withPassword = url("/get").replacingOccurrences(of: "://", with: "://user:hunter2@")
        let credentials = try await bonnet(["--debug", "--offline", withPassword])
        XCTAssertEqual(credentials.status, 0, credentials.errors)
        XCTAssertFalse(credentials.errors.contains("hunter2"), credentials.errors)
        XCTAssertTrue(credentials.errors.contains("user:(hidden)@"), credentials.errors)
        let failed = try await bonnet(["--debug", "http://127.0.0.1:1/"])
        XCTAssertTrue(failed.errors.contains("Traceback"), failed.errors)
    }

    func testManualIsTheFullHelp() async throws {
        let manual = try await bonnet(["--manual"])
        let help = try await bonnet(["--help"])
        XCTAssertEqual(manual.status, 0, manual.errors)
        XCTAssertEqual(manual.output, help.output)
        let request = try await bonnet(["request", "--manual"])
        XCTAssertTrue(request.output.contains("--traceback"), request.output)
    }

    func testConfigurationDefaultOptionsGoFirst() async throws {
        let home = try home([".config/httpie/config.json": #"{"default_options": ["--form"]}"#])
        let environment = ["HOME": home.url.path, "HTTPIE_CONFIG_DIR": "", "XDG_CONFIG_HOME": ""]
        let form = try await offline([url("/post"), "a=1"], environment: environment)
        XCTAssertEqual(form.run.status, 0, form.run.errors)
        XCTAssertEqual(form.body, "a=1")
        let json = try await offline(["--json", url("/post"), "a=1"], environment: environment)
        XCTAssertEqual(json.body, #"{"a":"1"}"#)
        let named = try self.home(["config.json": #"{"default_options": ["--json"]}"#])
        let fromVariable = try await offline(
            ["--form", url("/post"), "a=1"],
            environment: environment.merging(["HTTPIE_CONFIG_DIR": named.url.path]) { $1 })
        XCTAssertEqual(fromVariable.body, "a=1")
        let broken = try self.home(["config.json": "{\n  \"default_options\": [--form]\n}"])
        let bad = try await bonnet(
            ["--offline", url("/post")], environment: environment.merging(["HTTPIE_CONFIG_DIR": broken.url.path]) { $1 }
        )
        XCTAssertEqual(bad.status, 1)
        XCTAssertTrue(bad.errors.contains("config.json is not valid JSON (line 2, column 24)"), bad.errors)
        let wrongType = try self.home(["config.json": #"{"default_options": "--form"}"#])
        let notAList = try await bonnet(
            ["--offline", url("/post")],
            environment: environment.merging(["HTTPIE_CONFIG_DIR": wrongType.url.path]) { $1 })
        XCTAssertEqual(notAList.status, 1)
        XCTAssertTrue(notAList.errors.contains("is not a list of words"), notAList.errors)
    }

    func testEveryStyleNameOfHttpieIsTaken() async throws {
        for name in ["dracula", "pie-light", "friendly_grayscale", "github-dark", "zenburn", "rainbow_dash"] {
            let run = try await bonnet(["--style", name, "--check-status", url("/get")])
            XCTAssertEqual(run.status, 0, "\(name): \(run.errors)")
        }
        let unknown = try await bonnet(["--style", "Monokai", url("/get")])
        XCTAssertEqual(unknown.status, 1)
    }

    func testAMissingClientCertificateFileIsReportedAsAMissingFile() async throws {
        let directory = try TemporaryDirectory()
        let missing = directory.url.appendingPathComponent("client.pem").path
        for arguments in [
            ["--cert", missing, "https://127.0.0.1:1/"], ["ws", "--cert", missing, "wss://127.0.0.1:1/"],
        ] {
            let run = try await bonnet(arguments)
            XCTAssertEqual(run.status, 1, "\(arguments)")
            XCTAssertEqual(
                run.errors.components(separatedBy: "\n").first,
                "bonnet: error: --cert: cannot read \(missing): there is no such file", "\(arguments)")
            XCTAssertFalse(run.errors.contains("closed channel"), run.errors)
        }
        let folder = try await bonnet(["--cert", directory.url.path, "https://127.0.0.1:1/"])
        XCTAssertTrue(folder.errors.contains("it is a folder, not a file"), folder.errors)
    }

    func testAUsageErrorPointsToHelpRatherThanPrintingTheUsage() async throws {
        let run = try await bonnet(["--print=x", url("/get")])
        XCTAssertEqual(run.status, 1)
        let lines = run.errors.components(separatedBy: "\n")
        XCTAssertEqual(lines.first, "bonnet: error: --print takes letters of HBhbm, e.g. --print=Hh", run.errors)
        XCTAssertEqual(lines.count, 3, "two lines: \(run.errors)")
        XCTAssertTrue(lines.dropFirst().first?.hasPrefix("bonnet: run 'bonnet") == true, run.errors)
        XCTAssertTrue(run.errors.contains("--help' for the options"), run.errors)
        XCTAssertFalse(run.errors.lowercased().contains("usage:"), run.errors)
        let ws = try await bonnet(["ws", "--nope", "ws://127.0.0.1:1/"])
        XCTAssertEqual(ws.status, 1)
        XCTAssertFalse(ws.errors.lowercased().contains("usage:"), ws.errors)
        XCTAssertTrue(ws.errors.contains("'bonnet ws --help'"), ws.errors)
    }
}
