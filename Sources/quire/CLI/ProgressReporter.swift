#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif
import Synchronization

/// Progress of long work (fetch, load, copy, verify) on stderr.
///
/// On a terminal it redraws one line, at most ten times a second:
/// `loading  [#########...........]  45,000/100,000  38.2k/s  ETA 1s`.
/// When stderr is not a terminal it prints a plain line every two seconds instead (logs stay
/// readable) — also on a terminal that says `TERM=dumb` — and nothing at all in quiet mode.
/// With `NO_COLOR` set the bar is drawn without any escape sequence (the line is padded with
/// spaces instead of erased). Safe to call from any thread.
final class ProgressReporter: Sendable {
    /// How progress is shown.
    enum Style: Sendable, Equatable {
        /// One redrawn line with a bar (stderr is a terminal).
        case bar
        /// Periodic plain lines (stderr is a file or a pipe).
        case lines
        /// Nothing (`--quiet`).
        case quiet

        /// `bar` when stderr is a terminal that is not `TERM=dumb`, else `lines`; `quiet` wins.
        static func automatic(
            quiet: Bool, isTerminal: Bool = isatty(STDERR_FILENO) == 1, environment: [String: String] = [:]
        ) -> Style {
            if quiet { return .quiet }
            return isTerminal && environment["TERM"] != "dumb" ? .bar : .lines
        }
    }

    private struct State {
        var completed = 0
        var total: Int?
        var lastDraw: ContinuousClock.Instant?
        var finished = false
        /// The width of the bar line drawn last (to pad over it without escape sequences).
        var drawnWidth = 0
        /// The part of the work under way, shown after the label until the final line.
        var stage: String?
        /// When the stage began and the units completed then: its rate and ETA count from there.
        var stageStart: ContinuousClock.Instant?
        var stageBase = 0
        /// False for a stage that counts no units (the count shown is the work's so far).
        var stageCounts = true
    }

    let label: String
    let unit: String
    let style: Style
    /// False with `NO_COLOR`: the bar then uses no escape sequence.
    let usesEscapes: Bool
    private let start = ContinuousClock.now
    private let state: Mutex<State>
    private let write: @Sendable (String) -> Void

    /// - Parameters:
    ///   - label: what is being done (`"loading"`).
    ///   - total: how many units there will be, if known (enables the bar fill and the ETA).
    ///   - unit: the plural noun counted (`"records"`, `"pages"`).
    ///   - style: usually ``Style/automatic(quiet:)``.
    ///   - write: where text goes; stderr by default (tests pass their own).
    init(
        label: String, total: Int? = nil, unit: String = "records", style: Style, usesEscapes: Bool = true,
        write: @escaping @Sendable (String) -> Void = { Diagnostics.write($0) }
    ) {
        self.label = label
        self.unit = unit
        self.style = style
        self.usesEscapes = usesEscapes
        self.write = write
        self.state = Mutex(State(total: total))
    }

    /// How often the display may change.
    var interval: Duration {
        switch style {
        case .bar: .milliseconds(100)
        case .lines: .seconds(2)
        case .quiet: .seconds(Int64.max / 4)
        }
    }

    /// Begins a later part of the same work (`writing sorted runs` of a load whose input has
    /// ended): shown after the label, with `completed` of `total` units and a rate and ETA
    /// counted from now (none when `counts` is false: the stage advances no units); drawn at
    /// once. The final line is the whole work's.
    func beginStage(_ stage: String, completed: Int, total: Int?, counts: Bool = true) {
        guard style != .quiet else { return }
        let now = ContinuousClock.now
        let text: String? = state.withLock { state in
            guard state.stage != stage, !state.finished else { return nil }
            (state.stage, state.stageStart, state.stageBase, state.stageCounts) = (stage, now, completed, counts)
            (state.completed, state.total) = (completed, total)
            state.lastDraw = now
            return render(completed: completed, total: total, elapsed: now - start, final: false, &state)
        }
        if let text { write(text) }
    }

    /// Sets the total once it becomes known (e.g. after the first page reports `hits`).
    func setTotal(_ total: Int?) {
        state.withLock { $0.total = total }
    }

    /// Adds `count` completed units and redraws if enough time has passed.
    func advance(by count: Int = 1) {
        guard style != .quiet else { return }
        let now = ContinuousClock.now
        let text: String? = state.withLock { state in
            state.completed += count
            // Short work shows nothing: the first draw waits one interval.
            if now - (state.lastDraw ?? start) < interval { return nil }
            state.lastDraw = now
            return render(completed: state.completed, total: state.total, elapsed: now - start, final: false, &state)
        }
        if let text { write(text) }
    }

    /// Sets the completed units to `completed` (a running total reported by a loader) and redraws
    /// if enough time has passed.
    func setCompleted(_ completed: Int) {
        let delta = state.withLock { completed - $0.completed }
        advance(by: delta)
    }

    /// Draws the final figures (ending the bar's line). Later calls do nothing. `stopped`: the
    /// work failed or was interrupted, so the line does not say "done".
    func finish(stopped: Bool = false) {
        guard style != .quiet else { return }
        let now = ContinuousClock.now
        let text: String? = state.withLock { state in
            guard !state.finished else { return nil }
            state.finished = true
            // Nothing was drawn (short work): the command's own summary is enough.
            guard state.lastDraw != nil else { return nil }
            return render(
                completed: state.completed, total: state.total, elapsed: now - start, final: true, stopped: stopped, &state)
        }
        if let text { write(text) }
    }

    private func render(
        completed: Int, total: Int?, elapsed: Duration, final: Bool, stopped: Bool = false, _ state: inout State
    ) -> String {
        let seconds = Self.seconds(elapsed)
        var (label, pace) = (self.label, Pace(base: 0, seconds: seconds))
        if !final, let stage = state.stage, let stageStart = state.stageStart {
            // A stage's rate and ETA are its own: the reading before a merge went at another pace.
            label += ", " + stage
            pace = Pace(base: state.stageBase, seconds: Self.seconds(ContinuousClock.now - stageStart), shown: state.stageCounts)
        }
        switch style {
        case .bar:
            let line = Self.barLine(
                label: label, completed: completed, total: total, seconds: seconds, unit: unit, final: final, pace: pace)
            let width = line.count
            defer { state.drawnWidth = width }
            let erase = usesEscapes ? "\u{1B}[K" : String(repeating: " ", count: max(0, state.drawnWidth - width))
            return "\r" + line + erase + (final ? "\n" : "")
        case .lines:
            return Self.plainLine(
                label: label, completed: completed, total: total, seconds: seconds, unit: unit, final: final,
                stopped: stopped, pace: pace) + "\n"
        case .quiet:
            return ""
        }
    }

    /// The terminal line: label, bar (when the total is known), counts, rate and ETA.
    /// What a rate and an ETA count: the units past `base`, done in `seconds`; none at all
    /// when not `shown`.
    struct Pace {
        var base: Int
        var seconds: Double
        var shown = true
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
    }

    static func barLine(
        label: String, completed: Int, total: Int?, seconds: Double, unit: String, final: Bool, barWidth: Int = 24,
        pace: Pace? = nil
    ) -> String {
        let pace = pace ?? Pace(base: 0, seconds: seconds)
        var parts = [label]
        if let total, total > 0 {
            let fraction = min(1, Double(completed) / Double(total))
            let filled = Int((fraction * Double(barWidth)).rounded(.down))
            parts.append("[" + String(repeating: "#", count: filled) + String(repeating: ".", count: barWidth - filled) + "]")
            parts.append("\(grouped(completed))/\(grouped(total))")
        } else {
            parts.append("\(grouped(completed)) \(unit)")
        }
        // No rate before the stage has done anything ("0.0/s" while a merge begins says nothing).
        if pace.shown, completed > pace.base { parts.append(rate(completed: completed - pace.base, seconds: pace.seconds)) }
        if final {
            parts.append("in " + duration(seconds))
        } else if pace.shown, let eta = eta(completed: completed - pace.base, total: total.map { $0 - pace.base }, seconds: pace.seconds) {
            parts.append("ETA " + eta)
        }
        return parts.joined(separator: "  ")
    }

    /// The log line: `loading: 45,000/100,000 records, 38.2k/s, ETA 1s`.
    static func plainLine(
        label: String, completed: Int, total: Int?, seconds: Double, unit: String, final: Bool, stopped: Bool = false,
        pace: Pace? = nil
    ) -> String {
        let pace = pace ?? Pace(base: 0, seconds: seconds)
        var text = "quire: \(label): \(grouped(completed))"
        if let total { text += "/\(grouped(total))" }
        text += " \(unit)"
        if pace.shown, completed > pace.base { text += ", " + rate(completed: completed - pace.base, seconds: pace.seconds) }
        if final {
            text += (stopped ? ", stopped after " : ", done in ") + duration(seconds)
        } else if pace.shown, let eta = eta(completed: completed - pace.base, total: total.map { $0 - pace.base }, seconds: pace.seconds) {
            text += ", ETA " + eta
        }
        return text
    }

    /// `1234567` → `1,234,567`.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return value < 0 ? "-" + out : out
    }

    /// Units per second with a k/M suffix: `38.2k/s`.
    static func rate(completed: Int, seconds: Double) -> String {
        guard seconds > 0 else { return "-/s" }
        let perSecond = Double(completed) / seconds
        switch perSecond {
        case 1_000_000...: return oneDecimal(perSecond / 1_000_000) + "M/s"
        case 1_000...: return oneDecimal(perSecond / 1_000) + "k/s"
        default: return oneDecimal(perSecond) + "/s"
        }
    }

    /// The remaining time at the current rate, or nil when it cannot be known yet.
    static func eta(completed: Int, total: Int?, seconds: Double) -> String? {
        guard let total, completed > 0, seconds > 0, total >= completed else { return nil }
        let remaining = Double(total - completed) / (Double(completed) / seconds)
        return duration(remaining)
    }

    /// `75` → `1m15s`, `3725` → `1h02m`.
    static func duration(_ seconds: Double) -> String {
        let whole = Int(seconds.rounded())
        if seconds < 10 && whole < 10 { return oneDecimal(seconds) + "s" }
        if whole < 60 { return "\(whole)s" }
        if whole < 3600 { return "\(whole / 60)m" + twoDigits(whole % 60) + "s" }
        return "\(whole / 3600)h" + twoDigits(whole / 60 % 60) + "m"
    }

    private static func oneDecimal(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    private static func twoDigits(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
