import Foundation
import Synchronization

/// A one-line progress bar on standard error, redrawn in place; drawn only when standard error is a terminal, so
/// piped and captured output stays clean.
final class ProgressBar: Sendable {
    private let label: String
    private let stream: ConsoleStream
    private let state = Mutex((lastDrawn: -1, drawn: false, started: Date?.none))

    /// A bar for `label` on `console`'s standard error, or `nil` when that is not a terminal.
    init?(label: String, console: Console) {
        guard console.errorsIsTerminal else { return nil }
        self.label = label
        stream = console.errors
    }

    /// Redraws the bar for `completed` of `total` bytes (`total` < 0: unknown), at most once per percent.
    func update(completed: Int64, total: Int64) {
        state.withLock { state in draw(completed: completed, total: total, state: &state) }
    }

    private func draw(
        completed: Int64, total: Int64, state: inout (lastDrawn: Int, drawn: Bool, started: Date?)
    ) {
        let percent = total > 0 ? Int(min(100, completed * 100 / total)) : -1
        guard percent != state.lastDrawn || total <= 0 else { return }
        state.lastDrawn = percent
        state.drawn = true
        let width = 30
        let filled = percent < 0 ? 0 : percent * width / 100
        let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
        let amount = total > 0 ? "\(Self.size(completed)) / \(Self.size(total))" : Self.size(completed)
        let shown = percent < 0 ? "" : String(format: "%3d%%", percent)
        let start = state.started ?? Date()
        state.started = start
        let elapsed = Date().timeIntervalSince(start)
        var rate = ""
        if elapsed > 0.2, completed > 0 {
            let speed = Double(completed) / elapsed
            rate = "  \(Self.size(Int64(speed)))/s"
            if total > completed { rate += "  ETA " + Self.clock((Double(total - completed) / speed).rounded(.up)) }
        }
        try? stream.write("\r\(label) \(bar) \(shown) \(amount)\(rate)\u{1B}[K")
    }

    /// Ends the bar's line.
    func finish() {
        state.withLock { state in
            guard state.drawn else { return }
            try? stream.write("\n")
        }
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
