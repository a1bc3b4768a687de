import BonnetKit
import Foundation
import XCTest

/// The console `bonnet`'s commands run against: lines and bytes in, bytes out, a reader that goes away.
final class ConsoleTests: XCTestCase {
    func testLinesAreReadApartWhateverTheirEndsAndALastLineWithoutOne() {
        let input = ConsoleInput.bytes(Data("one\r\ntwo\n\nthrée".utf8))
        var lines: [String] = []
        while let line = input.readLine() { lines.append(line) }
        XCTAssertEqual(lines, ["one", "two", "", "thrée"])
        XCTAssertNil(input.readLine(), "the end stays the end")
        XCTAssertNil(ConsoleInput.terminal.readLine(), "nothing is read from a terminal")
        XCTAssertNil(ConsoleInput.terminal.readAll())
        XCTAssertEqual(ConsoleInput.bytes(Data("x".utf8)).readAll(), Data("x".utf8))
    }

    func testLinesFromADescriptorArriveAsTheyAreWritten() throws {
        let pipe = Pipe()
        let input = ConsoleInput.descriptor(pipe.fileHandleForReading.fileDescriptor)
        pipe.fileHandleForWriting.write(Data("first\nsec".utf8))
        XCTAssertEqual(input.readLine(), "first", "a whole line is handed over before the input ends")
        pipe.fileHandleForWriting.write(Data("ond\n".utf8))
        XCTAssertEqual(input.readLine(), "second", "a line split across two writes is one line")
        try pipe.fileHandleForWriting.close()
        XCTAssertNil(input.readLine())
    }

    func testABodyIsNeverReadFromATerminalButLinesAre() throws {
        let pipe = Pipe()
        let typed = ConsoleInput.descriptor(pipe.fileHandleForReading.fileDescriptor, isTerminal: true)
        XCTAssertTrue(typed.isTerminal)
        XCTAssertNil(typed.readAll(), "a terminal is no request body")
        pipe.fileHandleForWriting.write(Data("typed\n".utf8))
        XCTAssertEqual(typed.readLine(), "typed", "`bonnet ws` at a terminal sends what is typed")
        try pipe.fileHandleForWriting.close()
    }

    func testAStreamInMemoryKeepsWhatFitsThenFailsAsAClosedPipe() throws {
        let stream = ConsoleStream(capacity: 5)
        try stream.write("abc")
        XCTAssertThrowsError(try stream.write(line: "def")) { error in
            XCTAssertEqual(error as? CommandExit, .readerWentAway)
        }
        XCTAssertEqual(stream.text, "abcde", "what the reader took before it went away")
        XCTAssertEqual(CommandExit.readerWentAway.status, 141)
    }

    func testAClosedPipeIsAReaderThatWentAwayAndOtherFailuresSaySo() throws {
        // As `bonnet` does (and NIO, once loaded): a write to a closed pipe fails with EPIPE rather than killing.
        signal(SIGPIPE, SIG_IGN)
        let pipe = Pipe()
        try pipe.fileHandleForReading.close()
        let stream = ConsoleStream(descriptor: pipe.fileHandleForWriting.fileDescriptor)
        XCTAssertThrowsError(try stream.write("gone")) { error in
            XCTAssertEqual(error as? CommandExit, .readerWentAway)
        }
        XCTAssertThrowsError(try ConsoleStream(descriptor: -1).write("nowhere")) { error in
            let exit = error as? CommandExit
            XCTAssertEqual(exit?.status, 1)
            XCTAssertTrue(exit?.message?.hasPrefix("cannot write the output") == true, "\(String(describing: exit))")
        }
    }

    func testRelativeFilesAreTheConsolesFolders() {
        let console = Console.captured(
            environment: ["HOME": "/home/someone"], directory: URL(fileURLWithPath: "/srv/w"))
        XCTAssertEqual(console.file("a/../b.json").path, "/srv/w/b.json")
        XCTAssertEqual(console.file("/etc/x").path, "/etc/x")
        XCTAssertEqual(console.homeDirectory.path, "/home/someone")
    }
}
