import Foundation

/// A one-line progress bar on standard error, redrawn in place; drawn only when standard error is a terminal, so
/// piped and captured output stays clean.
final class ProgressBar: @unchecked Sendable {
    // @unchecked: the mutable drawing state is only touched under `lock`.
    private let label: String
    private let lock = NSLock()
    private var lastDrawn = -1
    private var drawn = false
    private var started: Date?

    /// A bar for `label`, or `nil` when standard error is not a terminal.
    init?(label: String) {
        guard isatty(STDERR_FILENO) != 0 else { return nil }
        self.label = label
    }

    /// Redraws the bar for `completed` of `total` bytes (`total` < 0: unknown), at most once per percent.
    func update(completed: Int64, total: Int64) {
        lock.lock(); defer { lock.unlock() }
        let percent = total > 0 ? Int(min(100, completed * 100 / total)) : -1
        guard percent != lastDrawn || total <= 0 else { return }
        lastDrawn = percent
        drawn = true
        let width = 30
        let filled = percent < 0 ? 0 : percent * width / 100
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let amount = total > 0 ? "\(Self.size(completed)) / \(Self.size(total))" : Self.size(completed)
        let shown = percent < 0 ? "" : String(format: "%3d%%", percent)
        let start = started ?? Date()
        started = start
        let elapsed = Date().timeIntervalSince(start)
        var rate = ""
        if elapsed > 0.2, completed > 0 {
            let speed = Double(completed) / elapsed
            rate = "  \(Self.size(Int64(speed)))/s"
            if total > completed { rate += "  ETA " + Self.clock((Double(total - completed) / speed).rounded(.up)) }
        }
        FileHandle.standardError.write("\r\(label) \(bar) \(shown) \(amount)\(rate)\u{1B}[K")
    }

    /// Ends the bar's line.
    func finish() {
        lock.lock(); defer { lock.unlock() }
        guard drawn else { return }
        FileHandle.standardError.write("\n")
    }

    /// `m:ss`, or `h:mm:ss` past an hour.
    static func clock(_ seconds: Double) -> String {
        let total = Int(min(seconds, 359_999))
        let (hours, minutes, rest) = (total / 3600, total / 60 % 60, total % 60)
        return hours > 0
            ? String(format: "%d:%02d:%02d", hours, minutes, rest) : String(format: "%d:%02d", minutes, rest)
    }

    static func size(_ bytes: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(bytes)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(bytes) B" : String(format: "%.1f %@", value, units[unit])
    }
}
