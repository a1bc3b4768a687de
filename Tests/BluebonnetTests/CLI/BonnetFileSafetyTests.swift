import BluebonnetTestServer
import BonnetKit
import Foundation
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// `-o PATH` writes only what PATH is: a regular file is replaced by rename keeping its mode, a FIFO or a device is
/// written through, a symbolic link's file is written and the link kept, and nothing else is created; an interrupted
/// download leaves what arrived where `--continue` finds it and nothing hidden (issue 43, items 1, 2 and 6).
extension BonnetCommandTests {
    /// Every name in `directory`, hidden ones included.
    private func names(in directory: URL) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
    }

    private func fileType(_ path: String) -> mode_t {
        var status = stat()
        guard lstat(path, &status) == 0 else { return 0 }
        return status.st_mode & S_IFMT
    }

    private func mode(_ path: String) -> mode_t {
        var status = stat()
        guard stat(path, &status) == 0 else { return 0 }
        return status.st_mode & 0o7777
    }

    /// 1: the body was renamed over the FIFO, so its reader got nothing and the FIFO was gone.
    func testOutputToAFIFOIsWrittenThroughToItsReader() async throws {
        let directory = try TemporaryDirectory()
        let fifo = directory.url.appendingPathComponent("pipe").path
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let expected = SeededBytes.bytes(seed: 60, offset: 0, count: 200_000)
        let reader = Task.detached { FileHandle(forReadingAtPath: fifo)?.readDataToEndOfFile() }
        let run = try await bonnet(["-o", fifo, url("/bytes/200000?seed=60")])
        XCTAssertEqual(run.status, 0, run.errors)
        let read = await reader.value
        XCTAssertEqual(read, expected)
        XCTAssertEqual(fileType(fifo), S_IFIFO, "the FIFO is still a FIFO")
        XCTAssertEqual(names(in: directory.url), ["pipe"])
    }

    /// 1: as root, `-o /dev/null` would have replaced the system's `/dev/null` with a regular file.
    func testOutputToADeviceIsWrittenThroughAndTheDeviceKept() async throws {
        let run = try await bonnet(["-o", "/dev/null", url("/bytes/5000?seed=61")])
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertEqual(fileType("/dev/null"), S_IFCHR)
        let resume = try await bonnet(["-c", "-o", "/dev/null", url("/bytes/10?seed=61")])
        XCTAssertEqual(resume.status, 1, resume.errors)
        XCTAssertTrue(resume.errors.contains("regular file"), resume.errors)
    }

    /// 1: a symbolic link was replaced by the body, its file left untouched; and a file's mode (755) became 644.
    func testASymbolicLinksFileIsReplacedKeepingTheLinkAndTheMode() async throws {
        let directory = try TemporaryDirectory()
        let real = directory.url.appendingPathComponent("real.sh").path
        let link = directory.url.appendingPathComponent("link.sh").path
        XCTAssertTrue(FileManager.default.createFile(atPath: real, contents: Data("old\n".utf8)))
        XCTAssertEqual(chmod(real, 0o751), 0)
        XCTAssertEqual(symlink("real.sh", link), 0)
        let run = try await bonnet(["-o", link, url("/bytes/3000?seed=62")])
        XCTAssertEqual(run.status, 0, run.errors)
        XCTAssertEqual(fileType(link), S_IFLNK, "the link is still a link")
        XCTAssertEqual(FileManager.default.contents(atPath: real), SeededBytes.bytes(seed: 62, offset: 0, count: 3000))
        XCTAssertEqual(mode(real), 0o751)
        XCTAssertEqual(names(in: directory.url), ["link.sh", "real.sh"])
    }

    /// 1: `-o a/b/c` created the missing folders; a folder, a dangling link and a socket are refused before sending.
    func testMissingFoldersFoldersAndDanglingLinksAreRefusedAndNothingIsCreated() async throws {
        let directory = try TemporaryDirectory()
        let nested = directory.url.appendingPathComponent("a/b/c").path
        let missing = try await bonnet(["-o", nested, url("/bytes/10")])
        XCTAssertEqual(missing.status, 1, missing.errors)
        XCTAssertTrue(missing.errors.contains("does not exist"), missing.errors)
        XCTAssertEqual(names(in: directory.url), [])

        let folder = try await bonnet(["-o", directory.url.path, url("/bytes/10")])
        XCTAssertEqual(folder.status, 1, folder.errors)
        XCTAssertTrue(folder.errors.contains("is a folder"), folder.errors)

        let dangling = directory.url.appendingPathComponent("dangling").path
        XCTAssertEqual(symlink("nowhere", dangling), 0)
        let run = try await bonnet(["-o", dangling, url("/bytes/10")])
        XCTAssertEqual(run.status, 1, run.errors)
        XCTAssertTrue(run.errors.contains("symbolic link"), run.errors)
        XCTAssertEqual(names(in: directory.url), ["dangling"])
        XCTAssertFalse(server.arrivals.targets.contains { $0.hasPrefix("/bytes/10") }, "refused before sending")
    }

    /// 6: a 400-character name from the server failed the download ("File name too long; nothing saved").
    func testALongServerFileNameIsShortenedKeepingItsExtension() async throws {
        let directory = try TemporaryDirectory()
        let long = String(repeating: "a", count: 400) + ".bin"
        for _ in 0..<2 {
            let run = try await bonnet(
                ["-d", url("/download/100?seed=63&filename=\(long)")], in: directory.url, outputIsTerminal: true)
            XCTAssertEqual(run.status, 0, run.errors)
        }
        let saved = names(in: directory.url)
        XCTAssertEqual(saved.count, 2, "\(saved)")
        for name in saved { XCTAssertLessThanOrEqual(name.utf8.count, 255, name) }
        XCTAssertTrue(saved.contains { $0.hasSuffix(".bin") }, "\(saved)")
        XCTAssertTrue(saved.contains { $0.hasSuffix(".bin-1") }, "\(saved)")
    }

    /// 2: Ctrl-C left only a hidden part file, which `--continue` did not find. Now a new file holds what arrived,
    /// and nothing hidden is left.
    func testAnInterruptedDownloadKeepsWhatArrivedWhereContinueFindsIt() async throws {
        let faults = try await FaultServer.start()
        let directory = try TemporaryDirectory()
        let file = directory.url.appendingPathComponent("d.bin")
        // 400 of 1,000 bytes, then the server says nothing more.
        let run = try await bonnet(
            ["-o", file.path, faults.url("/stall-mid-body").absoluteString],
            interruptingWith: SIGINT,
            once: { self.names(in: directory.url).contains("d.bin") && self.size(file) == 400 })
        await faults.stop()
        XCTAssertEqual(run.status, 130, run.errors)
        XCTAssertTrue(run.errors.contains("interrupted"), run.errors)
        XCTAssertTrue(run.errors.contains("--continue"), run.errors)
        XCTAssertEqual(FileManager.default.contents(atPath: file.path), Data(repeating: UInt8(ascii: "x"), count: 400))
        XCTAssertEqual(names(in: directory.url), ["d.bin"])
    }

    /// 2: an interruption while replacing a file keeps the user's file as it was, and leaves nothing beside it.
    func testAnInterruptedReplacementLeavesTheFileAsItWasAndNothingBesideIt() async throws {
        let faults = try await FaultServer.start()
        let directory = try TemporaryDirectory()
        let file = directory.url.appendingPathComponent("report.txt")
        let precious = Data("the user's own report\n".utf8)
        XCTAssertTrue(FileManager.default.createFile(atPath: file.path, contents: precious))
        let run = try await bonnet(
            ["-o", file.path, faults.url("/stall-mid-body").absoluteString],
            interruptingWith: SIGTERM,
            once: {
                self.names(in: directory.url).contains {
                    $0.hasSuffix(".part") && self.size(directory.url.appendingPathComponent($0)) == 400
                }
            })
        await faults.stop()
        XCTAssertEqual(run.status, 143, run.errors)
        XCTAssertTrue(run.errors.contains("left as it was"), run.errors)
        XCTAssertEqual(FileManager.default.contents(atPath: file.path), precious)
        XCTAssertEqual(names(in: directory.url), ["report.txt"])
    }

    /// 7: `bonnet GET localhost:PORT/get` sent the request to a host named `GET`.
    func testAMethodWordBeforeAHostAndPortIsTheMethod() async throws {
        let port = server.port
        let get = try await bonnet(["--print=hb", "GET", "127.0.0.1:\(port)/get"])
        XCTAssertEqual(get.status, 0, get.errors)
        XCTAssertTrue(get.output.contains("\"url\""), get.output)
        let post = try await bonnet(["--print=H", "post", "127.0.0.1:\(port)/post", "a=1"])
        XCTAssertEqual(post.status, 0, post.errors)
        XCTAssertTrue(post.output.hasPrefix("POST /post HTTP/1.1"), post.output)
        // A first word that is a host is still the URL.
        let host = try await bonnet(["--print=H", "localhost:\(port)/get", "a==1"])
        XCTAssertEqual(host.status, 0, host.errors)
        XCTAssertTrue(host.output.hasPrefix("GET /get?a=1 HTTP/1.1"), host.output)
    }

    private func size(_ file: URL) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: file.path)[.size]) as? NSNumber)?.intValue ?? -1
    }

    /// Runs `bonnet ARGUMENTS` in-process and interrupts it with `signal` once `condition` holds (checked between
    /// short waits: a barrier on what the command has written, never a fixed time), failing after `timeout` seconds.
    func bonnet(
        _ arguments: [String], interruptingWith signal: Int32, once condition: () -> Bool,
        timeout: TimeInterval = 30
    ) async throws -> Run {
        let console = Console.captured(
            environment: ProcessInfo.processInfo.environment,
            directory: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
        let command = Task { await BonnetCommandLine.run(arguments: arguments, console: console) }
        let deadline = Date().addingTimeInterval(timeout)
        while !condition(), Date() < deadline { try await Task.sleep(for: .milliseconds(5)) }
        XCTAssertTrue(condition(), "bonnet \(arguments.joined(separator: " ")) never got there")
        console.interruptions.interrupt(with: signal)
        let status = await command.value
        return Run(status: status, data: console.output.bytes, output: console.output.text, errors: console.errors.text)
    }
}
