import Foundation
import XCTest

/// Every committed fuzz seed and past crash input, replayed through the fuzz targets in the ordinary test run.
///
/// `FuzzTarget.swift` is the fuzz package's own file (a symlink), so the properties checked here are exactly the
/// ones libFuzzer checks; a violated property is a `precondition`, which ends this process as it ends the fuzzer's.
/// The sanitizer-instrumented fuzzing itself (`scripts/fuzz.sh`) needs a build of its own and runs outside CI.
final class FuzzCorpusReplayTests: XCTestCase {
    private static let corpusRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz/Corpus", isDirectory: true)

    func testEveryTargetHasSeedsAndEverySeedKeepsItsTargetsProperties() throws {
        var replayed = 0
        for target in FuzzTarget.allCases {
            let folder = Self.corpusRoot.appendingPathComponent(target.rawValue, isDirectory: true)
            let seeds = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
            XCTAssertFalse(seeds.isEmpty, "no committed seeds for \(target.rawValue)")
            for seed in seeds.sorted(by: { $0.path < $1.path }) {
                target.run(try Data(contentsOf: seed))
                replayed += 1
            }
        }
        XCTAssertGreaterThanOrEqual(replayed, FuzzTarget.allCases.count)
    }

    func testCorpusFoldersNameOnlyKnownTargets() throws {
        let folders = try FileManager.default.contentsOfDirectory(atPath: Self.corpusRoot.path)
        let unknown = folders.filter { FuzzTarget(rawValue: $0) == nil }
        XCTAssertEqual(unknown, [], "a corpus folder no fuzz target reads")
    }
}
