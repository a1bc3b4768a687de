import Foundation

/// Samples this process's resident memory on a thread of its own while a test runs, so a test can bound how much a
/// request grew it: a measurement, not a hope.
final class ResidentMemorySampler: @unchecked Sendable {
    // Guarded by `lock`; the sampling thread and the test read and write them.
    private let lock = NSLock()
    private var peak: Int64 = 0
    private var running = true
    private let baseline: Int64
    private let finished = DispatchSemaphore(value: 0)

    /// Starts sampling every `interval` seconds.
    init(interval: TimeInterval = 0.005) {
        baseline = Self.residentBytes()
        peak = baseline
        let thread = Thread { [self] in
            while lock.withLock({ running }) {
                let now = Self.residentBytes()
                lock.withLock { peak = max(peak, now) }
                Thread.sleep(forTimeInterval: interval)
            }
            finished.signal()
        }
        thread.start()
    }

    /// Stops sampling and returns how far above the starting resident size the process went, in bytes.
    func stop() -> Int64 {
        lock.withLock { running = false }
        finished.wait()
        return lock.withLock { max(peak, Self.residentBytes()) } - baseline
    }

    /// Extra resident memory a sanitizer keeps that the library does not: AddressSanitizer holds freed blocks in a
    /// quarantine (256 MiB by default) instead of returning them. `scripts/sanitize.sh` names the sanitizer in
    /// `BLUEBONNET_SANITIZER`; bounds in tests add this.
    static let sanitizerAllowance: Int64 = {
        ProcessInfo.processInfo.environment["BLUEBONNET_SANITIZER"] == "address" ? 256 << 20 : 0
    }()

    /// The resident set size from `/proc/self/statm` (pages × page size).
    static func residentBytes() -> Int64 {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int64(fields[1]) else { return 0 }
        return pages * Int64(sysconf(Int32(_SC_PAGESIZE)))
    }
}
