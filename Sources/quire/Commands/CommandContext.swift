/// What a running command gets besides its options: where to write, the store path, the
/// environment, and helpers for progress and Ctrl-C.
final class CommandContext {
    /// Buffered stdout for data. `main` flushes it after `run` returns.
    let output: OutputWriter
    let global: GlobalOptions
    let environment: [String: String]

    init(output: OutputWriter, global: GlobalOptions, environment: [String: String]) {
        self.output = output
        self.global = global
        self.environment = environment
    }

    /// The store directory to open.
    var storePath: String { global.storePath }

    /// A progress reporter on stderr: a bar on a terminal, periodic lines otherwise or with
    /// `TERM=dumb`, nothing when quiet; no escape sequences with `NO_COLOR`.
    func progress(_ label: String, total: Int? = nil, unit: String = "records", quiet: Bool) -> ProgressReporter {
        ProgressReporter(
            label: label, total: total, unit: unit, style: .automatic(quiet: quiet, environment: environment),
            usesEscapes: environment["NO_COLOR"].map(\.isEmpty) ?? true)
    }

    /// Whether the user pressed Ctrl-C; long commands poll this between chunks.
    var isInterrupted: Bool { InterruptFlag.isRaised }
}
